"""How the screener's settings are chosen without reporting on the sets they were
chosen on: leave-one-dataset-out over a fixed list of candidates.

    .venv/bin/python scripts/tune_screening.py [--seeds 3] [--candidates svm,svm+lr,...] [--json]

The candidates are fixed below (CANDIDATES) before any of them is run; each is
simulated on every screening set (same priors and seeds as scripts/bench_screening.py).
Then, for each set in turn, the candidate with the best mean WSS@95 over the OTHER sets
is picked, and that candidate's WSS@95 on the held-out set is reported: the mean of
those held-out figures estimates what the selection procedure gives on a set it has
not seen. The candidate picked on all sets is printed too (it is the one to use as the
default). Results per (set, candidate) are cached in reports/tune_screening/, MiniLM
embeddings in reports/screening_cache/, so a rerun only simulates what is missing.
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
FEATURES = ROOT / "reports" / "screening_cache"

# name -> (Model settings, MiniLM weight[, title counted twice]). Fixed in advance; the
# order breaks ties (an earlier, simpler candidate wins a tie).
CANDIDATES: dict[str, tuple] = {
    "svm": ({}, 0.0),  # ASReview LAB's ELAS u4 settings: TF-IDF 1-2 grams, linear SVM, class weights
    "svm-taper": ({"retrain": "taper"}, 0.0),  # retrained after every decision up to 400, then per 0.5 % growth
    "svm-every": ({"retrain": "every"}, 0.0),  # retrained after every decision, as ASReview does
    # these four were run when the tapered cadence was the default, and keep it:
    "svm+nb0.25": ({"nb_weight": 0.25, "retrain": "taper"}, 0.0),  # + naive Bayes (ELAS u3), standardised scores
    "svm+nb1": ({"nb_weight": 1.0, "retrain": "taper"}, 0.0),
    "svm+lr": ({"lr_weight": 1.0, "retrain": "taper"}, 0.0),  # + logistic regression (C 1), same class weights
    "svm-double": ({"balance": "double", "retrain": "taper"}, 0.0),  # SVM on a double-balanced resample
    "svm+minilm0.25": ({}, 0.25),  # MiniLM embeddings x 0.25 beside the TF-IDF columns
    "svm+minilm0.5": ({}, 0.5),
    # added with the retraining cadence (written down before they were run):
    "svm+nb-rrf": ({"nb_weight": 1.0, "fuse": "rank"}, 0.0),  # SVM and naive Bayes fused by reciprocal rank
    "svm-title2": ({}, 0.0, True),  # the title's words and bigrams counted twice
}


def lodo(table: dict[str, dict[str, float]], names: list[str]) -> tuple[list[dict], str]:
    """Leave-one-dataset-out choice: table[set][candidate] = WSS@95. Returns per
    held-out set the candidate chosen on the others and its held-out WSS@95, and the
    candidate that is best over all sets (ties: the earlier one in ``names``)."""

    def best(sets: list[str]) -> str:
        return max(names, key=lambda c: (round(float(np.mean([table[s][c] for s in sets])), 6), -names.index(c)))

    rows = []
    for held in table:
        c = best([s for s in table if s != held])
        rows.append({"held_out": held, "candidate": c, "wss95": table[held][c]})
    return rows, best(list(table))


def key(name: str) -> str:
    """The cache name of a candidate: the screener it really is (model name, retraining
    cadence, MiniLM weight), so that a candidate that names the default shares the
    runs of the explicit one it equals."""
    settings, minilm, title_twice = (*CANDIDATES[name], False)[:3]
    model = screening.Model(**settings)
    return (
        f"{model.name}-{model.retrain}" + (f"-minilm{minilm:g}" if minilm else "") + ("-title2" if title_twice else "")
    )


def run(data: screening.Dataset, name: str, seeds: int) -> dict:
    settings, minilm, title_twice = (*CANDIDATES[name], False)[:3]
    model = screening.Model(**settings)
    return screening.evaluate(data, seeds, model, minilm=minilm, cache_dir=FEATURES, title_twice=title_twice)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--candidates", default=",".join(CANDIDATES))
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = [c for c in args.candidates.split(",") if c]
    unknown = [c for c in names if c not in CANDIDATES]
    if not names or unknown or not 1 <= args.seeds <= 20:
        sys.exit(f"--candidates: some of {', '.join(CANDIDATES)}; --seeds: 1 to 20")
    files = sorted(args.data.glob("*.csv*"))
    if len(files) < 2:
        sys.exit(f"need at least two screening sets in {args.data}")
    CACHE.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, float]] = {}
    results: dict[str, dict[str, dict]] = {}
    for f in files:
        data = screening.load_dataset(f)
        table[data.name], results[data.name] = {}, {}
        for c in names:
            cache = CACHE / f"{data.name}-{key(c)}-s{args.seeds}.json"
            if cache.exists():
                res = json.loads(cache.read_text())
            else:
                res = run(data, c, args.seeds)
                cache.write_text(json.dumps(res))
            table[data.name][c] = res["wss95"]
            results[data.name][c] = {k: res[k] for k in ("wss95", "recall_at_10pct", "recall_at_20pct")}
            print(f"  {data.name} {c}: WSS@95 {res['wss95']:.4f}", file=sys.stderr, flush=True)
    rows, overall = lodo(table, names)
    for r in rows:
        r.update({k: results[r["held_out"]][r["candidate"]][k] for k in ("recall_at_10pct", "recall_at_20pct")})
    held_mean = float(np.mean([r["wss95"] for r in rows]))
    out = {
        "seeds": args.seeds,
        "candidates": names,
        "table": table,
        "held_out": rows,
        "held_out_mean_wss95": held_mean,
        "candidate_on_all_sets": overall,
        "mean_per_candidate": {c: float(np.mean([table[s][c] for s in table])) for c in names},
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"WSS@95 per set and candidate (means over {args.seeds} seeds)")
    width = max(len(c) for c in names) + 2
    print("set".ljust(34) + "".join(c.rjust(width) for c in names) + "   held-out pick  held-out WSS@95")
    for r in rows:
        s = r["held_out"]
        cells = "".join(f"{table[s][c]:{width}.4f}" for c in names)
        print(s.ljust(34) + cells + f"   {r['candidate']:>13}  {r['wss95']:.4f}")
    means = "".join(f"{out['mean_per_candidate'][c]:{width}.4f}" for c in names)
    print("mean".ljust(34) + means + f"   {'':>13}  {held_mean:.4f}")
    print(f"candidate picked on all sets: {overall}; leave-one-set-out estimate of WSS@95: {held_mean:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
