"""ASReview LAB beside scirag's screener: the same screening set, the same prior
records and seeds, both screening orders scored by one function
(scirag.screening.metrics).

ASReview is the reference tool for screening, and an opt-in benchmark dependency: it
is never installed on the default path. scripts/bench_screening.sh installs version
3.0.8 into its own virtualenv (.venv-asreview); `scirag eval screening --asreview
PATH` and scripts/bench_screening.py call its `asreview simulate` (default model) and
read the order it screened in from the project file it writes.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

from scirag import screening

KEYS = ("wss95", "recall_at_10pct", "recall_at_20pct")


def asreview_order(asreview: str, data: screening.Dataset, prior: list[int], seed: int, work: Path) -> list[int]:
    """Rows in the order `asreview simulate` screened them (priors first)."""
    src = work / f"{data.name}.csv"
    if not src.exists():
        with open(src, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["title", "abstract", "label_included"])
            for text, title, label in zip(data.texts, data.titles, data.labels):
                w.writerow([title, text[len(title) :].strip(), int(label)])
    out = work / f"{data.name}-{seed}.asreview"
    out.unlink(missing_ok=True)
    cmd = [asreview, "simulate", str(src), "--prior-idx", *map(str, prior), "--seed", str(seed), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"asreview simulate failed on {data.name} seed {seed}: {tail[0]}")
    with zipfile.ZipFile(out) as z:
        db = work / "results.db"
        db.write_bytes(z.read("results.db"))
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT record_id FROM results ORDER BY rowid").fetchall()
    return [int(r[0]) for r in rows]


def asreview_runs(
    asreview: str, data: screening.Dataset, seeds: int, first_seed: int = 0, cache_dir: Path | None = None
) -> list[dict]:
    """ASReview's metrics per seed, from the prior pair scirag's seed draws. With
    ``cache_dir``, orders are kept in one JSON file per set, keyed by set, seed and
    priors, so a rerun only simulates what is missing."""
    cache_file = cache_dir / f"{data.name}.json" if cache_dir else None
    cache = json.loads(cache_file.read_text()) if cache_file and cache_file.exists() else {}
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first_seed, first_seed + seeds):
            prior = screening.priors(data.labels, seed)
            key = f"{data.name}/{seed}/{prior[0]},{prior[1]}"
            if key not in cache:
                t = time.time()
                cache[key] = asreview_order(asreview, data, prior, seed, Path(tmp))
                print(f"  asreview {key}: {time.time() - t:.0f} s", file=sys.stderr, flush=True)
                if cache_file:
                    cache_file.parent.mkdir(parents=True, exist_ok=True)
                    cache_file.write_text(json.dumps(cache))
            out.append({"seed": seed, **screening.metrics(cache[key], data.labels)})
    return out


def side_by_side(data: screening.Dataset, ours: dict, theirs: list[dict]) -> dict:
    """One row: ASReview's and scirag's means over the seeds, and the WSS@95 difference."""
    row = {"dataset": data.name, "records": len(data.labels), "included": int(data.labels.sum())}
    for k in KEYS:
        row[f"asreview_{k}"] = round(float(np.mean([m[k] for m in theirs])), 4)
        row[f"scirag_{k}"] = round(float(ours[k]), 4)
    row["diff_wss95"] = round(row["scirag_wss95"] - row["asreview_wss95"], 4)
    return row


COLUMNS = ["dataset", "records", "included", "asreview_wss95", "scirag_wss95", "diff_wss95"] + [
    "asreview_recall_at_10pct",
    "scirag_recall_at_10pct",
    "asreview_recall_at_20pct",
    "scirag_recall_at_20pct",
]
