# Shared settings for every scirag script: sourced, never run.
# Everything can be overridden by the environment (SCIRAG_*), never by editing code.
SCIRAG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SCIRAG_ROOT
export SCIRAG_VENV="${SCIRAG_VENV:-$SCIRAG_ROOT/.venv}"
# The embedded cluster lives in a git-ignored folder of the checkout; its unix
# socket sits in the same folder and it listens on no TCP port at all.
export SCIRAG_PGDIR="${SCIRAG_PGDIR:-$SCIRAG_ROOT/.pgdata}"
export SCIRAG_PGPORT="${SCIRAG_PGPORT:-54329}"
export SCIRAG_DB="${SCIRAG_DB:-scirag}"
export SCIRAG_EMBED_DIM="${SCIRAG_EMBED_DIM:-384}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"

log() { printf '\033[1m[scirag]\033[0m %s\n' "$*" >&2; }
die() { printf '[scirag] error: %s\n' "$*" >&2; exit 1; }

# Is the embedded cluster in use (as opposed to a server named by SCIRAG_DSN/PG*)?
scirag_embedded() { [ -z "${SCIRAG_DSN:-}" ] && [ -z "${PGHOST:-}" ]; }

# The DSN every tool uses. A user-supplied SCIRAG_DSN (or PG* variables) wins.
scirag_dsn() {
  local db="${1:-$SCIRAG_DB}"
  if [ -n "${SCIRAG_DSN:-}" ]; then
    echo "$SCIRAG_DSN"
  elif [ -n "${PGHOST:-}" ]; then
    echo "dbname=$db"
  else
    echo "host=$SCIRAG_PGDIR port=$SCIRAG_PGPORT user=postgres dbname=$db"
  fi
}
