#!/usr/bin/env python3
"""Retrieval at scale (issue 12): builds a corpus of N chunks from SciFact and measures
the layers as a reader, the way a stock server runs them.

The corpus: SciFact's 5,183 abstracts (already embedded in the SciFact benchmark
database, which `scirag eval beir ../shared/data/scifact` loads) replicated until N
chunks. Replica 0 is the original; every other replica of an abstract is its
sentences resampled with replacement (same length, real text statistics, but not
the same text), and its embedding is the original's plus Gaussian noise (sigma
0.015 a dimension, cosine about 0.96 to the original), renormalised: perturbed
copies of real embeddings, not embeddings of the resampled text. The corpus is
built once per size into its own database (scirag_scale_<N/1000>k) and reused;
--rebuild builds it again. Bulk build: chunks are copied with the keyword-index
trigger disabled, then scirag.kw_rebuild() writes statistics and compacted blocks
in one pass and the HNSW index is built last.

Measured as scirag_reader (row-level security on), jit = on with PostgreSQL's
default thresholds (a stock server), query embedding passed in, SciFact train
queries, warm second pass: search_keyword (n 100), search_vector (n 100) and
scirag.retrieve (interactive, k 10) p50/p95; then C concurrent clients running
retrieve for S seconds (throughput, p50/p99, errors); build time and disk per chunk.

    scripts/bench_scale.sh                       # 100k chunks
    scripts/bench_scale.sh --chunks 1000000 --build-only --nice 15   # build 1M in the background
    scripts/bench_scale.sh --chunks 1000000 --measure-only           # then measure it as it is

A reused corpus is upgraded to the plan first (scirag db init); --measure-only skips that
(an upgrade whose data migrations rewrite every chunk costs as much as a rebuild at 1M).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

from scirag import db  # noqa: E402
from scirag.evaluation.beir import read_queries  # noqa: E402
from scirag.evaluation.metrics import percentile  # noqa: E402
from scirag_helpers import text  # noqa: E402

STOCK_JIT = {
    "jit": "on",
    "jit_above_cost": "100000",
    "jit_inline_above_cost": "500000",
    "jit_optimize_above_cost": "500000",
}
SIGMA = 0.015


def log(msg: str) -> None:
    print(f"[bench_scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def variant(content: str, ext: str, r: int) -> str:
    """Replica r of an abstract: its sentences drawn with replacement (r 0 = the original)."""
    if r == 0:
        return content
    sents = text.sentences(content) or [content]
    rng = random.Random(f"{ext}~{r}")
    return " ".join(rng.choice(sents) for _ in sents)


def perturb(vec: np.ndarray, ext: str, r: int) -> np.ndarray:
    if r == 0:
        return vec
    rng = np.random.default_rng(zlib.crc32(f"{ext}~{r}".encode()))
    v = vec + rng.normal(0.0, SIGMA, vec.shape)
    return v / np.linalg.norm(v)


def build(target: str, source: str, n_chunks: int, batch: int = 20000, nice: int = 0) -> dict:
    """Creates and fills the scale database; returns build timings (s). nice > 0 lowers the
    priority of the server backend doing the work (the client's own nice does not reach it)
    and keeps the index builds to that one backend (no parallel workers)."""
    t0 = time.monotonic()
    db.drop_db(target)
    db.init_db(target)
    with psycopg.connect(source) as src:
        rows = src.execute(
            "SELECT d.external_id, d.title, c.ordinal, c.content, c.embedding::text FROM scirag.chunks c "
            "JOIN scirag.documents d ON d.id = c.document_id WHERE c.kind <> 'section' AND c.embedding IS NOT NULL "
            "ORDER BY c.document_id, c.ordinal"
        ).fetchall()
    if not rows:
        raise SystemExit(
            f"no embedded chunks in the source database {source!r}: load SciFact first "
            "(scirag eval beir ../shared/data/scifact --split train)"
        )
    docs: dict[str, tuple[str, list]] = {}
    for ext, title, ordinal, content, emb in rows:
        docs.setdefault(ext, (title, []))[1].append((ordinal, content, np.array(json.loads(emb), dtype=np.float64)))
    base = [(ext, title, chunks) for ext, (title, chunks) in docs.items()]
    replicas = -(-n_chunks // len(rows))
    log(f"building {n_chunks} chunks: {len(rows)} SciFact chunks ({len(base)} abstracts) x {replicas} replicas")
    timings = {}
    with psycopg.connect(target, autocommit=True) as conn:
        if nice > 0:
            os.setpriority(os.PRIO_PROCESS, conn.info.backend_pid, nice)
            conn.execute("SET max_parallel_maintenance_workers = 0")
        # the HNSW graph of 1M 384-dim vectors takes about 2 GB: it must fit, or the build crawls
        conn.execute(f"SET maintenance_work_mem = '{max(1, -(-n_chunks * 4 // 1_000_000))}GB'")
        conn.execute("SET work_mem = '1GB'")  # kw_rebuild's per-partition sorts
        # Secondary indexes are built once at the end (faster than maintaining them row by row).
        idx = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'scirag' "
            "AND tablename = 'chunks' AND indexname IN ('chunks_embedding_hnsw', 'chunks_tsv_gin', "
            "'chunks_graph_pending')"
        ).fetchall()
        defs = dict(idx)
        hnsw_def = defs.pop("chunks_embedding_hnsw")
        for name in [*defs, "chunks_embedding_hnsw"]:
            conn.execute(f"DROP INDEX scirag.{name}")
        conn.execute("ALTER TABLE scirag.chunks DISABLE TRIGGER chunks_kw_index")
        conn.execute("CREATE TEMP TABLE stage (ext text, title text, ordinal int, content text, emb text)")
        t = time.monotonic()
        done = 0

        def flush(buf):
            with conn.cursor() as cur:
                with cur.copy("COPY stage (ext, title, ordinal, content, emb) FROM STDIN") as cp:
                    for rec in buf:
                        cp.write_row(rec)
            conn.execute(
                "INSERT INTO scirag.documents (external_id, title, license, source, content_hash, parser) "
                "SELECT DISTINCT ON (ext) ext, title, 'public', 'scale', md5(ext), 'text' FROM stage"
            )
            conn.execute(
                "INSERT INTO scirag.chunks (document_id, ordinal, kind, level, content, token_count, "
                "license, source, embedding, embedding_version) "
                "SELECT d.id, s.ordinal, 'prose', 1, s.content, array_length(regexp_split_to_array(s.content, '\\s+'), 1), "
                "'public', 'scale', s.emb::public.vector, 'scale-perturbed' "
                "FROM stage s JOIN scirag.documents d ON d.external_id = s.ext"
            )
            conn.execute("TRUNCATE stage")

        buf = []
        for r in range(replicas):
            for ext, title, chunks in base:
                if done >= n_chunks:
                    break
                e = ext if r == 0 else f"{ext}~{r}"
                for ordinal, content, vec in chunks:
                    v = perturb(vec, f"{ext}/{ordinal}", r)
                    buf.append(
                        (
                            e,
                            title,
                            ordinal,
                            variant(content, f"{ext}/{ordinal}", r),
                            "[" + ",".join(f"{x:.6f}" for x in v) + "]",
                        )
                    )
                    done += 1
                if len(buf) >= batch:
                    flush(buf)
                    buf = []
                    log(f"  {done}/{n_chunks} chunks copied ({time.monotonic() - t:.0f} s)")
        if buf:
            flush(buf)
        timings["copy_s"] = time.monotonic() - t
        log(f"  copy: {timings['copy_s']:.0f} s")
        conn.execute("ALTER TABLE scirag.chunks ENABLE TRIGGER chunks_kw_index")
        t = time.monotonic()
        for d in defs.values():
            conn.execute(d)
        timings["other_indexes_s"] = time.monotonic() - t
        log(f"  full-text and other indexes: {timings['other_indexes_s']:.0f} s")
        t = time.monotonic()
        postings = conn.execute("SELECT scirag.kw_rebuild()").fetchone()[0]
        timings["keyword_index_s"] = time.monotonic() - t
        log(f"  keyword index: {postings} postings in {timings['keyword_index_s']:.0f} s")
        t = time.monotonic()
        conn.execute(hnsw_def)
        timings["hnsw_s"] = time.monotonic() - t
        log(f"  HNSW index: {timings['hnsw_s']:.0f} s")
        t = time.monotonic()
        conn.execute("VACUUM ANALYZE")
        log(f"  VACUUM ANALYZE: {time.monotonic() - t:.0f} s")
    timings["total_s"] = time.monotonic() - t0
    return timings


def disk(conn) -> dict:
    q = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    n = q("SELECT count(*) FROM scirag.chunks")
    return {
        "chunks": n,
        "postings_bytes_per_chunk": q(
            "SELECT coalesce(pg_total_relation_size(to_regclass('scirag.kw_blocks')), 0) "
            "+ pg_total_relation_size('scirag.kw_postings')"
        )
        / n,
        "keyword_total_bytes_per_chunk": q(
            "SELECT coalesce(pg_total_relation_size(to_regclass('scirag.kw_blocks')), 0) + "
            "pg_total_relation_size('scirag.kw_postings') + "
            "pg_total_relation_size('scirag.kw_term_stats') + "
            "pg_total_relation_size('scirag.kw_class_stats')"
        )
        / n,
        "chunks_table_bytes_per_chunk": q("SELECT pg_total_relation_size('scirag.chunks')") / n,
        "hnsw_bytes_per_chunk": q("SELECT pg_relation_size('scirag.chunks_embedding_hnsw')") / n,
        "database_bytes_per_chunk": q("SELECT pg_database_size(current_database())") / n,
    }


def reader(dsn: str) -> psycopg.Connection:
    conn = db.connect(dsn, role=db.READER_ROLE, autocommit=True)
    for k, v in STOCK_JIT.items():
        conn.execute(f"SET {k} = '{v}'")
    return conn


LAYERS = {
    "keyword": ("SELECT count(*) FROM scirag.search_keyword(%s, 100)", lambda q, e: (q,)),
    "vector": ("SELECT count(*) FROM scirag.search_vector(%s::public.vector, 100)", lambda q, e: (e,)),
    "interactive": (
        "SELECT count(*) FROM scirag.retrieve(%s, 10, query_embedding => %s::public.vector)",
        lambda q, e: (q, e),
    ),
}


def measure(dsn: str, items: list[tuple[str, str]], deep: bool = False) -> dict:
    out = {}
    layers = dict(LAYERS)
    if deep:
        layers["deep"] = (
            "SELECT count(*) FROM scirag.retrieve(%s, 10, 'deep', query_embedding => %s::public.vector)",
            lambda q, e: (q, e),
        )
    with reader(dsn) as conn:
        for name, (sql, args) in layers.items():
            times = []
            for _rnd in range(2):  # the second, warm pass counts
                times = []
                for q, e in items:
                    s = time.perf_counter()
                    conn.execute(sql, args(q, e)).fetchone()
                    times.append((time.perf_counter() - s) * 1000)
            out[name] = {"p50": percentile(times, 50), "p95": percentile(times, 95)}
            log(f"  {name}: p50 {out[name]['p50']:.1f} ms, p95 {out[name]['p95']:.1f} ms")
    return out


def concurrent(dsn: str, items: list[tuple[str, str]], clients: int, seconds: float) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    sql, args = LAYERS["interactive"]

    def worker(i: int) -> None:
        rng = random.Random(i)
        try:
            conn = reader(dsn)
        except Exception as exc:  # counted
            with lock:
                errors.append(repr(exc))
            return
        with conn:
            while time.monotonic() < stop:
                q, e = rng.choice(items)
                s = time.perf_counter()
                try:
                    conn.execute(sql, args(q, e)).fetchone()
                    ms = (time.perf_counter() - s) * 1000
                    with lock:
                        lat.append(ms)
                except Exception as exc:  # counted
                    with lock:
                        errors.append(repr(exc)[:200])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    t = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.monotonic() - t
    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "queries": len(lat),
        "qps": len(lat) / wall,
        "p50": percentile(lat, 50),
        "p99": percentile(lat, 99),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--db", default=None, help="scale database name (default scirag_scale_<N/1000>k)")
    ap.add_argument("--source-db", default="scirag_beir_scifact", help="the loaded SciFact benchmark database")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rebuild", action="store_true", help="build the corpus again even if it exists")
    ap.add_argument(
        "--measure-only",
        action="store_true",
        help="measure the database --db as it is: no build, no schema upgrade (before/after comparisons)",
    )
    ap.add_argument("--build-only", action="store_true", help="build (or upgrade) the corpus, measure nothing")
    ap.add_argument("--deep", action="store_true", help="also measure scirag.retrieve with the deep profile")
    ap.add_argument(
        "--jit",
        choices=["on", "off"],
        default="on",
        help="the readers' jit setting (default on, with a stock server's thresholds)",
    )
    ap.add_argument(
        "--nice", type=int, default=0, help="build at this priority (renices the server backend too; 0 = as is)"
    )
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    STOCK_JIT["jit"] = args.jit
    base = args.dsn or db.default_dsn()
    target = db.with_dbname(base, args.db or f"scirag_scale_{args.chunks // 1000}k")
    source = db.with_dbname(base, args.source_db)

    timings = None
    with psycopg.connect(db.with_dbname(base, "postgres"), autocommit=True) as admin:
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (db.conninfo_to_dict(target)["dbname"],)
        ).fetchone()
    have = 0
    if exists:
        with psycopg.connect(target) as conn:
            have = conn.execute("SELECT count(*) FROM scirag.chunks").fetchone()[0]
    if args.measure_only:
        if not have:
            raise SystemExit(f"--measure-only: {target} has no chunks")
        log(f"measuring {target} as it is ({have} chunks)")
    elif args.rebuild or have != args.chunks:
        timings = build(target, source, args.chunks, nice=args.nice)
    else:
        db.init_db(target)  # deploys whatever the plan added since (an upgrade, not a rebuild)
        log(f"reusing {target} ({have} chunks); --rebuild to build again")

    if args.build_only:
        log(f"built: {json.dumps(timings)}")
        return
    queries, _ = read_queries(args.data, "train")
    texts = list(queries.values())[: args.queries]
    from scirag_helpers.embedder import Embedder, to_pgvector

    vecs = Embedder(threads=2).embed(texts)
    items = [(q, to_pgvector(v)) for q, v in zip(texts, vecs)]

    with psycopg.connect(target) as conn:
        sizes = disk(conn)
    log("per-layer latency (reader, RLS, jit on, warm)")
    load_before = os.getloadavg()[0]
    lat = measure(target, items, args.deep)
    conc = None
    if args.clients > 0:
        log(f"{args.clients} clients x {args.seconds:.0f} s, interactive retrieve")
        conc = concurrent(target, items, args.clients, args.seconds)

    load_after = os.getloadavg()[0]
    n = sizes["chunks"]
    print(
        f"\n### {n:,} chunks ({db.conninfo_to_dict(target)['dbname']}), {len(items)} SciFact train queries, "
        f"reader, RLS on, jit {args.jit} (stock thresholds), query embedding passed in; "
        f"load average {load_before:.1f} before, {load_after:.1f} after\n"
    )
    print("| measure | value |")
    print("|---|---|")
    for name in lat:
        print(f"| {name} p50 / p95 | {lat[name]['p50']:.1f} / {lat[name]['p95']:.1f} ms |")
    if conc:
        print(f"| {conc['clients']} clients, {conc['seconds']:.0f} s: throughput | {conc['qps']:.1f} queries/s |")
        print(f"| {conc['clients']} clients: p50 / p99 | {conc['p50']:.1f} / {conc['p99']:.1f} ms |")
        print(f"| {conc['clients']} clients: errors | {conc['errors']} |")
    if timings:
        print(
            f"| build (copy / full-text index / keyword index / HNSW / total) | {timings['copy_s']:.0f} / "
            f"{timings['other_indexes_s']:.0f} / {timings['keyword_index_s']:.0f} / {timings['hnsw_s']:.0f} / "
            f"{timings['total_s']:.0f} s |"
        )
    else:
        print("| build | reused (see --rebuild) |")
    print(
        f"| postings per chunk (kw_blocks + kw_postings, with indexes) | {sizes['postings_bytes_per_chunk'] / 1024:.2f} KB |"
    )
    print(f"| keyword index incl. statistics per chunk | {sizes['keyword_total_bytes_per_chunk'] / 1024:.2f} KB |")
    print(
        f"| chunks table (text, tsvector, embedding, indexes) per chunk | {sizes['chunks_table_bytes_per_chunk'] / 1024:.2f} KB |"
    )
    print(f"| database per chunk | {sizes['database_bytes_per_chunk'] / 1024:.2f} KB |")
    print(
        json.dumps(
            {"chunks": n, "latency_ms": lat, "concurrent": conc, "build_s": timings, "disk": sizes},
            default=lambda x: round(x, 3) if isinstance(x, float) else str(x),
        )
    )


if __name__ == "__main__":
    main()
