#!/usr/bin/env bash
# `scirag ingest --jobs` (issue 25): whole ingestion of one corpus with 1 and with N parse
# workers, side by side in one sitting, each run into a database of its own made afresh
# (scirag_bench_jobs1, ..._jobsN). The settings alternate within each round (1, 2, 1, 2,
# ...), so a change in the machine's load falls on both alike. Prints one line per run,
# then a table of medians: wall seconds, files (documents) per second, speed-up against
# the first setting, and the same folder ingested again unchanged (every file skipped
# by its signature; PDF folders only).
#
#   scripts/bench_ingest_jobs.sh                              # the nine papers, --jobs 1 and 2, 3 rounds
#   scripts/bench_ingest_jobs.sh --files 4 --runs 3           # the 4 smallest of them
#   scripts/bench_ingest_jobs.sh --corpus scifact --docs 2000 --runs 1   # SciFact abstracts (a manifest)
#   scripts/bench_ingest_jobs.sh --jobs "1 2 4" --papers /path/to/pdfs
#
# The SciFact corpus is written as a temporary manifest of inline texts (never into the
# repository). Not a test: it takes minutes; the figures depend on the machine's load.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"
corpus=papers papers=../shared/data/papers scifact=../shared/data/scifact
files=0 docs=2000 runs=3 jobs="1 2"
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus="$2"; shift 2 ;;
    --papers) papers="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --docs) docs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$corpus" in papers|scifact) ;; *) die "--corpus must be papers or scifact, not '$corpus'" ;; esac
for n in "$files" "$docs" "$runs"; do [[ "$n" =~ ^[0-9]+$ ]] || die "'$n' is not a whole number"; done
[ "$runs" -ge 1 ] || die "--runs must be at least 1"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ "$corpus" = papers ]; then
  [ -d "$papers" ] || die "no folder $papers"
  mkdir "$work/pdfs"
  # the N smallest PDFs (all with --files 0), copied into a folder of their own
  mapfile -t chosen < <(find "$papers" -maxdepth 1 -name '*.pdf' -printf '%s %p\n' | sort -n \
    | { if [ "$files" -gt 0 ]; then head -n "$files"; else cat; fi; } | cut -d' ' -f2-)
  [ "${#chosen[@]}" -gt 0 ] || die "no PDF in $papers"
  cp "${chosen[@]}" "$work/pdfs/"  # copies: a link resolving outside the folder is refused
  target=("$work/pdfs" --license public)
  what="${#chosen[@]} PDFs from $papers"
else
  [ -f "$scifact/corpus.jsonl" ] || die "no $scifact/corpus.jsonl"
  "$SCIRAG_VENV/bin/python" - "$scifact/corpus.jsonl" "$docs" "$work/scifact.jsonl" <<'PY'
import itertools, json, sys
src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(src, encoding="utf-8") as fh, open(out, "w", encoding="utf-8") as w:
    for line in itertools.islice(fh, n):
        d = json.loads(line)
        w.write(json.dumps({"id": d["_id"], "title": (d.get("title") or d["_id"]).strip(),
                            "text": d.get("text") or d["_id"], "license": "public"}) + "\n")
PY
  target=("$work/scifact.jsonl")
  what="$(wc -l <"$work/scifact.jsonl") SciFact abstracts (a manifest of inline texts)"
fi
log "corpus: $what; settings: --jobs ${jobs// /, }; $runs round(s); $(nproc) cores"

results="$work/results.tsv"
for round in $(seq 1 "$runs"); do
  for j in $jobs; do
    dsn="$(scirag_dsn "scirag_bench_jobs$j")"
    "$SCIRAG_VENV/bin/scirag" db init --fresh --dsn "$dsn" >/dev/null 2>&1
    passes=first
    [ "$corpus" = papers ] && passes="first unchanged"
    for pass in $passes; do
      start=$(date +%s.%N)
      "$SCIRAG_VENV/bin/scirag" ingest "${target[@]}" --jobs "$j" --dsn "$dsn" >/dev/null 2>"$work/err" \
        || die "ingest failed: $(tail -3 "$work/err")"
      end=$(date +%s.%N)
      summary="$(grep '^ingest run' "$work/err" | tail -1)"
      n=$(echo "$summary" | grep -oE '[0-9]+ (added|skipped)' | awk '{s+=$1} END {print s+0}')
      wall=$(echo "$end - $start" | bc)
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf 'round %s jobs=%s %-9s wall=%6.1f s  files=%s  load=%s  %s\n' "$round" "$j" "$pass" "$wall" "$n" "$load" \
        "${summary#ingest run * }"
      printf '%s\t%s\t%s\t%s\t%s\n' "$j" "$pass" "$wall" "$n" "$load" >>"$results"
    done
  done
done

"$SCIRAG_VENV/bin/python" - "$results" "$what" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [line.split("\t") for line in open(sys.argv[1], encoding="utf-8").read().splitlines()]
by = defaultdict(list)
for j, p, wall, n, load in rows:
    by[(int(j), p)].append((float(wall), int(n), float(load)))
settings = sorted({j for j, _ in by})
base = statistics.median(w for w, _, _ in by[(settings[0], "first")])
print(f"\n{sys.argv[2]}; medians of {len(by[(settings[0], 'first')])} run(s) per setting")
unchanged = any(p == "unchanged" for _, p in by)
head = "| --jobs | files | wall s | files/s | speed-up |" + (" unchanged again, s |" if unchanged else "") + " load (1 min) |"
print(head)
print("|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|")
for j in settings:
    first = by[(j, "first")]
    wall = statistics.median(w for w, _, _ in first)
    n = first[0][1]
    rate = statistics.median(k / w for w, k, _ in first)
    again = (f" {statistics.median(w for w, _, _ in by[(j, 'unchanged')]):.1f} |" if unchanged else "")
    load = statistics.median(x for _, _, x in first)
    print(f"| {j} | {n} | {wall:.1f} | {rate:.3f} | {base / wall:.2f}x |{again} {load:.1f} |")
PY
