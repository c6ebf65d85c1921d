#!/usr/bin/env bash
# Runs the pgTAP suites (pg_prove) against one database: scripts/pgtap.sh DSN [--shuffle]
# (test.sh shuffles; the upgrade test runs them in file order). The shuffle is seeded
# and the seed printed, so an order-dependent failure can be repeated:
# SCIRAG_PGTAP_SEED=N scripts/test.sh (pg_prove's own --shuffle takes no seed).
#
# Suites whose index-path assertions need an HNSW graph free of the dead entries that
# rolled-back fixtures (of earlier suites, or deleted rows) leave in it until VACUUM run
# first, each right after a VACUUM by this harness: a suite itself changes nothing
# outside its transaction. Every suite runs; the exit status is 1 if any failed.
set -euo pipefail
source "$(dirname "$0")/env.sh"
dsn="${1:?usage: scripts/pgtap.sh DSN [--shuffle]}"
shuffle="${2:-}"
[ -z "$shuffle" ] || [ "$shuffle" = "--shuffle" ] || die "usage: scripts/pgtap.sh DSN [--shuffle] (got $shuffle)"
cd "$SCIRAG_ROOT"
clean_index=(tests/pgtap/03_scope_layers.sql tests/pgtap/04_retrieve_contract.sql tests/pgtap/09_scope_filters.sql)
rest=()
for f in tests/pgtap/*.sql; do
  case " ${clean_index[*]} " in *" $f "*) ;; *) rest+=("$f") ;; esac
done
# pg_prove takes no conninfo string: hand it the DSN as libpq variables.
eval "$("$SCIRAG_VENV/bin/python" -c 'import shlex, sys
from scirag.db import libpq_env
print("\n".join(f"export {k}={shlex.quote(v)}" for k, v in libpq_env(sys.argv[1]).items()))' "$dsn")"
status=0
for f in "${clean_index[@]}"; do
  psql -X -q -v ON_ERROR_STOP=1 -c "VACUUM scirag.chunks"
  pg_prove "$f" || status=1
done
if [ -n "$shuffle" ]; then
  seed="${SCIRAG_PGTAP_SEED:-$RANDOM}"
  log "pgTAP order: shuffled with seed $seed (repeat it with SCIRAG_PGTAP_SEED=$seed)"
  mapfile -t rest < <(python3 -c 'import random, sys
files = sys.argv[2:]
random.Random(int(sys.argv[1])).shuffle(files)
print("\n".join(files))' "$seed" "${rest[@]}")
fi
# and once more before the others: what the clean-index suites rolled back leaves dead
# entries in the HNSW graph too
psql -X -q -v ON_ERROR_STOP=1 -c "VACUUM scirag.chunks"
pg_prove "${rest[@]}" || status=1
exit "$status"
