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
import json
import sys
from pathlib import Path

import numpy as np

from scirag import screening
from scirag.evaluation import asreview_side

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "screening"
CACHE = ROOT / "reports" / "bench_screening_asreview"  # one JSON file of orders per dataset


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
    for f in files:
        data = screening.load_dataset(f)
        ours = screening.evaluate(data, args.seeds)
        theirs = asreview_side.asreview_runs(args.asreview, data, args.seeds, cache_dir=CACHE)
        row = asreview_side.side_by_side(data, ours, theirs)
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
        asreview_side.COLUMNS + ["scirag_cpu_s_per_seed"],
    )
    worst = min(r["diff_wss95"] for r in rows)
    print(
        f"scirag mean WSS@95 {mean['scirag_wss95']:.4f} vs asreview {mean['asreview_wss95']:.4f}; worst dataset diff {worst:+.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
