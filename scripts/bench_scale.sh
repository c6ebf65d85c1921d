#!/usr/bin/env bash
# Retrieval at scale (issue 12): builds (once) a corpus of --chunks N from SciFact and
# prints reader latency per layer, 8-client throughput/p99/errors, build time and disk
# per chunk. Needs the SciFact benchmark database (scirag eval beir ../shared/data/scifact).
# See scripts/bench_scale.py --help.
set -euo pipefail
source "$(dirname "$0")/env.sh"
exec "$SCIRAG_VENV/bin/python" "$SCIRAG_ROOT/scripts/bench_scale.py" "$@"
