#!/usr/bin/env bash
# Installs the Debian packages and the pgvector extension scirag needs.
# Idempotent: a second run checks and returns in well under a second.
set -euo pipefail
source "$(dirname "$0")/env.sh"

# chromium: the headless browser that tests the web page of `scirag serve` (tests/py/test_server_page.py)
# pgbouncer: the transaction pooler the server is tested through (tests/py/test_pgbouncer.py)
# curl, jq: the REST example of docs/server.md, run as written by tests/py/test_doc_commands.py
PKGS=(postgresql-15 postgresql-server-dev-15 postgresql-plpython3-15 postgresql-15-pgtap sqitch dpkg-dev chromium pgbouncer
  curl jq)
SHARE=/usr/share/postgresql/15/extension

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]} (first run only, about 1-2 minutes)"
  sudo_ apt-get update -qq
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pgvector 0.8 is not packaged for Debian 12: build Debian's own source package
# from trixie (source only; no trixie binaries are installed).
if [ ! -f "$SHARE/vector.control" ] || ! grep -q "default_version = '0.8" "$SHARE/vector.control"; then
  log "building pgvector 0.8 from Debian's source package (about 20 s)"
  src_list=/etc/apt/sources.list.d/scirag-trixie-src.sources
  if [ ! -f "$src_list" ]; then
    sudo_ tee "$src_list" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    sudo_ apt-get update -qq
  fi
  build="$(mktemp -d)"
  (cd "$build" && apt-get source -qq pgvector >/dev/null 2>&1) || die "apt-get source pgvector failed (is the deb-src entry in $src_list reachable?)"
  dir="$(find "$build" -maxdepth 1 -type d -name 'pgvector-0.8*' | head -1)"
  [ -n "$dir" ] || die "Debian's pgvector source is not version 0.8.x: $(ls "$build")"
  # OPTFLAGS="" avoids -march=native so the build runs on any x86-64 of this kind.
  make -s -C "$dir" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS="" >/dev/null
  sudo_ make -s -C "$dir" install PG_CONFIG="$PG_BIN/pg_config" >/dev/null
  rm -rf "$build"
fi
