#!/usr/bin/env bash
# Opt-in, training only: creates .venv-train with PyTorch (CPU) and the exporters the
# model trainers need (requirements-train.txt). The default path (README commands,
# the server, PL/Python) never needs it. Idempotent: skipped when the file is unchanged.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$SCIRAG_ROOT"
train_venv="$SCIRAG_ROOT/.venv-train"
stamp="$train_venv/.scirag-stamp"
want="$(sha256sum requirements-train.txt | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
log "installing the training environment in $train_venv (about 1 minute)"
[ -x "$train_venv/bin/python" ] || python3 -m venv "$train_venv"
"$train_venv/bin/python" -m pip -q --disable-pip-version-check install -r requirements-train.txt
echo "$want" > "$stamp"
