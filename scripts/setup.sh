#!/usr/bin/env bash
# Sets up everything scirag needs and deploys the schema into $SCIRAG_DB:
# Debian packages + pgvector, the virtualenv, the project cluster (unless
# SCIRAG_DSN/PGHOST name another server), and `scirag db init`.
# Idempotent: a second run takes a few seconds.
# Usage: scripts/setup.sh [DB [--fresh]]; what follows DB goes to `scirag db init`
# (--fresh: drop DB first and deploy it anew).
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$SCIRAG_ROOT/scripts/install_system.sh"
"$SCIRAG_ROOT/scripts/install_python.sh"
"$SCIRAG_ROOT/scripts/db_start.sh"
"$SCIRAG_VENV/bin/scirag" db init --dsn "$(scirag_dsn "${1:-$SCIRAG_DB}")" "${@:2}"
