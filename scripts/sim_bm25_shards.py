#!/usr/bin/env python3
"""BM25 over shards with local against global statistics (issue 27, docs/replicas.md §7).

Splits a SciFact-derived corpus into N shards, one database each on one cluster
(scirag_shardsim_0 .. N-1), each holding postings (lexeme, doc, tf, dl) made by
PostgreSQL's English configuration (to_tsvector), and ranks the SciFact train claims
with BM25 (k1 0.9, b 0.4, idf ln(1 + (N - df + 0.5) / (df + 0.5)), as scirag's keyword
layer) in two ways:

- local: every shard scores with its own N, avgdl and df; the coordinator merges the
  shards' top 10 by score (what a naive fan-out does);
- global: a statistics phase first (each shard returns N, sum of lengths and the df of
  the query's lexemes; the coordinator adds them up), then every shard scores with the
  global statistics and the coordinator merges (Elasticsearch's dfs_query_then_fetch).
  This ranks exactly as one index over the whole corpus.

It reports how many queries' top 10 differ, by how many documents on average, and the
nDCG@10 of both against SciFact's train qrels. The corpus: SciFact's 5,183 abstracts,
and with --replicas R that many copies, copy 0 the original and every other copy with
its sentences resampled with replacement (as scripts/bench_scale.py builds its 100k
corpus; only copy 0 is relevant to any claim). Shards by a hash of the document id
(--by hash, the usual distribution) or by contiguous ranges of abstracts (--by range,
as when shards are filled by time or by source).

    .venv/bin/python scripts/sim_bm25_shards.py --data ../shared/data/scifact --replicas 19
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import time
from pathlib import Path

import psycopg
from psycopg import sql

from scirag import db

K1, B = 0.9, 0.4
SENT = re.compile(r"(?<=[.!?])\s+")

TOP_SQL = """SELECT p.doc, sum(q.idf * p.tf * %(k1p1)s / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / %(avgdl)s))) AS s
             FROM unnest(%(lex)s::text[], %(idf)s::float8[]) AS q(lexeme, idf)
             JOIN postings p USING (lexeme)
             GROUP BY p.doc ORDER BY s DESC, p.doc LIMIT 10"""


def corpus(data: Path, replicas: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    docs = []
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append((d["_id"], d.get("title", ""), d.get("text", "")))
    out = []
    for r in range(replicas + 1):
        for doc_id, title, text in docs:
            if r == 0:
                out.append((doc_id, f"{title} {text}"))
            else:
                sents = SENT.split(text) or [text]
                out.append((f"{doc_id}#{r}", title + " " + " ".join(rng.choice(sents) for _ in sents)))
    return out


def shard_of(doc_id: str, index: int, total: int, shards: int, by: str) -> int:
    if by == "range":
        return index * shards // total
    return int(hashlib.md5(doc_id.encode()).hexdigest(), 16) % shards


def build(base: str, docs: list[tuple[str, str]], shards: int, by: str) -> list[str]:
    dsns = []
    with psycopg.connect(db.with_dbname(base, "postgres"), autocommit=True) as admin:
        for s in range(shards):
            name = f"scirag_shardsim_{s}"
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            dsns.append(db.with_dbname(base, name))
    parts = [[] for _ in range(shards)]
    for i, (doc_id, body) in enumerate(docs):
        parts[shard_of(doc_id, i, len(docs), shards, by)].append((doc_id, body))
    for dsn, part in zip(dsns, parts):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE raw (doc text, body text)")
            with conn.cursor().copy("COPY raw (doc, body) FROM STDIN") as cp:
                for row in part:
                    cp.write_row(row)
            conn.execute("""CREATE TABLE postings AS
                            SELECT t.lexeme, r.doc, cardinality(t.positions) AS tf, 0 AS dl
                            FROM raw r, unnest(to_tsvector('english', r.body)) AS t""")
            conn.execute("CREATE TABLE docs AS SELECT doc, sum(tf)::int AS dl FROM postings GROUP BY doc")
            conn.execute("UPDATE postings p SET dl = d.dl FROM docs d WHERE d.doc = p.doc")
            conn.execute("CREATE INDEX ON postings (lexeme)")
            conn.execute("DROP TABLE raw")
            conn.execute("ANALYZE postings")
            conn.execute("ANALYZE docs")
    return dsns


def idf(n: float, df: float) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="SciFact folder (corpus.jsonl, queries.jsonl, qrels/)")
    ap.add_argument("--replicas", type=int, default=19, help="resampled copies of every abstract (19: ~100k)")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--by", choices=["hash", "range"], default="hash")
    ap.add_argument("--queries", type=int, default=300, help="SciFact train claims scored (first N)")
    ap.add_argument("--dsn", default=None, help="the cluster (default: SCIRAG_DSN, PG*, or the project cluster)")
    ap.add_argument("--keep", action="store_true", help="keep the shard databases (default: drop them)")
    args = ap.parse_args()

    base = args.dsn or db.default_dsn()
    t0 = time.perf_counter()
    docs = corpus(args.data, args.replicas)
    dsns = build(base, docs, args.shards, args.by)
    print(f"{len(docs)} abstracts in {args.shards} shards by {args.by} ({time.perf_counter() - t0:.0f} s to build)")

    qrels: dict[str, set[str]] = {}
    with open(args.data / "qrels" / "train.tsv", encoding="utf-8") as fh:
        for line in fh:
            q, d, *rest = line.rstrip("\n").split("\t")
            if q != "query-id" and (not rest or rest[-1] != "0"):
                qrels.setdefault(q, set()).add(d)
    queries = []
    with open(args.data / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["_id"] in qrels:
                queries.append((d["_id"], d["text"]))
    queries = queries[: args.queries]

    conns = [psycopg.connect(d, autocommit=True) for d in dsns]
    try:
        sizes = [c.execute("SELECT count(*)::float8, sum(dl)::float8 FROM docs").fetchone() for c in conns]
        n_all, dl_all = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
        differ, moved, same_order, nd_local, nd_global = 0, 0, 0, 0.0, 0.0
        for qid, text in queries:
            qlex = (
                conns[0]
                .execute(
                    "SELECT array_agg(lexeme ORDER BY lexeme), array_agg(cardinality(positions) ORDER BY lexeme) "
                    "FROM unnest(to_tsvector('english', %s))",
                    (text,),
                )
                .fetchone()
            )
            lex, qtf = qlex[0] or [], qlex[1] or []
            dfs = []
            for c in conns:  # phase 1: statistics
                got = dict(
                    c.execute(
                        "SELECT lexeme, count(*) FROM postings WHERE lexeme = ANY (%s) GROUP BY lexeme", (lex,)
                    ).fetchall()
                )
                dfs.append([got.get(x, 0) for x in lex])
            gdf = [sum(col) for col in zip(*dfs)] if lex else []
            merged = {"local": [], "global": []}
            for c, (n, sdl), df in zip(conns, sizes, dfs):  # phase 2: scoring
                for mode, (nn, avgdl, dd) in {
                    "local": (n, sdl / n, df),
                    "global": (n_all, dl_all / n_all, gdf),
                }.items():
                    weights = [q * idf(nn, d) for q, d in zip(qtf, dd)]
                    rows = c.execute(
                        TOP_SQL, {"k1p1": K1 + 1, "k1": K1, "b": B, "avgdl": avgdl, "lex": lex, "idf": weights}
                    ).fetchall()
                    merged[mode] += rows
            top = {m: [d for d, _ in sorted(v, key=lambda r: (-r[1], r[0]))[:10]] for m, v in merged.items()}
            diff = len(set(top["local"]) ^ set(top["global"])) // 2
            differ += diff > 0
            moved += diff
            same_order += top["local"] == top["global"]
            nd_local += ndcg10(top["local"], qrels[qid])
            nd_global += ndcg10(top["global"], qrels[qid])
        nq = len(queries)
        print(
            f"{nq} SciFact train claims, BM25 k1 {K1} b {B}: top-10 differs (as a set) for {differ} "
            f"({100 * differ / nq:.1f} %), {moved / nq:.2f} of 10 documents on average; identical order for "
            f"{same_order} ({100 * same_order / nq:.1f} %); nDCG@10 local {nd_local / nq:.4f}, "
            f"global {nd_global / nq:.4f} ({time.perf_counter() - t0:.0f} s in all)"
        )
    finally:
        for c in conns:
            c.close()
        if not args.keep:
            with psycopg.connect(db.with_dbname(base, "postgres"), autocommit=True) as admin:
                for d in dsns:
                    name = psycopg.conninfo.conninfo_to_dict(d)["dbname"]
                    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
