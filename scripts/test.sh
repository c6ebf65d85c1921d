#!/usr/bin/env bash
# Runs every test: sets up, deploys a fresh test database, runs pgTAP (pg_prove)
# and pytest against the real PostgreSQL. Idempotent.
# Usage: scripts/test.sh [pytest arguments, e.g. -k keyword or a test file]; with
# arguments only that part of pytest runs, and the upgrade and split tests do not.
set -euo pipefail
source "$(dirname "$0")/env.sh"
TEST_DB="${SCIRAG_TEST_DB:-scirag_test}"
# Released Sqitch changes are frozen (standard library only: runs before any install).
python3 "$SCIRAG_ROOT/scripts/check_release.py"
# a freshly deployed test database every run: tests see exactly what the plan builds
"$SCIRAG_ROOT/scripts/setup.sh" "$TEST_DB" --fresh
dsn="$(scirag_dsn "$TEST_DB")"
log "ruff (lint rules and format in pyproject.toml)"
( cd "$SCIRAG_ROOT" && "$SCIRAG_VENV/bin/ruff" check python tests scripts \
    && "$SCIRAG_VENV/bin/ruff" format --check python tests scripts )
"$SCIRAG_VENV/bin/python" - "$dsn" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
PY
log "pgTAP suites"
"$SCIRAG_ROOT/scripts/pgtap.sh" "$dsn" --shuffle
# ASReview LAB in its own virtualenv, for the test that runs it beside scirag's screener
"$SCIRAG_ROOT/scripts/install_asreview.sh"
log "pytest"
server_log="$SCIRAG_PGDIR/server.log"
log_start=$(stat -c %s "$server_log" 2>/dev/null || echo 0)
rc=0
( cd "$SCIRAG_ROOT" && SCIRAG_TEST_DSN="$dsn" "$SCIRAG_VENV/bin/python" -m pytest -q tests/py "$@" ) || rc=$?
if [ "$rc" -ne 0 ]; then
  # A connection "closed unexpectedly" may be a backend that crashed: the server log
  # written during this pytest run says so (CI shows only this output), else nothing
  # is printed here.
  tail -c +"$((log_start + 1))" "$server_log" 2>/dev/null \
    | grep -E "PANIC|was terminated by signal|terminating any other active server processes" \
    | tail -20 | sed 's/^/server.log: /' >&2 || true
  exit "$rc"
fi
# A full run (no pytest selection given) also upgrades a database of the last release
# and checks that the split changes after it leave the catalog as it was.
if [ $# -eq 0 ]; then
  "$SCIRAG_ROOT/scripts/test_upgrade.sh"
  "$SCIRAG_ROOT/scripts/test_split.sh"
fi
