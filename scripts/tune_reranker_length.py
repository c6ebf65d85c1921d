#!/usr/bin/env python3
"""Chooses a reranker folder's pair length for a pool drawn from one document
(reranker.json's max_length_one_document) on QASPER *train* questions the model was
not trained on, asked as a reader scoped to their paper.

    .venv/bin/python scripts/tune_reranker_length.py MODEL_DIR [--papers 400] [--write]

A question asked of one paper is the answer path's common case, and there the model's
time is most of the answer's on a CPU without int8 dot-product instructions. For each
question of the first --papers train papers (in id order) that the trainer left out
(tune_reranker_blend.untrained_qasper), the interactive profile's fused pool of 20 is
fetched once with reranking off; the model then scores it as the stage does for one
document (CrossEncoderReranker.one_document: the shared title left out, each chunk at
its first four paragraph openings, the folder's one-document blend) at each length of
LENGTHS up to the folder's max_length. Printed per length: evidence recall@5 and the
model's median time per question. The choice is the shortest length whose recall@5 is
at least that of the folder's own max_length: a shorter pair that ranks as well costs
less and loses nothing measured.

`--openings 4,6` scores the same pools at each number of paragraph openings as well
(each chunk's first N; the model folder's `paragraphs` caps N), which is how the
interactive profile's `paragraphs` is chosen; the length is chosen at the first.

The query adapter the server uses must not have seen these papers, or the fused order
is already good and the model's share looks smaller than it is (docs/answers.md,
"Train figures of retrieval"): fit one without them first
(`scripts/train_query_adapter.py --hold-out 400 --out DIR`) and put its adapter.npy in
place for the run. The output names the SHA-256 of the adapter in place. QASPER dev is
never read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers"), str(ROOT / "scripts")]

from scirag import db  # noqa: E402
from scirag.evaluation import qasper  # noqa: E402
from scirag_helpers import embedder  # noqa: E402
from scirag_helpers.rerank import CrossEncoderReranker, read_model_config, shared_first_line  # noqa: E402
from tune_reranker_blend import blended, pools, trainer_settings, untrained_qasper, write_config  # noqa: E402

LENGTHS = (24, 32, 40, 48, 64, 96, 128)
OPENINGS = 4  # the interactive profile's rerank option paragraphs
POOL = 20  # the profiles' pool for a narrow scope


def recall_at_5(model, asked: list, got: list, weight: float) -> tuple[float, float]:
    """Evidence recall@5 of the blended order and the model's median milliseconds."""
    hits, ms = [], []
    for it, rows in zip(asked, got):
        if not rows:
            continue
        texts = [r[2] for r in rows]
        view = model.one_document(shared_first_line(texts))
        t0 = time.perf_counter()
        scores = view.score(it.question, texts)
        ms.append((time.perf_counter() - t0) * 1000.0)
        top = blended(scores, [r[1] for r in rows], weight)[:5]
        keys = qasper.evidence_keys(it.answers)
        hits.append(any(k in qasper.normalize_answer(texts[i]) for k in keys for i in top))
    return round(sum(hits) / len(hits), 4), round(statistics.median(ms), 1)


def choose_length(figures: dict[int, float], full: int) -> int:
    """The shortest length whose recall is at least the full length's."""
    return min(n for n, r in figures.items() if r >= figures[full])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="choose a reranker folder's one-document pair length")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--papers", type=int, default=400, help="the first N QASPER train papers (by id)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--write", action="store_true", help="write the chosen length into MODEL_DIR/reranker.json")
    ap.add_argument(
        "--openings",
        default=str(OPENINGS),
        help=f"comma-separated paragraph openings to compare (default: the interactive profile's, {OPENINGS})",
    )
    args = ap.parse_args(argv)
    try:
        openings = [int(v) for v in args.openings.split(",")]
    except ValueError:
        raise SystemExit(f"--openings {args.openings!r}: give whole numbers separated by commas, e.g. 4,6") from None
    if not openings or min(openings) < 1:
        raise SystemExit(f"--openings {args.openings!r}: each must be at least 1")

    cfg = read_model_config(str(args.model_dir))
    if cfg.max_length is None or cfg.fused_weight_one_document is None:
        raise SystemExit(f"{args.model_dir}/reranker.json: needs max_length and fused_weight_one_document")
    papers, items = qasper.read_split(args.data / "qasper" / "train.tar.gz")
    papers, _ = qasper.select(papers, items, None, 0)
    first = set(sorted(papers)[: args.papers])
    asked = [it for it in untrained_qasper(args.data, 10**6, trainer_settings(args.model_dir)) if it.paper_id in first]
    dsn = db.benchmark_dsn(os.environ.get("SCIRAG_DSN"), "scirag_qasper_train")
    print(f"{len(asked)} questions of the first {args.papers} train papers: fetching their pools", file=sys.stderr)
    got = pools(dsn, [it.question for it in asked], POOL, [qasper.doc_id(it.paper_id) for it in asked], "interactive")

    by_openings = {}
    for o in openings:
        figures, times = {}, {}
        for n in [n for n in LENGTHS if n <= cfg.max_length]:
            model = CrossEncoderReranker(str(args.model_dir), batch_size=16, max_length=cfg.max_length).at_most(o)
            model.max_length_one_document = n
            model.tokenizer_one_document.enable_truncation(max_length=n, strategy="longest_first")
            figures[n], times[n] = recall_at_5(model, asked, got, cfg.fused_weight_one_document)
            print(f"openings {o}, length {n}: recall@5 {figures[n]}, model p50 {times[n]} ms", file=sys.stderr)
        by_openings[o] = (figures, times)
    figures, times = by_openings[openings[0]]
    adapter = embedder.ADAPTER_DIR / "adapter.npy"
    result = {
        "questions": len(asked),
        "openings": openings[0],
        "recall@5": {str(n): r for n, r in figures.items()},
        "model_p50_ms": {str(n): t for n, t in times.items()},
        "chosen": choose_length(figures, cfg.max_length),
        "adapter_sha256": hashlib.sha256(adapter.read_bytes()).hexdigest() if adapter.is_file() else None,
    }
    if len(openings) > 1:
        result["by_openings"] = {
            str(o): {
                "recall@5": {str(n): r for n, r in rec.items()},
                "model_p50_ms": {str(n): t for n, t in ms.items()},
            }
            for o, (rec, ms) in by_openings.items()
        }
    if args.write:
        result["reranker.json"] = write_config(args.model_dir, {"max_length_one_document": result["chosen"]})
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
