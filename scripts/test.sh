#!/usr/bin/env bash
# Runs every test: sets up, deploys a fresh test database, runs pgTAP (pg_prove)
# and pytest against the real PostgreSQL. Idempotent.
set -euo pipefail
source "$(dirname "$0")/env.sh"
TEST_DB="${SCIRAG_TEST_DB:-scirag_test}"
# Released Sqitch changes are frozen (standard library only: runs before any install).
python3 "$SCIRAG_ROOT/scripts/check_release.py"
# a freshly deployed test database every run: tests see exactly what the plan builds
"$SCIRAG_ROOT/scripts/setup.sh" "$TEST_DB" --fresh
dsn="$(scirag_dsn "$TEST_DB")"
log "ruff (lint rules in pyproject.toml)"
( cd "$SCIRAG_ROOT" && "$SCIRAG_VENV/bin/ruff" check python tests scripts )
"$SCIRAG_VENV/bin/python" - "$dsn" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
PY
log "pgTAP suites"
# pg_prove takes no conninfo string: hand it the DSN as libpq variables.
pg_env="$("$SCIRAG_VENV/bin/python" -c 'import shlex, sys
from scirag.db import libpq_env
print("\n".join(f"export {k}={shlex.quote(v)}" for k, v in libpq_env(sys.argv[1]).items()))' "$dsn")"
( eval "$pg_env" && cd "$SCIRAG_ROOT" && pg_prove --shuffle tests/pgtap/*.sql )
log "pytest"
( cd "$SCIRAG_ROOT" && SCIRAG_TEST_DSN="$dsn" "$SCIRAG_VENV/bin/python" -m pytest -q tests/py "$@" )
# A full run (no pytest selection given) also upgrades a database of the last release.
if [ $# -eq 0 ]; then
  "$SCIRAG_ROOT/scripts/test_upgrade.sh"
fi
