#!/usr/bin/env bash
# Split test (docs/releasing.md, "One object per change"): a split change moves a
# function out of a large change into a change of its own WITHOUT changing it, and its
# revert does nothing. Both only hold if the catalog is the same before the split
# changes, after them, and after reverting them. For every run of consecutive changes
# after the newest tag whose plan note starts with "split (", this deploys a database up
# to the change before the run, snapshots its catalog (scripts/catalog_compare.py),
# deploys the run, snapshots again, reverts the run, snapshots a third time, and fails
# with the diff when any two differ. Called by scripts/test.sh on a full run (after
# setup). Idempotent: the database is rebuilt each run.
#
#   scripts/test_split.sh                # every run of split changes after the newest tag
#   scripts/test_split.sh --plant SQL    # run SQL after deploying the run (the check must fail)
set -euo pipefail
source "$(dirname "$0")/env.sh"
DB="${SCIRAG_SPLIT_DB:-scirag_split}"
"$SCIRAG_VENV/bin/python" - "$(scirag_dsn "$DB")" "$SCIRAG_ROOT" "$@" <<'PY'
import importlib.util
import sys
from pathlib import Path

import psycopg
from scirag import db

dsn, root, *args = sys.argv[1:]
plant = args[1] if args[:1] == ["--plant"] else None


def load(name):
    spec = importlib.util.spec_from_file_location(name, Path(root) / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # check_release's dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


check_release, catalog = load("check_release"), load("catalog_compare")
entries = check_release.read_plan()
last_tag = max((i for i, e in enumerate(entries) if e.is_tag), default=-1)
runs, current = [], []
for i in range(last_tag + 1, len(entries)):
    note = entries[i].line.split(" # ", 1)[1] if " # " in entries[i].line else ""
    if not entries[i].is_tag and note.startswith("split ("):
        current.append(i)
    elif current:
        runs.append(current)
        current = []
if current:
    runs.append(current)
if not runs:
    print("split test: no split change after the newest tag")
    sys.exit(0)

db.drop_db(dsn)
with psycopg.connect(db.with_dbname(dsn, "postgres"), autocommit=True) as admin:
    admin.execute(f'CREATE DATABASE "{db.conninfo_to_dict(dsn)["dbname"]}"')
failed = False
for run in runs:
    # the change before the run, by name and (a reworked name occurs more than once) as its latest instance
    before_name = entries[run[0] - 1].name
    first, last = entries[run[0]].name, entries[run[-1]].name
    target = f"{first}^"
    db.sqitch("deploy", dsn, "--to", target, "--set", f"dim={db.EMBED_DIM}")
    before = catalog.snapshot(dsn)
    db.sqitch("deploy", dsn, "--to", last, "--set", f"dim={db.EMBED_DIM}")
    if plant:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(plant)
    after = catalog.snapshot(dsn)
    db.sqitch("revert", dsn, "-y", "--to", target)
    reverted = catalog.snapshot(dsn)
    what = f"{first} .. {last} ({len(run)} change(s), after {before_name})"
    for label, got in (("deployed", after), ("reverted", reverted)):
        diff = catalog.compare(before, got, ("before the split", f"split {label}"))
        if diff:
            failed = True
            print("\n".join(diff))
            print(f"split test: {what}: the catalog {label} differs from the one before it (diff above)")
    if not failed:
        print(f"split test: {what}: catalog equal before, after and reverted ({len(before)} lines)")
db.drop_db(dsn)
sys.exit(1 if failed else 0)
PY
