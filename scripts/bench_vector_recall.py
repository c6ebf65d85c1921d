#!/usr/bin/env python3
"""Recall of scirag.search_vector (HNSW, iterative scans) against exact search at n = 100.

For each BEIR query: the ids scirag.search_vector returns, against the exact top n
(the same query with index scans disabled, so PostgreSQL computes every distance).
Also under a restrictive scope: with scirag.exclude_documents hiding a share of
the corpus, search_vector must still return n rows.

    .venv/bin/python scripts/bench_vector_recall.py ../shared/data/scifact [--limit N] [--n 100]
Requires the corpus loaded by `scirag eval beir DIR` first.
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation.beir import beir_dsn, read_queries  # noqa: E402

EXACT = """SELECT id FROM scirag.chunks WHERE embedding IS NOT NULL
           ORDER BY embedding OPERATOR(public.<=>) %s::public.vector LIMIT %s"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus_dir", type=Path)
    ap.add_argument("--split", default="train")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    dsn = beir_dsn(args.dsn, args.corpus_dir)
    queries = list(read_queries(args.corpus_dir, args.split)[0].values())[: args.limit]
    with db.connect(dsn, role=db.READER_ROLE, autocommit=True) as conn:
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN SELECT * FROM scirag.chunks ORDER BY embedding OPERATOR(public.<=>) "
                "(SELECT embedding FROM scirag.chunks WHERE embedding IS NOT NULL LIMIT 1) LIMIT 100"
            )
        )
        print("plan uses the HNSW index:", "chunks_embedding_hnsw" in plan)
        # a restrictive scope: every third document excluded
        excluded = [r[0] for r in conn.execute("SELECT external_id FROM scirag.documents WHERE id % 3 = 0")]
        for label, exclude in (("full scope", ""), (f"{len(excluded)} documents excluded", ",".join(excluded))):
            conn.execute("SELECT set_config('scirag.exclude_documents', %s, false)", (exclude,))
            recalls, short = [], 0
            for _i, q in enumerate(queries):
                vec = conn.execute("SELECT scirag.embed_query(%s)::text", (q,)).fetchone()[0]
                got = [
                    r[0]
                    for r in conn.execute(
                        "SELECT chunk_id FROM scirag.search_vector(%s::public.vector, %s)", (vec, args.n)
                    )
                ]
                with conn.transaction():
                    conn.execute("SET LOCAL enable_indexscan = off")
                    exact = [r[0] for r in conn.execute(EXACT, (vec, args.n))]
                recalls.append(len(set(got) & set(exact)) / max(1, len(exact)))
                short += len(got) < min(args.n, len(exact))
            print(
                f"{label}: queries {len(queries)}, n {args.n}, mean recall {statistics.mean(recalls):.4f}, "
                f"min {min(recalls):.2f}, queries with fewer than n rows: {short}"
            )


if __name__ == "__main__":
    main()
