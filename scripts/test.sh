#!/usr/bin/env bash
# Runs every test: sets up, deploys a fresh test database, runs pgTAP (pg_prove)
# and pytest against the real PostgreSQL. Idempotent.
set -euo pipefail
source "$(dirname "$0")/env.sh"
TEST_DB="${SCIRAG_TEST_DB:-scirag_test}"
"$SCIRAG_ROOT/scripts/setup.sh" "$TEST_DB"
dsn="$(scirag_dsn "$TEST_DB")"
"$SCIRAG_VENV/bin/python" - "$dsn" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
PY
log "pgTAP suites"
( cd "$SCIRAG_ROOT" && pg_prove --dbname "$dsn" --shuffle tests/pgtap/*.sql )
log "pytest"
( cd "$SCIRAG_ROOT" && SCIRAG_TEST_DSN="$dsn" "$SCIRAG_VENV/bin/python" -m pytest -q tests/py "$@" )
