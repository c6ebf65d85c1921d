"""BEIR-format benchmarks: load a corpus into a database of its own (once), run its
queries through scirag.retrieve, and store nDCG@10, Recall@100 and MRR at document level."""

from __future__ import annotations

import csv
import hashlib
import json
import statistics
import time
from pathlib import Path

from scirag import db
from scirag.evaluation.runs import add_results, finish_run, start_run
from scirag.ingest.pipeline import Ingester
from scirag.ingest.manifest import Entry
from scirag.evaluation.metrics import dedupe, mrr, ndcg_at, percentile, recall_at


def corpus_tag(corpus_dir: Path) -> str:
    h = hashlib.sha256()
    with open(corpus_dir / "corpus.jsonl", "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return f"beir:{corpus_dir.name}:{h.hexdigest()[:16]}"


def beir_dsn(dsn: str | None, corpus_dir: Path) -> str:
    return db.benchmark_dsn(dsn, f"scirag_beir_{corpus_dir.name.lower()}")


def corpus_entries(corpus_dir: Path, license_: str = "public"):
    """The documents of a BEIR corpus.jsonl as manifest entries, in file order."""
    with open(corpus_dir / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            d = json.loads(line)
            yield Entry(
                line_no=i,
                id=d["_id"],
                title=(d.get("title") or d["_id"]).strip(),
                text=d.get("text") or "",
                source=f"beir-{corpus_dir.name}",
                license=license_,
            )


def load_corpus(dsn: str, corpus_dir: Path, license_: str = "public") -> None:
    """Ingests corpus.jsonl once; a finished load of the same file is recognised by its hash."""
    load_documents(dsn, corpus_tag(corpus_dir), corpus_entries(corpus_dir, license_))


def load_documents(dsn: str, tag: str, entries) -> None:
    """Deploys dsn's database and ingests the entries once: a finished load with the
    same tag is a no-op, and an interrupted one resumes (documents already stored are skipped)."""
    db.init_db(dsn)
    with db.connect(dsn, role=db.LOADER_ROLE) as conn:
        done = conn.execute(
            "SELECT 1 FROM scirag.ingest_runs WHERE manifest = %s AND finished_at IS NOT NULL", (tag,)
        ).fetchone()
        if done:
            return
        todo = list(entries)
        have = {r[0] for r in conn.execute("SELECT external_id FROM scirag.documents")}
        ingester = Ingester(conn)
        run_id = conn.execute(
            "INSERT INTO scirag.ingest_runs (manifest, embedding_version) VALUES (%s, %s) RETURNING id",
            (tag, ingester.embedding_version),
        ).fetchone()[0]
        conn.commit()
        counts = {"added": 0, "duplicate": 0, "failed": 0}
        started = time.monotonic()
        for i, entry in enumerate(todo, 1):
            if entry.id not in have:
                try:
                    counts[ingester.ingest_entry(entry, run_id).status] += 1
                except Exception as exc:  # reported and counted, the load goes on
                    conn.rollback()
                    db.echo(f"  {entry.id}: failed: {exc}")
                    counts["failed"] += 1
            if i % 250 == 0 or i == len(todo):
                rate = i / (time.monotonic() - started)
                db.echo(
                    f"  loaded {i}/{len(todo)} documents ({rate:.0f}/s, {counts['duplicate']} duplicate, "
                    f"{counts['failed']} failed)"
                )
        conn.execute(
            "UPDATE scirag.ingest_runs SET finished_at = now(), added = %s, duplicate = %s, failed = %s WHERE id = %s",
            (counts["added"], counts["duplicate"], counts["failed"], run_id),
        )
        conn.commit()
        db.echo("  compacting keyword postings, refreshing planner statistics")
        db.finish_load(conn)


def read_queries(corpus_dir: Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(corpus_dir / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    queries = {}
    for line in open(corpus_dir / "queries.jsonl", encoding="utf-8"):
        q = json.loads(line)
        if q["_id"] in qrels:
            queries[q["_id"]] = q["text"]
    return queries, qrels


def run_config(
    dsn: str,
    corpus_dir: Path,
    split: str,
    name: str,
    profile: str,
    options: dict,
    limit: int | None = None,
    k: int = 100,
) -> dict:
    queries, qrels = read_queries(corpus_dir, split)
    items = list(queries.items())[:limit] if limit else list(queries.items())
    config = {"profile": profile, "options": options, "k": k}
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, db.connect(dsn, role=db.READER_ROLE) as reader:
        run_id = start_run(writer, reader, "beir", corpus_dir.name, split, name, config)
        rows, per = [], {"ndcg@10": [], "recall@100": [], "mrr@10": []}
        times = []
        for i, (qid, text) in enumerate(items, 1):
            t0 = time.perf_counter()
            got = reader.execute(
                "SELECT external_id FROM scirag.retrieve(%s, k => %s, profile => %s, options => %s)",
                (text, k, profile, json.dumps(options)),
            ).fetchall()
            ms = (time.perf_counter() - t0) * 1000
            reader.commit()
            ranked = dedupe([r[0] for r in got])
            rel = qrels[qid]
            m = {
                "ndcg@10": ndcg_at(ranked, rel, 10),
                "recall@100": recall_at(ranked, rel, 100),
                "mrr@10": mrr(ranked, {d for d, r in rel.items() if r > 0}, 10),
            }
            for key in per:
                per[key].append(m[key])
            times.append(ms)
            rows.append((qid, m, ranked[:100], ms))
            if i % 200 == 0:
                db.echo(f"  [{name}] {i}/{len(items)} queries, nDCG@10 so far {statistics.mean(per['ndcg@10']):.4f}")
        add_results(writer, run_id, rows)
        metrics = {key: statistics.mean(v) for key, v in per.items()}
        metrics.update({"p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95)})
        finish_run(writer, run_id, len(items), metrics)
    return {"run": run_id, "config": name, "queries": len(items), **metrics}
