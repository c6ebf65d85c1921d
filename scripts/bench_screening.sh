#!/usr/bin/env bash
# Benchmark only, opt-in: installs ASReview LAB 3.0.8 (Apache-2.0) into its own
# virtualenv .venv-asreview (scripts/install_asreview.sh) and runs
# scripts/bench_screening.py: scirag's screener and `asreview simulate` side by side
# on every screening set, same priors and seeds. Arguments go to the .py
# (--seeds N, --only NAME, --data DIR, --json).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"
"$SCIRAG_ROOT/scripts/install_asreview.sh"
bench_venv="$SCIRAG_ROOT/.venv-asreview"
exec "$SCIRAG_VENV/bin/python" scripts/bench_screening.py --asreview "$bench_venv/bin/asreview" "$@"
