#!/usr/bin/env python3
"""Evaluation views of the shared data that keep the reranker's training claims out.

    python3 scripts/reranker_views.py /tmp/scirag-views [--data ../shared/data]

writes (outside the repository; the data files themselves are symlinked, never copied):

* OUT/scifact/: corpus.jsonl and queries.jsonl (links), qrels/dev.tsv = the held-out
  claims (never trained on: scripts/reranker_data.py's buckets 0-2, about 30 %),
  qrels/train.tsv = the other 70 % (the reranker trained on buckets 4-9; bucket 3 is its monitor set);
* OUT/scitab/: tables.jsonl (link), claims_dev.jsonl = the held-out SciTab claims only
  (what ``scirag eval scitab`` reads), claims_train.jsonl = the others (tuning).

Run the benchmarks on them as on the originals (the database names and corpus tags are
the same, so a loaded corpus is reused):

    .venv/bin/scirag eval beir OUT/scifact --split dev --profile deep
    .venv/bin/scirag eval scitab OUT/scitab --profile deep
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reranker_data import part

ROOT = Path(__file__).resolve().parent.parent


def link(src: Path, dst: Path) -> None:
    if dst.is_symlink() or dst.exists():
        dst.unlink()
    dst.symlink_to(src.resolve())


def write_views(data: Path, out: Path) -> dict:
    sf, st = out / "scifact", out / "scitab"
    (sf / "qrels").mkdir(parents=True, exist_ok=True)
    st.mkdir(parents=True, exist_ok=True)
    link(data / "scifact" / "corpus.jsonl", sf / "corpus.jsonl")
    link(data / "scifact" / "queries.jsonl", sf / "queries.jsonl")
    counts = {"scifact_dev": set(), "scifact_train": set(), "scitab_heldout": 0}
    with open(data / "scifact" / "qrels" / "train.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    for name, keep in (
        ("dev", lambda q: part("scifact", q) == "heldout"),
        ("train", lambda q: part("scifact", q) != "heldout"),
    ):
        with open(sf / "qrels" / f"{name}.tsv", "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, delimiter="\t", lineterminator="\n")
            w.writerow(["query-id", "corpus-id", "score"])
            for r in rows:
                if keep(r["query-id"]):
                    w.writerow([r["query-id"], r["corpus-id"], r["score"]])
                    counts[f"scifact_{name}"].add(r["query-id"])
    link(data / "scitab" / "tables.jsonl", st / "tables.jsonl")
    with (
        open(data / "scitab" / "claims_dev.jsonl", encoding="utf-8") as src,
        open(st / "claims_dev.jsonl", "w", encoding="utf-8") as held,
        open(st / "claims_train.jsonl", "w", encoding="utf-8") as tune,
    ):
        for line in src:
            if part("scitab", json.loads(line)["id"]) == "heldout":
                held.write(line)
                counts["scitab_heldout"] += 1
            else:
                tune.write(line)
    return {k: len(v) if isinstance(v, set) else v for k, v in counts.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="held-out evaluation views for the reranker")
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args(argv)
    if args.out.resolve().is_relative_to(ROOT):
        raise SystemExit("reranker_views: write the views outside the repository (data never enters it)")
    print(json.dumps(write_views(args.data, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
