#!/usr/bin/env python3
"""Chooses the shipped reranker's blend with the fused order (reranker.json's
fused_weight) on the tuning split only: SciFact claims the model trained on
(scripts/reranker_views.py's qrels/train.tsv) and SciTab training claims.

    .venv/bin/python scripts/tune_reranker_blend.py MODEL_DIR --views /tmp/scirag-views [--claims 120] [--write]

For each claim: the deep profile's fused pool with reranking off (k = --pool, as a
reader), the model's scores over it (onnxruntime, as in scirag.rerank), then for each
weight w the order of (1 - w) * model + w * min-max fused score: SciFact nDCG@10 and
SciTab hit@5 (documents deduplicated as the benchmarks do). The chosen weight is the
best mean of the two; on a tie the larger one (closer to the fused order, which is
what the stage falls back to).

The blend for a pool from one document (fused_weight_one_document) is chosen apart, on
QASPER *train* questions the model was not trained on (the trainer's groups are
rebuilt with the seed, negatives and group count of its train_log.jsonl to leave its
questions out; --questions of them), each asked as a reader scoped to its paper:
evidence recall@5 of the deep profile's pool reranked at each weight (ties: the larger). Needs scirag_qasper_train (`scirag eval qasper
../shared/data/qasper --split train`).

Prints one JSON object; --write also puts the chosen weights into
MODEL_DIR/reranker.json (keeping its other keys), which makes a trainer's --out folder
a complete model folder. The held-out claims and QASPER dev are not read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers"), str(ROOT / "scripts")]

import reranker_data  # noqa: E402
from reranker_data import assemble, part  # noqa: E402
from scirag import db  # noqa: E402
from scirag.evaluation import qasper  # noqa: E402
from scirag.evaluation.beir import read_queries  # noqa: E402
from scirag.evaluation.metrics import dedupe, ndcg_at  # noqa: E402
from scirag_helpers.rerank import CrossEncoderReranker, shared_first_line  # noqa: E402

WEIGHTS = [round(0.1 * i, 1) for i in range(11)]
OFF = json.dumps({"rerank": {"reranker": "none"}})


def pools(dsn: str, queries: list[str], pool: int, documents: list[str] | None = None, profile: str = "deep"):
    """Per query: the profile's fused pool without reranking, as (external_id, score,
    content) rows, asked as a reader (scoped to documents[i] when given)."""
    out = []
    with db.connect(dsn, role=db.READER_ROLE, autocommit=True) as reader:
        for i, q in enumerate(queries):
            if documents is not None:
                reader.execute("SELECT set_config('scirag.documents', %s, false)", (documents[i],))
            rows = reader.execute(
                "SELECT external_id, score, content FROM scirag.retrieve(%s, %s, profile => %s, options => %s)",
                (q, pool, profile, OFF),
            ).fetchall()
            out.append(rows)
    return out


def trainer_settings(model_dir: Path) -> tuple[int, int, int]:
    """The seed, negatives and QASPER group count the model was trained with: the start
    event of the folder's train_log.jsonl (a trainer's --out folder), else the trainer's
    defaults (the committed folder, trained with them: its card says so)."""
    log = model_dir / "train_log.jsonl"
    start = {}
    if log.exists():
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
        start = next((e.get("args", {}) for e in events if e.get("event") == "start"), {})
    return (
        int(start.get("seed", reranker_data.SEED)),
        int(start.get("negatives", reranker_data.NEGATIVES)),
        int(start.get("qasper_groups", reranker_data.QASPER_GROUPS)),
    )


def untrained_qasper(data: Path, count: int, trained_with: tuple[int, int, int]) -> list:
    """QASPER train questions with text evidence that are not in the trainer's groups
    (rebuilt with the seed, negatives and group count it used), by question id."""
    groups = assemble(data, *trained_with)
    trained = {g[0] for g in groups if g[3] == "qasper"}
    _, items = qasper.read_split(data / "qasper" / "train.tar.gz")
    keep = [it for it in items if qasper.evidence_keys(it.answers) and it.question not in trained]
    return sorted(keep, key=lambda it: it.question_id)[:count]


def one_document_figures(model, items: list, dsn: str, pool: int) -> dict:
    """Evidence recall@5 of each question's scoped pool reranked at each weight."""
    per_w = {w: [] for w in WEIGHTS}
    got = pools(dsn, [it.question for it in items], pool, [qasper.doc_id(it.paper_id) for it in items])
    for it, rows in zip(items, got):
        if not rows:
            continue
        keys = qasper.evidence_keys(it.answers)
        text = [qasper.normalize_answer(r[2]) for r in rows]
        ms = model.one_document(shared_first_line([r[2] for r in rows])).score(it.question, [r[2] for r in rows])
        for w in WEIGHTS:
            top = blended(ms, [r[1] for r in rows], w)[:5]
            per_w[w].append(float(any(k in text[i] for k in keys for i in top)))
    figures = {str(w): round(sum(v) / len(v), 4) for w, v in per_w.items() if v}
    return {"qasper_one_document_recall@5": figures, "questions": len(items)}


