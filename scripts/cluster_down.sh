#!/usr/bin/env bash
# Stops the local Patroni cluster of scripts/cluster_up.sh: the Patroni nodes (each
# stops its PostgreSQL), then etcd. --purge also removes the .cluster/ folder.
set -euo pipefail
source "$(dirname "$0")/env.sh"
HA="$SCIRAG_ROOT/.cluster"
[ -d "$HA" ] || exit 0
stop_pid() {  # the pid a cluster_up.sh process wrote, and only that one
  local f="$1"
  [ -f "$f" ] || return 0
  local pid; pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$f"
}
for node in "$HA"/node*; do
  [ -d "$node" ] || continue
  stop_pid "$node/patroni.pid"
  # a PostgreSQL left running by a Patroni that was killed (the failover test kills one)
  if [ -f "$node/data/postmaster.pid" ]; then
    if [ "$(id -u)" -eq 0 ]; then run=(runuser -u postgres --); else run=(); fi
    "${run[@]}" "$PG_BIN/pg_ctl" -D "$node/data" -m immediate stop >/dev/null 2>&1 || true
  fi
done
stop_pid "$HA/etcd.pid"
if [ "${1:-}" = "--purge" ]; then
  rm -rf "$HA"
  log "cluster stopped and removed"
else
  log "cluster stopped (data kept in $HA; --purge removes it)"
fi
