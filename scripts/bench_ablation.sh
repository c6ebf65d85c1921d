#!/usr/bin/env bash
# The ablation behind every retrieval default (README, "Retrieval quality"):
# SciFact train (nDCG@10, Recall@100, MRR@10) and SciTab dev table retrieval
# (hit@1/5/10, MRR), each layer alone, both fusions, both profiles. Every run is
# stored in scirag.eval_runs of the benchmark's own database with its corpus
# fingerprint and git commit. First run loads the corpora (about 15 minutes).
set -euo pipefail
source "$(dirname "$0")/env.sh"
DATA="${1:-$SCIRAG_ROOT/../shared/data}"
S="$SCIRAG_VENV/bin/scirag"
# name|flags: each row of the README table, in order
runs=(
  "|--layers keyword"
  "keyword, no proximity|--layers keyword --options {\"proximity\":0}"
  "|--layers vector"
  "|--layers keyword,hyde"
  "|--profile interactive-rrf"
  "|--profile interactive"
  "interactive, no proximity|--profile interactive --options {\"proximity\":0}"
  "interactive, keyword min-max|--profile interactive --options {\"keyword_scale\":\"minmax\"}"
  "|--profile deep-rrf"
  "|--profile deep"
)
for bench in "beir $DATA/scifact --split train" "scitab $DATA/scitab"; do
  for run in "${runs[@]}"; do
    name="${run%%|*}"; flags="${run#*|}"
    # shellcheck disable=SC2086
    "$S" eval $bench $flags ${name:+--name "$name"} | tail -n 1
  done
done
