"""Side by side: scirag's active-learning screener and ASReview LAB's default model
(`asreview simulate`, the version scripts/bench_screening.sh installs in its own
virtualenv) on the same screening sets, with the same prior records and seeds.

    scripts/bench_screening.sh [--seeds N] [--data DIR] [--only NAME]

Each seed draws 1 included + 1 excluded record (scirag.screening.priors); ASReview
gets the same records through --prior-idx and the same --seed. Both screening orders
are scored by one function (scirag.screening.metrics): WSS@95, recall after 10 % and
20 % of the records screened. ASReview's orders are cached per dataset in reports/bench_screening_asreview/, so
a rerun only simulates what is missing.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "screening"
CACHE = ROOT / "reports" / "bench_screening_asreview"  # one JSON file of orders per dataset
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
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with zipfile.ZipFile(out) as z:
        db = work / "results.db"
        db.write_bytes(z.read("results.db"))
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT record_id FROM results ORDER BY rowid").fetchall()
    return [int(r[0]) for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--only", help="only datasets whose name contains one of these (comma-separated)")
    ap.add_argument("--asreview", default=str(ROOT / ".venv-asreview" / "bin" / "asreview"))
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    if not (1 <= args.seeds <= 50):
        sys.exit("--seeds must be between 1 and 50")
    files = sorted(args.data.glob("*.csv*"))
    if args.only:
        files = [f for f in files if any(x and x in f.name for x in args.only.split(","))]
    if not files:
        sys.exit(f"no screening datasets in {args.data}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            data = screening.load_dataset(f)
            cache_file = CACHE / f"{data.name}.json"
            cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
            ours = screening.evaluate(data, args.seeds)
            theirs = []
            for seed in range(args.seeds):
                prior = screening.priors(data.labels, seed)
                key = f"{data.name}/{seed}/{prior[0]},{prior[1]}"
                if key not in cache:
                    t = time.time()
                    cache[key] = asreview_order(args.asreview, data, prior, seed, Path(tmp))
                    print(f"  asreview {key}: {time.time() - t:.0f} s", file=sys.stderr, flush=True)
                    CACHE.mkdir(parents=True, exist_ok=True)
                    cache_file.write_text(json.dumps(cache))
                theirs.append(screening.metrics(cache[key], data.labels))
            row = {"dataset": data.name, "records": len(data.labels), "included": int(data.labels.sum())}
            for k in KEYS:
                row[f"asreview_{k}"] = float(np.mean([m[k] for m in theirs]))
                row[f"scirag_{k}"] = ours[k]
            row["diff_wss95"] = row["scirag_wss95"] - row["asreview_wss95"]
            row["scirag_cpu_s_per_seed"] = float(np.mean([r["cpu_s"] for r in ours["per_seed"]]))
            rows.append(row)
            print(
                f"  {data.name}: asreview {row['asreview_wss95']:.3f} scirag {row['scirag_wss95']:.3f}",
                file=sys.stderr,
                flush=True,
            )
    mean = {"dataset": "MEAN", "records": "", "included": ""}
    for k in rows[0]:
        if k.startswith(("asreview_", "scirag_", "diff_")):
            mean[k] = float(np.mean([r[k] for r in rows]))
    if args.json:
        print(json.dumps({"seeds": args.seeds, "rows": rows, "mean": mean}))
        return 0
    from scirag.evaluation.runs import print_table

    print(f"WSS@95 and recall, means over {args.seeds} seeds (same priors and seeds for both)")
    print_table(
        rows + [mean],
        ["dataset", "records", "included", "asreview_wss95", "scirag_wss95", "diff_wss95"]
        + ["asreview_recall_at_10pct", "scirag_recall_at_10pct", "asreview_recall_at_20pct", "scirag_recall_at_20pct"]
        + ["scirag_cpu_s_per_seed"],
    )
    worst = min(r["diff_wss95"] for r in rows)
    print(
        f"scirag mean WSS@95 {mean['scirag_wss95']:.4f} vs asreview {mean['asreview_wss95']:.4f}; worst dataset diff {worst:+.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
