"""How the screener's naive-Bayes weight is chosen without reporting on the sets it was
chosen on: leave-one-dataset-out.

    .venv/bin/python scripts/tune_screening.py [--seeds 3] [--weights 0,0.25,0.5,1] [--json]

Every weight of the grid is simulated on every screening set (same priors and seeds as
scripts/bench_screening.py). Then, for each set in turn, the weight with the best mean
WSS@95 over the OTHER sets is picked, and that weight's WSS@95 on the held-out set is
reported: the mean of those held-out figures estimates what the selection procedure
gives on a set it has not seen. The weight picked on all sets is printed too (it is the
one to use as the default). Results per (set, weight) are cached in
reports/tune_screening/ so a rerun only simulates what is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from scirag import screening

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "screening"
CACHE = ROOT / "reports" / "tune_screening"


def lodo(table: dict[str, dict[float, float]], weights: list[float]) -> tuple[list[dict], float]:
    """Leave-one-dataset-out choice: table[set][weight] = WSS@95. Returns per held-out
    set the weight chosen on the others and its held-out WSS@95, and the weight that
    is best over all sets (ties: the smaller weight, the simpler model)."""

    def best(sets: list[str]) -> float:
        return max(weights, key=lambda w: (round(float(np.mean([table[s][w] for s in sets])), 6), -w))

    rows = []
    for held in table:
        w = best([s for s in table if s != held])
        rows.append({"held_out": held, "weight": w, "wss95": table[held][w]})
    return rows, best(list(table))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--weights", default="0,0.25,0.5,1")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    weights = [float(x) for x in args.weights.split(",")]
    if not weights or any(not 0 <= w <= 10 for w in weights) or not 1 <= args.seeds <= 20:
        sys.exit("--weights: numbers from 0 to 10; --seeds: 1 to 20")
    files = sorted(args.data.glob("*.csv*"))
    if len(files) < 2:
        sys.exit(f"need at least two screening sets in {args.data}")
    CACHE.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[float, float]] = {}
    for f in files:
        data = screening.load_dataset(f)
        table[data.name] = {}
        for w in weights:
            cache = CACHE / f"{data.name}-w{w}-s{args.seeds}.json"
            if cache.exists():
                res = json.loads(cache.read_text())
            else:
                res = screening.evaluate(data, args.seeds, screening.Model(nb_weight=w))
                cache.write_text(json.dumps(res))
            table[data.name][w] = res["wss95"]
            print(f"  {data.name} nb_weight {w}: WSS@95 {res['wss95']:.4f}", file=sys.stderr, flush=True)
    rows, overall = lodo(table, weights)
    held_mean = float(np.mean([r["wss95"] for r in rows]))
    out = {
        "seeds": args.seeds,
        "weights": weights,
        "table": {s: {str(w): v for w, v in t.items()} for s, t in table.items()},
        "held_out": rows,
        "held_out_mean_wss95": held_mean,
        "weight_on_all_sets": overall,
        "mean_per_weight": {str(w): float(np.mean([table[s][w] for s in table])) for w in weights},
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"WSS@95 per set and naive-Bayes weight (means over {args.seeds} seeds)")
    print("set".ljust(34) + "".join(f"{w:>9}" for w in weights) + "   held-out pick  held-out WSS@95")
    for r in rows:
        s = r["held_out"]
        print(s.ljust(34) + "".join(f"{table[s][w]:9.4f}" for w in weights) + f"   {r['weight']:>13}  {r['wss95']:.4f}")
    print(
        "mean".ljust(34)
        + "".join(f"{out['mean_per_weight'][str(w)]:9.4f}" for w in weights)
        + f"   {'':>13}  {held_mean:.4f}"
    )
    print(f"weight picked on all sets: {overall}; leave-one-set-out estimate of WSS@95: {held_mean:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
