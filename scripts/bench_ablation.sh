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
for run in "--layers keyword" "--layers vector" "--profile interactive-rrf" "--profile interactive" \
           "--profile deep-rrf" "--profile deep"; do
  # shellcheck disable=SC2086
  "$S" eval beir "$DATA/scifact" --split train $run | tail -n 1
done
for run in "--layers keyword" "--layers vector" "--layers keyword,hyde" "--profile interactive-rrf" \
           "--profile interactive" "--profile deep-rrf" "--profile deep"; do
  # shellcheck disable=SC2086
  "$S" eval scitab "$DATA/scitab" $run | tail -n 1
done
