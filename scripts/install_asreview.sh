#!/usr/bin/env bash
# Installs ASReview LAB 3.0.8 (Apache-2.0), the reference screening tool, into its own
# virtualenv .venv-asreview: never the project's .venv, never the default path. The
# screening benchmark (scripts/bench_screening.sh), `scirag eval screening --asreview`
# and the test that runs both side by side use it. Idempotent: does nothing when
# that version is there.
set -euo pipefail
source "$(dirname "$0")/env.sh"
bench_venv="$SCIRAG_ROOT/.venv-asreview"
if ! "$bench_venv/bin/asreview" --version 2>/dev/null | grep -q '3\.0\.8'; then
  log "installing asreview==3.0.8 into $bench_venv (benchmark and its test only)"
  python3 -m venv "$bench_venv"
  "$bench_venv/bin/python" -m pip -q --disable-pip-version-check install 'asreview==3.0.8'
fi
