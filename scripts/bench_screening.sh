#!/usr/bin/env bash
# Benchmark only, opt-in: installs ASReview LAB 3.0.8 (Apache-2.0) into its own
# virtualenv .venv-asreview (never the project's .venv, never the default path) and
# runs scripts/bench_screening.py: scirag's screener and `asreview simulate` side by
# side on every screening set, same priors and seeds. Arguments go to the .py
# (--seeds N, --only NAME, --data DIR, --json).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"
bench_venv="$SCIRAG_ROOT/.venv-asreview"
if ! "$bench_venv/bin/asreview" --version 2>/dev/null | grep -q '3\.0\.8'; then
  log "installing asreview==3.0.8 into $bench_venv (benchmark only)"
  python3 -m venv "$bench_venv"
  "$bench_venv/bin/python" -m pip -q --disable-pip-version-check install 'asreview==3.0.8'
fi
exec "$SCIRAG_VENV/bin/python" scripts/bench_screening.py --asreview "$bench_venv/bin/asreview" "$@"
