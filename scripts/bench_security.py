#!/usr/bin/env python3
"""Latency cost of the security checks (issue 13): p50/p95 of scirag.retrieve and of
scirag.answer as the reader role on the demo corpus, per configuration, and of
scirag.scope_is_empty(). Used for the checks of v1.1 and for the wall (policies/reader_wall:
the reader API runs as scirag_api, SECURITY DEFINER).

Give two databases holding the same corpus, one deployed without the change and one
with it (e.g. `sqitch revert --to schema/eval_answer_checks` on a copy): the calls
alternate between them question by question, so the load of a shared machine falls
on both alike. Each demo question (domain/questions.yaml) is asked --reps times per
configuration, after one warm-up pass per database (the embedder loads once per backend).

    .venv/bin/python scripts/bench_security.py --dsn before="host=... dbname=A" --dsn after="host=... dbname=B"

--ids (issue 26, timing of hidden against missing ids) measures instead, per database, the
median of document_outline and chunk_get as scirag_reader for an id that is hidden (a
restricted document of --chunks chunks, inserted for the run and rolled back) and for
an id that does not exist, the calls alternating:

    .venv/bin/python scripts/bench_security.py --ids --dsn now="host=... dbname=A"
"""

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

import yaml  # noqa: E402

from scirag import db  # noqa: E402
from scirag.evaluation.metrics import percentile  # noqa: E402

CONFIGS = [("interactive", {}), ("interactive", {"layers": ["keyword"]}), ("interactive", {"preset": "high-precision"})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", action="append", required=True, help="LABEL=DSN (repeatable)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ids", action="store_true", help="hidden against missing ids instead (issue 26)")
    ap.add_argument("--chunks", type=int, default=3000, help="--ids: chunks of the hidden document")
    args = ap.parse_args()
    if args.ids:
        for item in args.dsn:
            label, _, dsn = item.partition("=")
            bench_ids(label, dsn, args.chunks, max(args.reps, 200))
        return
    questions = [q["question"] for q in yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text())["questions"]]
    conns = {}
    for item in args.dsn:
        label, _, dsn = item.partition("=")
        conns[label] = db.connect(dsn, role=db.READER_ROLE, autocommit=True)
    for conn in conns.values():
        for q in questions:  # warm-up: embedder, plans, caches
            conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 10)", (q,)).fetchone()
    for profile, options in CONFIGS:
        ms = {label: [] for label in conns}
        for _ in range(args.reps):
            for q in questions:
                for label, conn in conns.items():
                    t0 = time.perf_counter()
                    conn.execute(
                        "SELECT count(*) FROM scirag.retrieve(%s, 10, %s, %s)", (q, profile, json.dumps(options))
                    ).fetchone()
                    ms[label].append((time.perf_counter() - t0) * 1000)
        for label, xs in ms.items():
            print(
                f"{label:8s} retrieve {profile} {json.dumps(options):34s} n={len(xs):3d} "
                f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
            )
    ms = {label: [] for label in conns}
    for _ in range(args.reps):
        for q in questions:
            for label, conn in conns.items():
                t0 = time.perf_counter()
                conn.execute("SELECT scirag.answer(%s, '{}')", (q,)).fetchone()
                ms[label].append((time.perf_counter() - t0) * 1000)
    for label, xs in ms.items():
        print(
            f"{label:8s} answer (extractive){'':33s} n={len(xs):3d} "
            f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
        )
    ms = {label: [] for label in conns}
    for _ in range(300):
        for label, conn in conns.items():
            t0 = time.perf_counter()
            conn.execute("SELECT scirag.scope_is_empty()").fetchone()
            ms[label].append((time.perf_counter() - t0) * 1000)
    for label, xs in ms.items():
        print(
            f"{label:8s} scope_is_empty(){'':36s} n={len(xs):3d} "
            f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
        )
    for conn in conns.values():
        conn.close()


HIDDEN_DOC_SQL = """
WITH d AS (INSERT INTO scirag.documents (external_id, title, license, source, content_hash, parser)
           VALUES ('bench-hidden-' || txid_current(), 'hidden', 'restricted', 'bench', md5(random()::text), 'text')
           RETURNING id)
INSERT INTO scirag.chunks (document_id, ordinal, kind, level, section_path, is_table, content, token_count,
                           license, source, retracted, embedding, embedding_version)
SELECT d.id, g, 'prose', 2, '1 Hidden', false, repeat('hidden restricted text ', 40), 120, 'restricted', 'bench', false,
       (SELECT array_fill(0.01::real, ARRAY[value::int])::vector FROM scirag.settings WHERE key = 'embedding_dim'),
       'bench'
FROM d, generate_series(1, %s) AS g
RETURNING document_id, id
"""


def bench_ids(label: str, dsn: str, chunks: int, reps: int) -> None:
    """Median ms of document_outline and chunk_get as scirag_reader: a hidden id against a
    missing one (inserted and rolled back in one transaction of a superuser session)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(HIDDEN_DOC_SQL, (chunks,)).fetchall()
        doc, chunk = rows[0][0], rows[len(rows) // 2][1]
        top = conn.execute("SELECT max(id) FROM scirag.chunks").fetchone()[0]
        missing_doc, missing_chunk = doc + 1_000_000, top + 1_000_000
        conn.execute("SET LOCAL ROLE scirag_reader")
        calls = [
            ("document_outline", "SELECT count(*) FROM scirag.document_outline(%s)", doc, missing_doc),
            ("chunk_get", "SELECT count(*) FROM scirag.chunk_get(%s)", chunk, missing_chunk),
        ]
        for name, sql, hidden, missing in calls:
            ms = {"hidden": [], "missing": []}
            for i in range(reps + 20):
                for kind, ident in (("hidden", hidden), ("missing", missing)):
                    t0 = time.perf_counter()
                    assert conn.execute(sql, (ident,)).fetchone()[0] == 0
                    if i >= 20:  # warm-up: plans, scope functions
                        ms[kind].append((time.perf_counter() - t0) * 1000)
            print(
                f"{label:8s} {name:17s} hidden ({chunks} chunks) p50={percentile(ms['hidden'], 50):6.3f} ms  "
                f"missing p50={percentile(ms['missing'], 50):6.3f} ms  n={reps}"
            )
        conn.rollback()


if __name__ == "__main__":
    main()