def blended(model_scores, fused, w):
    lo, hi = min(fused), max(fused)
    base = [1.0 if hi == lo else (f - lo) / (hi - lo) for f in fused]
    final = [(1 - w) * m + w * b for m, b in zip(model_scores, base)]
    return sorted(range(len(final)), key=lambda i: (-final[i], i))


def choose(result: dict) -> float:
    """The weight with the best mean of the two tuning figures; ties go to the larger
    weight (the stage's own fallback is the fused order, w = 1)."""
    sf, st = result["scifact_tuning_ndcg@10"], result["scitab_tuning_hit@5"]
    common = [w for w in sf if w in st]
    if not common:
        raise ValueError("no weight was scored on both tuning sets")
    return max((round((sf[w] + st[w]) / 2, 4), float(w)) for w in common)[1]


def choose_one(figures: dict) -> float:
    """The weight with the best figure; ties go to the larger weight."""
    if not figures:
        raise ValueError("no weight was scored on the one-document tuning set")
    return max((v, float(w)) for w, v in figures.items())[1]


def write_config(model_dir: Path, values: dict) -> dict:
    """Sets ``values`` in the folder's reranker.json, keeping what else it says."""
    path = model_dir / "reranker.json"
    cfg = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(cfg).__name__}")
    cfg.update(values)
    path.write_text(json.dumps(cfg) + "\n", encoding="utf-8")
    return cfg


def write_blend(model_dir: Path, weight: float, one_document: float | None = None) -> dict:
    """Sets fused_weight (and fused_weight_one_document when given) in the folder's
    reranker.json, keeping what else it says."""
    values = {"fused_weight": weight}
    if one_document is not None:
        values["fused_weight_one_document"] = one_document
    return write_config(model_dir, values)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="tune the reranker's fused_weight on the tuning split")
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--views", type=Path, required=True, help="scripts/reranker_views.py output")
    ap.add_argument("--claims", type=int, default=120, help="claims per dataset")
    ap.add_argument("--pool", type=int, default=30)
    ap.add_argument("--questions", type=int, default=300, help="QASPER train questions (0: no one-document blend)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--write", action="store_true", help="write the chosen weights into MODEL_DIR/reranker.json")
    args = ap.parse_args(argv)
    # max_length: the folder's reranker.json cuts it to the length the model was trained at
    model = CrossEncoderReranker(str(args.model_dir), batch_size=16, max_length=512)
    base_dsn = os.environ.get("SCIRAG_DSN")
    result = {}

    queries, qrels = read_queries(args.views / "scifact", "train")
    items = [(qid, text) for qid, text in queries.items() if part("scifact", qid) == "train"][: args.claims]
    got = pools(db.benchmark_dsn(base_dsn, "scirag_beir_scifact"), [t for _, t in items], args.pool)
    per_w = {w: [] for w in WEIGHTS}
    for (qid, text), rows in zip(items, got):
        if not rows:
            continue
        ms = model.score(text, [r[2] for r in rows])
        for w in WEIGHTS:
            order = blended(ms, [r[1] for r in rows], w)
            per_w[w].append(ndcg_at(dedupe([rows[i][0] for i in order]), qrels[qid], 10))
    result["scifact_tuning_ndcg@10"] = {str(w): round(sum(v) / len(v), 4) for w, v in per_w.items() if v}

    claims = [json.loads(line) for line in open(args.views / "scitab" / "claims_train.jsonl", encoding="utf-8")]
    claims = claims[: args.claims]
    got = pools(db.benchmark_dsn(base_dsn, "scirag_scitab"), [c["claim"] for c in claims], args.pool)
    per_w = {w: [] for w in WEIGHTS}
    for c, rows in zip(claims, got):
        if not rows:
            continue
        ms = model.score(c["claim"], [r[2] for r in rows])
        for w in WEIGHTS:
            order = blended(ms, [r[1] for r in rows], w)
            per_w[w].append(float(c["table_id"] in dedupe([rows[i][0] for i in order])[:5]))
    result["scitab_tuning_hit@5"] = {str(w): round(sum(v) / len(v), 4) for w, v in per_w.items() if v}
    result["claims"] = args.claims
    result["chosen"] = choose(result)

    one = None
    if args.questions:
        dsn = db.benchmark_dsn(base_dsn, "scirag_qasper_train")
        result.update(
            one_document_figures(
                model, untrained_qasper(args.data, args.questions, trainer_settings(args.model_dir)), dsn, args.pool
            )
        )
        one = result["chosen_one_document"] = choose_one(result["qasper_one_document_recall@5"])
    if args.write:
        result["reranker.json"] = write_blend(args.model_dir, result["chosen"], one)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
