#!/usr/bin/env python3
"""Hub-seed benchmark for scirag.search_graph (prints timings; not a test).

Builds a synthetic graph in its own database (default scirag_bench_graph, created
and deployed if missing): one hub entity with --spokes neighbours (one edge each),
every spoke with --fanout further neighbours, the hub mentioned in every chunk.
Then times, as scirag_reader:

  * search_graph seeded at the hub (default bounds, then every bound at its hard cap),
  * search_graph seeded at an ordinary entity,
  * the naive unbounded two-hop recursive CTE over the same tables, for comparison.

  .venv/bin/python scripts/bench_graph_hub.py [--spokes 100000] [--fanout 2] [--chunks 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers")]

import psycopg  # noqa: E402

from scirag import db  # noqa: E402

NAIVE = """
WITH RECURSIVE walk(entity_id, hop) AS (
  SELECT %(seed)s::bigint, 0
  UNION ALL
  SELECT CASE WHEN r.source_entity_id = w.entity_id THEN r.target_entity_id ELSE r.source_entity_id END, w.hop + 1
  FROM walk w JOIN scirag.kg_relationships r ON w.entity_id IN (r.source_entity_id, r.target_entity_id)
  WHERE w.hop < 2)
SELECT count(*) FROM (SELECT DISTINCT m.chunk_id FROM walk w JOIN scirag.kg_mentions m ON m.entity_id = w.entity_id) x
"""


def build(conn: psycopg.Connection, spokes: int, fanout: int, chunks: int) -> None:
    have = conn.execute("SELECT count(*) FROM scirag.kg_entities WHERE name = 'hubbium'").fetchone()[0]
    if have:
        n = conn.execute("SELECT count(*) FROM scirag.kg_relationships").fetchone()[0]
        print(f"graph already built ({n} relationships); drop the database to rebuild with other sizes")
        return
    t0 = time.monotonic()
    dim = int(conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])
    doc = conn.execute(
        """INSERT INTO scirag.documents (external_id, title, license, source, content_hash)
           VALUES ('hub-bench', 'Hub benchmark', 'public', 'bench', md5('hub-bench')) RETURNING id"""
    ).fetchone()[0]
    conn.execute(
        f"""INSERT INTO scirag.chunks (document_id, ordinal, kind, level, content, token_count, license, source,
                                       embedding, embedding_version)
            SELECT %s, i, 'prose', 1, 'hubbium note ' || i, 3, 'public', 'bench',
                   (SELECT array_agg(CASE WHEN j = 1 + i %% {dim} THEN 1.0 ELSE 0.001 END)::float8[]::vector
                    FROM generate_series(1, {dim}) j), 'bench'
            FROM generate_series(1, %s) i""",
        (doc, chunks),
    )
    conn.execute(
        "CREATE TEMP TABLE bench_chunks AS SELECT row_number() OVER (ORDER BY id) AS k, id "
        "FROM scirag.chunks WHERE document_id = %s",
        (doc,),
    )
    hub = conn.execute(
        "INSERT INTO scirag.kg_entities (name, entity_type, extractor) "
        "VALUES ('hubbium', 'Product', 'bench') RETURNING id"
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO scirag.kg_entities (name, entity_type, extractor) "
        "SELECT 'spoke ' || i, 'Product', 'bench' FROM generate_series(1, %s) i",
        (spokes,),
    )
    conn.execute(
        "INSERT INTO scirag.kg_entities (name, entity_type, extractor) "
        "SELECT 'rim ' || i, 'Product', 'bench' FROM generate_series(1, %s) i",
        (spokes * fanout,),
    )
    conn.execute(
        "INSERT INTO scirag.kg_entities (name, entity_type, extractor) VALUES ('plainium', 'Product', 'bench')"
    )
    # the hub is mentioned in every chunk; each spoke and rim entity in one chunk
    conn.execute(
        "INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id) "
        "SELECT %s, id, 'hubbium', %s FROM bench_chunks",
        (hub, hub),
    )
    conn.execute(
        """INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id)
           SELECT e.id, c.id, e.name, e.id FROM scirag.kg_entities e
           JOIN bench_chunks c ON c.k = 1 + (e.id %% %s)
           WHERE e.extractor = 'bench' AND e.name <> 'hubbium'""",
        (chunks,),
    )
    conn.execute(
        """INSERT INTO scirag.kg_relationships (source_entity_id, target_entity_id, rel_type, phrase, confidence,
                                                extractor, chunk_id)
           SELECT %s, e.id, 'WITH', 'hubbium with ' || e.name, 1.0, 'bench', c.id
           FROM scirag.kg_entities e JOIN bench_chunks c ON c.k = 1 + (e.id %% %s)
           WHERE e.name LIKE 'spoke %%'""",
        (hub, chunks),
    )
    conn.execute(
        "CREATE TEMP TABLE bench_spokes AS SELECT id, row_number() OVER (ORDER BY id) AS k "
        "FROM scirag.kg_entities WHERE name LIKE 'spoke %%'"
    )
    conn.execute(
        "CREATE TEMP TABLE bench_rims AS SELECT id, row_number() OVER (ORDER BY id) AS k "
        "FROM scirag.kg_entities WHERE name LIKE 'rim %%'"
    )
    conn.execute(
        """INSERT INTO scirag.kg_relationships (source_entity_id, target_entity_id, rel_type, phrase, confidence,
                                                extractor, chunk_id)
           SELECT s.id, r.id, 'WITH', 'spoke with rim', 0.7, 'bench', c.id
           FROM bench_rims r
           JOIN bench_spokes s ON s.k = (r.k - 1) / %s + 1
           JOIN bench_chunks c ON c.k = 1 + (r.id %% %s)""",
        (fanout, chunks),
    )
    plain_chunk = conn.execute("SELECT id FROM bench_chunks WHERE k = 1").fetchone()[0]
    plain = conn.execute("SELECT id FROM scirag.kg_entities WHERE name = 'plainium'").fetchone()[0]
    conn.execute(
        "INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id) "
        "VALUES (%s, %s, 'plainium', %s)",
        (plain, plain_chunk, plain),
    )
    conn.execute(
        "INSERT INTO scirag.kg_relationships (source_entity_id, target_entity_id, rel_type, phrase, confidence, "
        "extractor, chunk_id) SELECT %s, id, 'WITH', 'plainium with spoke', 1.0, 'bench', %s "
        "FROM scirag.kg_entities WHERE name IN ('spoke 1', 'spoke 2', 'spoke 3')",
        (plain, plain_chunk),
    )
    conn.commit()
    conn.execute("ANALYZE scirag.kg_entities, scirag.kg_mentions, scirag.kg_relationships, scirag.chunks")
    conn.commit()
    n = conn.execute("SELECT count(*) FROM scirag.kg_relationships").fetchone()[0]
    print(f"built: {spokes} spokes x {fanout} = {n} relationships, {chunks} chunks, in {time.monotonic() - t0:.1f}s")


def timed(conn, sql, params, runs):
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = conn.execute(sql, params).fetchone()[0]
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=None, help="database to use (default: scirag_bench_graph on the project cluster)")
    ap.add_argument("--spokes", type=int, default=100_000)
    ap.add_argument("--fanout", type=int, default=2)
    ap.add_argument("--chunks", type=int, default=2_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--naive-timeout-s", type=int, default=120)
    args = ap.parse_args()

    dsn = args.dsn or db.default_dsn("scirag_bench_graph")
    db.init_db(dsn)
    with psycopg.connect(dsn) as conn:
        build(conn, args.spokes, args.fanout, args.chunks)
    with db.connect(dsn, role="scirag_reader", autocommit=True) as conn:
        conn.execute("SET scirag.licenses = 'public'")
        hub = conn.execute("SELECT id FROM scirag.kg_entities WHERE name = 'hubbium'").fetchone()[0]
        deg = conn.execute(
            "SELECT count(*) FROM scirag.kg_relationships WHERE %s IN (source_entity_id, target_entity_id)", (hub,)
        ).fetchone()[0]
        print(f"hub degree {deg}; every figure is the median of {args.runs} runs (min in brackets), as scirag_reader\n")
        rows = []
        q = "SELECT count(*) FROM scirag.search_graph(%s, 100)"
        rows.append(("search_graph, ordinary seed ('plainium')", *timed(conn, q, ("plainium",), args.runs)))
        rows.append(("search_graph, hub seed, default bounds", *timed(conn, q, ("hubbium",), args.runs)))
        for key in ("max_fanout", "max_entities", "mentions_per_entity", "max_seeds"):
            conn.execute(f"SET scirag.graph_{key} = '999999999'")  # clamped to the hard caps
        rows.append(("search_graph, hub seed, bounds at hard caps", *timed(conn, q, ("hubbium",), args.runs)))
        # n itself is bounded at 1000 (scirag.check_limit)
        rows.append(
            (
                "  same, n = 1000",
                *timed(conn, "SELECT count(*) FROM scirag.search_graph(%s, 1000)", ("hubbium",), args.runs),
            )
        )
        for key in ("max_fanout", "max_entities", "mentions_per_entity", "max_seeds"):
            conn.execute(f"RESET scirag.graph_{key}")
        conn.execute(f"SET statement_timeout = '{args.naive_timeout_s}s'")
        try:
            rows.append(
                (
                    "naive unbounded 2-hop recursive CTE, hub seed",
                    *timed(conn, NAIVE, {"seed": hub}, max(1, min(args.runs, 3))),
                )
            )
        except psycopg.errors.QueryCanceled:
            rows.append(
                (
                    "naive unbounded 2-hop recursive CTE, hub seed",
                    float(args.naive_timeout_s * 1000),
                    float(args.naive_timeout_s * 1000),
                    "timeout",
                )
            )
    width = max(len(r[0]) for r in rows)
    print(f"{'query'.ljust(width)}  {'median ms':>10}  {'min ms':>9}  rows")
    for name, med, mn, n in rows:
        print(f"{name.ljust(width)}  {med:10.1f}  {mn:9.1f}  {n}")


if __name__ == "__main__":
    main()
