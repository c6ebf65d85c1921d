#!/usr/bin/env python3
"""Ingestion against the model's own pace (issue 12: ingestion must keep the model's speed).

Loads the first N SciFact abstracts into a fresh database with the loader's real
Ingester, as the loader role, and times the embedding calls (the model) apart from
everything else (chunking and SQL: the insert trigger's postings and statistics, the
automatic flush of fresh postings into blocks, HNSW and full-text index upkeep). Prints
documents per second overall and of the model alone, side by side from the same run,
per window of documents, so that a write path that slows down as the corpus grows
shows up as a falling rate. The database (default scirag_bench_ingest) is dropped and
created again on every run.

    scripts/bench_ingest.py                  # 2,000 abstracts
    scripts/bench_ingest.py --docs 5183      # all of SciFact
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation.beir import corpus_entries  # noqa: E402
from scirag.ingest.pipeline import Ingester  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000, help="abstracts to load (SciFact has 5,183)")
    ap.add_argument("--window", type=int, default=500, help="documents per reported window")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    ap.add_argument("--db", default="scirag_bench_ingest", help="database to (re)create")
    ap.add_argument("--dsn", default=None, help="superuser DSN of the server (default: the project cluster)")
    args = ap.parse_args()
    dsn = db.with_dbname(args.dsn or db.default_dsn(), args.db)
    db.drop_db(dsn)
    db.init_db(dsn)
    rows = []  # per window: documents, wall seconds, seconds inside the model
    with db.connect(dsn, role=db.LOADER_ROLE) as conn:
        ingester = Ingester(conn)
        embed = ingester.embedder.embed
        in_model = [0.0]

        def timed_embed(texts):
            t = time.perf_counter()
            try:
                return embed(texts)
            finally:
                in_model[0] += time.perf_counter() - t

        ingester.embedder.embed = timed_embed
        ingester.embedder.embed(["warm up the model"])
        in_model[0] = 0.0
        run_id = conn.execute(
            "INSERT INTO scirag.ingest_runs (manifest, embedding_version) VALUES (%s, %s) RETURNING id",
            (f"bench_ingest:{args.docs}", ingester.embedder.version),
        ).fetchone()[0]
        conn.commit()
        done, start, model_start = 0, time.perf_counter(), 0.0
        for entry in itertools.islice(corpus_entries(Path(args.data)), args.docs):
            ingester.ingest_entry(entry, run_id)
            done += 1
            if done % args.window == 0:
                now = time.perf_counter()
                rows.append((done, now - start, in_model[0] - model_start))
                start, model_start = now, in_model[0]
                print(f"[bench_ingest] {done}/{args.docs} documents", file=sys.stderr, flush=True)
        if done % args.window:  # the last, shorter window
            rows.append((done, time.perf_counter() - start, in_model[0] - model_start))
        if not done:
            sys.exit(f"no documents in {args.data}/corpus.jsonl")
        blocks, fresh = conn.execute(
            "SELECT (SELECT count(*) FROM scirag.kw_blocks), (SELECT count(*) FROM scirag.kw_postings)"
        ).fetchone()
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\n{done} SciFact abstracts into {args.db}, loader role, one document per transaction; load {load}")
    print("| documents | documents/s | model alone, documents/s | time outside the model |")
    print("|---|---|---|---|")
    first = 0
    for last, wall, model in rows:
        n = last - first
        print(f"| {first + 1}-{last} | {n / wall:.1f} | {n / model:.1f} | {1 - model / wall:.0%} |")
        first = last
    wall = sum(r[1] for r in rows)
    model = sum(r[2] for r in rows)
    print(f"| all | {done / wall:.1f} | {done / model:.1f} | {1 - model / wall:.0%} |")
    print(f"keyword index at the end: {blocks:,} blocks, {fresh:,} fresh postings waiting for a flush")


if __name__ == "__main__":
    main()
