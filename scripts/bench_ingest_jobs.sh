#!/usr/bin/env bash
# Whole ingestion of a folder with 1 and with N parse workers (issue 25: `scirag ingest
# --jobs`), each into a database of its own made afresh (scirag_bench_jobs1, ..._jobsN),
# then the same folder again, unchanged (every file skipped by its signature).
#   scripts/bench_ingest_jobs.sh                     # ../shared/data/papers, 1 and 2 workers
#   PAPERS=/path/to/folder JOBS="1 2 4" scripts/bench_ingest_jobs.sh
# Not a test: it takes minutes. Prints one line per run: workers, wall seconds, load.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"
PAPERS="${PAPERS:-../shared/data/papers}"
for j in ${JOBS:-1 2}; do
  dsn="$(scirag_dsn "scirag_bench_jobs$j")"
  "$SCIRAG_VENV/bin/scirag" db init --fresh --dsn "$dsn" >/dev/null 2>&1
  for pass in first unchanged; do
    start=$(date +%s.%N)
    summary="$("$SCIRAG_VENV/bin/scirag" ingest "$PAPERS" --license public --jobs "$j" --dsn "$dsn" 2>&1 | tail -1)"
    end=$(date +%s.%N)
    printf 'jobs=%s %-9s wall=%.1f s load=%s  %s\n' "$j" "$pass" "$(echo "$end - $start" | bc)" \
      "$(cut -d' ' -f1 /proc/loadavg)" "$summary"
  done
done
