#!/usr/bin/env bash
# A local high-availability scirag cluster: etcd (one member) and Patroni managing a
# primary and two streaming hot standbys on this machine, synchronous replication on
# (Patroni's synchronous_mode: a commit is acknowledged once one standby has it), the
# scirag schema deployed and the demo corpus loaded. Opt-in: installs Debian's patroni
# and etcd-server on first use. Everything lives in the git-ignored .cluster/ folder;
# scripts/cluster_down.sh stops it (and --purge removes the folder).
#
# Ports (TCP on 127.0.0.1 only): PostgreSQL SCIRAG_HA_PG_PORT .. +2 (default 54365-54367),
# etcd client/peer SCIRAG_HA_ETCD_PORT, +1 (54368, 54369), Patroni REST API
# SCIRAG_HA_API_PORT .. +2 (58365-58367). Prints the DSNs to export at the end.
set -euo pipefail
source "$(dirname "$0")/env.sh"
HA="$SCIRAG_ROOT/.cluster"
PG_PORT="${SCIRAG_HA_PG_PORT:-54365}"
ETCD_PORT="${SCIRAG_HA_ETCD_PORT:-54368}"
API_PORT="${SCIRAG_HA_API_PORT:-58365}"
sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

for p in patroni etcd-server etcd-client; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    log "installing Debian's patroni and etcd (first use only)"
    sudo_ apt-get update -qq
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patroni etcd-server etcd-client >/dev/null
    break
  fi
done
"$SCIRAG_ROOT/scripts/install_system.sh"
"$SCIRAG_ROOT/scripts/install_python.sh"

if [ "$(id -u)" -eq 0 ]; then
  # The server's OS user must reach .cluster/ and read the venv and python/ (PL/Python
  # imports them), as scripts/db_start.sh grants for the embedded cluster.
  d="$SCIRAG_ROOT"
  while [ "$d" != "/" ]; do
    runuser -u postgres -- test -x "$d" || chmod o+x "$d"
    d="$(dirname "$d")"
  done
  runuser -u postgres -- test -r "$SCIRAG_ROOT/python" || chmod -R o+rX "$SCIRAG_ROOT/python"
fi
mkdir -p "$HA"
[ "$(id -u)" -eq 0 ] && chown postgres: "$HA"
chmod 700 "$HA"
# one password per cluster, made on first use, readable by its owner only
if [ ! -f "$HA/password" ]; then
  as_pg sh -c "umask 077; python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > '$HA/password'"
fi
PW="$(cat "$HA/password")"

if ! curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1; then
  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  as_pg sh -c "nohup etcd --name scirag-etcd --data-dir '$HA/etcd' \
      --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
      --listen-peer-urls http://127.0.0.1:$((ETCD_PORT + 1)) \
      --initial-advertise-peer-urls http://127.0.0.1:$((ETCD_PORT + 1)) \
      --initial-cluster scirag-etcd=http://127.0.0.1:$((ETCD_PORT + 1)) \
      > '$HA/etcd.log' 2>&1 & echo \$! > '$HA/etcd.pid'"
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null || die "etcd did not start; see $HA/etcd.log"
fi

for i in 1 2 3; do
  port=$((PG_PORT + i - 1)); api=$((API_PORT + i - 1)); node="$HA/node$i"
  mkdir -p "$node"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$node"
  chmod 700 "$node"
  cat > "$node/patroni.yml" <<YML
scope: scirag
name: node$i
log:
  dir: $node
restapi:
  listen: 127.0.0.1:$api
  connect_address: 127.0.0.1:$api
etcd3:
  host: 127.0.0.1:$ETCD_PORT
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        shared_buffers: 128MB
        jit: "off"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $node/data
  bin_dir: $PG_BIN
  pgpass: $node/pgpass
  parameters:
    unix_socket_directories: $node
  authentication:
    superuser: {username: postgres, password: "$PW"}
    replication: {username: replicator, password: "$PW"}
tags: {nofailover: false, noloadbalance: false, clonefrom: false, nosync: false}
YML
  chmod 600 "$node/patroni.yml"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$node/patroni.yml"
  if ! { [ -f "$node/patroni.pid" ] && kill -0 "$(cat "$node/patroni.pid")" 2>/dev/null; }; then
    log "starting Patroni node$i (PostgreSQL on 127.0.0.1:$port, REST API :$api)"
    as_pg sh -c "nohup patroni '$node/patroni.yml' > '$node/patroni.out' 2>&1 & echo \$! > '$node/patroni.pid'"
  fi
  if [ "$i" -eq 1 ]; then  # the first node bootstraps; the others clone it
    for _ in $(seq 150); do curl -sf "http://127.0.0.1:$api/primary" >/dev/null 2>&1 && break; sleep 0.4; done
    curl -sf "http://127.0.0.1:$api/primary" >/dev/null 2>&1 || curl -sf "http://127.0.0.1:$api/health" >/dev/null \
      || die "node1 did not come up; see $node/patroni.out"
  fi
done

hosts="127.0.0.1,127.0.0.1,127.0.0.1"
ports="$PG_PORT,$((PG_PORT + 1)),$((PG_PORT + 2))"
write_dsn="host=$hosts port=$ports user=postgres password=$PW dbname=$SCIRAG_DB target_session_attrs=read-write"
read_dsn="host=$hosts port=$ports user=postgres password=$PW target_session_attrs=prefer-standby"
log "waiting for two streaming standbys"
for _ in $(seq 300); do
  n="$(curl -sf "http://127.0.0.1:$API_PORT/cluster" 2>/dev/null | python3 -c \
      'import json,sys; print(sum(m.get("state") in ("streaming","running") and m["role"]!="leader" for m in json.load(sys.stdin)["members"]))' 2>/dev/null || echo 0)"
  [ "$n" -ge 2 ] && break
  sleep 0.5
done
[ "${n:-0}" -ge 2 ] || die "the standbys did not start; see $HA/node*/patroni.out"
"$SCIRAG_VENV/bin/scirag" db init --dsn "$write_dsn"
SCIRAG_DSN="$write_dsn" "$SCIRAG_VENV/bin/scirag" ingest "$SCIRAG_ROOT/domain/demo/manifest.jsonl" >/dev/null 2>&1 || true
as_pg sh -c "umask 077; printf '%s\n%s\n' \"$write_dsn\" \"$read_dsn\" > '$HA/dsn'"
log "cluster up: primary + 2 standbys under Patroni (patronictl -c $HA/node1/patroni.yml list)"
echo "export SCIRAG_DSN='$write_dsn'"
echo "export SCIRAG_READ_DSN='$read_dsn'"
