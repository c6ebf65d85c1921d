#!/usr/bin/env bash
# The main job on the embedded default: set up, load the bundled demo corpus, ask
# the sample question, print ranked evidence with citations and the cited answer.
# Idempotent (documents already loaded are reported as duplicates).
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$SCIRAG_ROOT/scripts/setup.sh"
export SCIRAG_DSN="${SCIRAG_DSN:-$(scirag_dsn)}"
"$SCIRAG_VENV/bin/scirag" ingest "$SCIRAG_ROOT/domain/demo/manifest.jsonl"
question="${1:-$("$SCIRAG_VENV/bin/python" -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["sample_question"])' "$SCIRAG_ROOT/domain/questions.yaml")}"
echo
"$SCIRAG_VENV/bin/scirag" retrieve "$question" -k 5
echo
"$SCIRAG_VENV/bin/scirag" ask "$question"
