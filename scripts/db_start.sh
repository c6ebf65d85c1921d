#!/usr/bin/env bash
# Starts the project-local PostgreSQL 15 cluster in $SCIRAG_PGDIR (unix socket in
# that folder, port $SCIRAG_PGPORT, no TCP). Run as root, the server runs as the
# `postgres` OS user, since initdb and postgres refuse to run as root.
# With SCIRAG_DSN or PGHOST set, nothing is started: that server is used instead.
set -euo pipefail
source "$(dirname "$0")/env.sh"
scirag_embedded || exit 0

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "$(id -u)" -eq 0 ]; then
  # The server's OS user must reach the cluster folder and read the venv and
  # python/ (PL/Python imports them): grant traverse (x) on the checkout's ancestors.
  d="$SCIRAG_ROOT"
  while [ "$d" != "/" ]; do
    if ! runuser -u postgres -- test -x "$d"; then
      log "granting the postgres OS user traverse access to $d"
      chmod o+x "$d"
    fi
    d="$(dirname "$d")"
  done
  runuser -u postgres -- test -r "$SCIRAG_ROOT/python" || chmod -R o+rX "$SCIRAG_ROOT/python"
fi

if [ ! -f "$SCIRAG_PGDIR/PG_VERSION" ]; then
  log "creating the project cluster in $SCIRAG_PGDIR"
  mkdir -p "$SCIRAG_PGDIR"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$SCIRAG_PGDIR"
  chmod 700 "$SCIRAG_PGDIR"
  # trust on the unix socket only: the socket lives in a 0700 folder and no TCP is opened.
  as_pg "$PG_BIN/initdb" -D "$SCIRAG_PGDIR" -U postgres --auth-local=trust --auth-host=reject \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  cat >> "$SCIRAG_PGDIR/postgresql.conf" <<CONF
# scirag embedded cluster
listen_addresses = ''
unix_socket_directories = '$SCIRAG_PGDIR'
port = $SCIRAG_PGPORT
shared_buffers = 512MB
maintenance_work_mem = 512MB
work_mem = 32MB
max_parallel_maintenance_workers = 1
jit = off
CONF
fi

if ! as_pg "$PG_BIN/pg_ctl" -D "$SCIRAG_PGDIR" status >/dev/null 2>&1; then
  log "starting PostgreSQL on socket $SCIRAG_PGDIR port $SCIRAG_PGPORT"
  as_pg "$PG_BIN/pg_ctl" -D "$SCIRAG_PGDIR" -l "$SCIRAG_PGDIR/server.log" -w -t 60 start >/dev/null \
    || die "PostgreSQL did not start; see $SCIRAG_PGDIR/server.log"
fi
