#!/usr/bin/env bash
# PDF fidelity benchmark (issue 10): loads the ground-truth papers into the
# scirag_eval_pdf database and scores tables, section tree, qa_hit5, pages/s
# and peak memory, per paper and overall; each run is stored in scirag.eval_runs
# (kind 'pdf') with the corpus fingerprint and git commit.
#   scripts/bench_pdf.sh                      # default engine (layout)
#   scripts/bench_pdf.sh --engine pdfplumber  # the generic engine, for comparison
#   PAPERS=/path/to/folder scripts/bench_pdf.sh
# Not a test: it takes minutes (parsing 259 pages and embedding ~800 chunks).
set -euo pipefail
cd "$(dirname "$0")/.."
PAPERS="${PAPERS:-../shared/data/papers}"
exec .venv/bin/scirag eval pdf "$PAPERS" "$@"
