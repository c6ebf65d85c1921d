#!/usr/bin/env bash
# Split test (docs/releasing.md, "One object per change"): a split change moves a
# function out of a large change into a change of its own WITHOUT changing it, and its
# revert does nothing. Both only hold if the catalog is the same before the split
# changes, after them, and after reverting them. For every run of consecutive changes
# after the newest tag whose plan note starts with "split (", this deploys a database up
# to the change before the run, snapshots its catalog (scripts/catalog_compare.py),
# deploys the run, snapshots again, reverts the run, snapshots a third time, and fails
# with the diff when any two differ (one named exception: comment-only lines in the
# bodies of COMMENT_EDITS, below). Called by scripts/test.sh on a full run (after
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
# Split copies whose body differs from the original in comment lines only, on purpose:
# the original (a released script, frozen) cites a design document the repository does
# not hold, and the copy is where the function is defined now. For these the catalog is
# also compared with comment-only lines left out of every definition, and must be equal
# there; any other difference still fails.
COMMENT_EDITS = {
    "scirag.kw_top_sql(text[],double precision[],double precision,double precision,double precision,"
    "integer,tsquery,tsquery,boolean)": "functions/kw_top_sql: its comment cited a design document outside the repository",
    "scirag.trace_error(text,text,text,text,double precision)": "functions/retrieve_trace: its comment cited a design document outside the repository",
}


def comment_edits_only(diff, diff_without_comment_lines):
    """True when the only differences are definitions of COMMENT_EDITS functions, and
    those vanish once comment-only lines are left out."""
    changed = [d[1:] for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]
    named = [c for c in changed if c.startswith("function ") and c[9:].split(":", 1)[0] in COMMENT_EDITS]
    return not diff_without_comment_lines and len(named) == len(changed)

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
    before, before_nc = catalog.snapshot(dsn), catalog.snapshot(dsn, comment_lines=False)
    db.sqitch("deploy", dsn, "--to", last, "--set", f"dim={db.EMBED_DIM}")
    if plant:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(plant)
    after, after_nc = catalog.snapshot(dsn), catalog.snapshot(dsn, comment_lines=False)
    db.sqitch("revert", dsn, "-y", "--to", target)
    reverted, reverted_nc = catalog.snapshot(dsn), catalog.snapshot(dsn, comment_lines=False)
    what = f"{first} .. {last} ({len(run)} change(s), after {before_name})"
    allowed = []
    for label, got, got_nc in (("deployed", after, after_nc), ("reverted", reverted, reverted_nc)):
        diff = catalog.compare(before, got, ("before the split", f"split {label}"))
        if diff and comment_edits_only(diff, catalog.compare(before_nc, got_nc, ("", ""))):
            allowed += [d[10:].split(":", 1)[0] for d in diff if d.startswith("+function ")]
        elif diff:
            failed = True
            print("\n".join(diff))
            print(f"split test: {what}: the catalog {label} differs from the one before it (diff above)")
    if not failed:
        but = f", but for comment lines of {', '.join(sorted(set(allowed)))} (COMMENT_EDITS)" if allowed else ""
        print(f"split test: {what}: catalog equal before, after and reverted ({len(before)} lines){but}")
db.drop_db(dsn)
sys.exit(1 if failed else 0)
PY
