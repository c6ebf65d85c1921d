"""SciTab table retrieval: find the table a claim is about (hit@1/5/10, MRR).

Each table is ingested as a document of its own (paper title, caption, and the
table as a pipe table, which the chunker keeps intact as an is_table chunk) into
a database of its own; every claim is a query run through scirag.retrieve."""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from pathlib import Path

from scirag import db
from scirag.evaluation.beir import load_documents
from scirag.evaluation.runs import add_results, finish_run, start_run
from scirag.ingest.manifest import Entry
from scirag.evaluation.metrics import dedupe, hit_at, mrr, percentile


def scitab_dsn(dsn: str | None) -> str:
    return db.benchmark_dsn(dsn, "scirag_scitab")


def table_text(t: dict) -> str:
    clean = lambda cell: str(cell).replace("[BOLD]", "").replace("[ITALIC]", "").strip()  # noqa: E731 - markup, not data
    lines = [" | ".join(clean(c) for c in t["columns"])] + [" | ".join(clean(c) for c in r) for r in t["rows"]]
    return f"{t['caption']}\n\n" + "\n".join(lines)


def load(dsn: str, data_dir: Path) -> None:
    path = data_dir / "tables.jsonl"
    tag = "scitab:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    tables = [json.loads(line) for line in open(path, encoding="utf-8")]
    entries = (
        Entry(line_no=i, id=t["table_id"], title=t["paper"], text=table_text(t), source="scitab", license="public")
        for i, t in enumerate(tables, 1)
    )
    load_documents(dsn, tag, entries)


def run_config(
    dsn: str, data_dir: Path, name: str, profile: str, options: dict, limit: int | None = None, k: int = 20
) -> dict:
    claims = [json.loads(line) for line in open(data_dir / "claims_dev.jsonl", encoding="utf-8")]
    claims = claims[:limit] if limit else claims
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, db.connect(dsn, role=db.READER_ROLE) as reader:
        run_id = start_run(
            writer, reader, "table", "scitab", "dev", name, {"profile": profile, "options": options, "k": k}
        )
        rows, per, times = [], {"hit@1": [], "hit@5": [], "hit@10": [], "mrr": []}, []
        for i, c in enumerate(claims, 1):
            t0 = time.perf_counter()
            got = reader.execute(
                "SELECT external_id FROM scirag.retrieve(%s, k => %s, profile => %s, options => %s)",
                (c["claim"], k, profile, json.dumps(options)),
            ).fetchall()
            times.append((time.perf_counter() - t0) * 1000)
            reader.commit()
            ranked = dedupe([r[0] for r in got])
            rel = {c["table_id"]}
            m = {
                "hit@1": hit_at(ranked, rel, 1),
                "hit@5": hit_at(ranked, rel, 5),
                "hit@10": hit_at(ranked, rel, 10),
                "mrr": mrr(ranked, rel),
            }
            for key in per:
                per[key].append(m[key])
            rows.append((c["id"], m, ranked[:10], times[-1]))
            if i % 200 == 0:
                db.echo(f"  [{name}] {i}/{len(claims)} claims, hit@5 so far {statistics.mean(per['hit@5']):.3f}")
        add_results(writer, run_id, rows)
        metrics = {key: statistics.mean(v) for key, v in per.items()}
        metrics.update({"p50_ms": percentile(times, 50)})
        finish_run(writer, run_id, len(claims), metrics)
    return {"run": run_id, "config": name, "claims": len(claims), **metrics}
