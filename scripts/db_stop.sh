#!/usr/bin/env bash
# Stops the project-local cluster (no-op when it is not running).
set -euo pipefail
source "$(dirname "$0")/env.sh"
[ -f "$SCIRAG_PGDIR/PG_VERSION" ] || exit 0
if [ "$(id -u)" -eq 0 ]; then run=(runuser -u postgres --); else run=(); fi
"${run[@]}" "$PG_BIN/pg_ctl" -D "$SCIRAG_PGDIR" status >/dev/null 2>&1 || exit 0
"${run[@]}" "$PG_BIN/pg_ctl" -D "$SCIRAG_PGDIR" -m fast -w stop >/dev/null
