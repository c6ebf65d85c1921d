#!/usr/bin/env bash
# Upgrade test: a user's database deployed at the last release and filled by that
# release's loader with the demo corpus is upgraded to HEAD by `scirag db init`; it
# must verify, still answer the demo question as a reader, and then pass the pgTAP
# suites like a fresh database; its catalog must equal a fresh deploy of HEAD
# (scripts/catalog_compare.py). Called by scripts/test.sh (after setup). Idempotent:
# the database is rebuilt each run. Needs the git history that holds the release.
set -euo pipefail
source "$(dirname "$0")/env.sh"
DB="${SCIRAG_UPGRADE_DB:-scirag_upgrade}"
dsn="$(scirag_dsn "$DB")"
tag="$(grep '^@' "$SCIRAG_ROOT/sqitch.plan" | tail -1 | cut -d' ' -f1)"
# The release's own loader: HEAD's may write columns that the release does not have.
# (In a shallow clone the oldest commit at hand would seem to add the tag: fetch the history.)
if [ "$(git -C "$SCIRAG_ROOT" rev-parse --is-shallow-repository)" = true ]; then
  git -C "$SCIRAG_ROOT" fetch -q --unshallow || die "upgrade test: a shallow clone, and its history could not be fetched"
fi
release="$(git -C "$SCIRAG_ROOT" log --format=%H -S"$tag " -- sqitch.plan | tail -1)"
[ -n "$release" ] || die "upgrade test: no commit adds $tag to sqitch.plan (is this a shallow clone? git fetch --unshallow)"
last="$(git -C "$SCIRAG_ROOT" show "$release:sqitch.plan" | grep -v '^[[:space:]]*$' | tail -1 | cut -d' ' -f1)"
[ "$last" = "$tag" ] || die "upgrade test: commit ${release:0:10} adds $tag but also changes after it: release commits hold the tag last"
old="$(mktemp -d)"
trap 'rm -rf "$old"' EXIT
git -C "$SCIRAG_ROOT" archive "$release" python domain | tar -x -C "$old"
log "upgrade test: deploy $tag into $DB, load the demo with the loader of ${release:0:10}, upgrade to HEAD"

"$SCIRAG_VENV/bin/python" - "$dsn" "$tag" <<'PY'
import sys
import psycopg
from scirag import db

dsn, tag = sys.argv[1:]
db.drop_db(dsn)
with psycopg.connect(db.with_dbname(dsn, "postgres"), autocommit=True) as admin:
    admin.execute(f'CREATE DATABASE "{db.conninfo_to_dict(dsn)["dbname"]}"')
# the released schema, exactly as a user who installed it has it
db.sqitch("deploy", dsn, "--to", tag, "--set", f"dim={db.EMBED_DIM}")
with psycopg.connect(dsn, autocommit=True) as conn:
    conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'python_path'", (db.python_path(),))
    conn.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA scirag FROM PUBLIC")
PY

PYTHONPATH="$old/python/loader:$old/python/plpy_helpers" "$SCIRAG_VENV/bin/python" - "$dsn" "$old" <<'PY'
import sys
from pathlib import Path
import scirag
from scirag import db
from scirag.ingest import Ingester, ingest_manifest

dsn, old = sys.argv[1:]
assert scirag.__file__.startswith(old), f"the release loader was not imported: {scirag.__file__}"
with db.connect(dsn, role=db.LOADER_ROLE) as conn:
    counts = ingest_manifest(conn, Path(old) / "domain" / "demo" / "manifest.jsonl", Ingester(conn))
assert counts["added"] >= 8, f"the release loader stored too little: {counts}"
PY

"$SCIRAG_VENV/bin/python" - "$dsn" "$tag" <<'PY'
import sys
import psycopg
from scirag import db

dsn, tag = sys.argv[1:]
applied = db.init_db(dsn)          # the upgrade a user runs
after_tag = db.plan_head().split(" + ")[1]
assert after_tag.startswith("0 ") or applied, f"upgrade from {tag} deployed nothing, but HEAD is {tag} + {after_tag}"
assert db.init_db(dsn) == [], "a second upgrade deployed changes again"
db.sqitch("verify", dsn)
question = "How much straw could Harlan County supply each year?"
with db.connect(dsn, role=db.READER_ROLE, autocommit=True) as reader:
    rows = reader.execute("SELECT title FROM scirag.retrieve(%s, k => 5)", (question,)).fetchall()
    assert rows, "the upgraded database returns no evidence for the demo question"
    answer = reader.execute("SELECT scirag.answer(%s)", (question,)).fetchone()[0]
    assert answer.get("citations"), f"the upgraded database answers without citations: {answer}"
print(f"upgrade {tag} -> HEAD: {len(applied)} change(s) deployed; {len(rows)} evidence rows, "
      f"{len(answer['citations'])} citation(s)")
# The pgTAP suites build their own fixtures in an empty corpus.
with psycopg.connect(dsn, autocommit=True) as conn:
    conn.execute("DELETE FROM scirag.documents")
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
PY

# Catalog equality (as pgai does): the upgraded schema must be the one a fresh deploy of
# HEAD builds, function by function (body, owner, SECURITY DEFINER, search_path,
# privileges), table by table (policies, indexes, grants). A difference fails with a diff.
fresh="$(scirag_dsn "${DB}_fresh")"
log "catalog of the upgraded database against a fresh deploy of HEAD (${DB}_fresh)"
"$SCIRAG_VENV/bin/python" - "$fresh" <<'PY'
import sys
from scirag import db

db.drop_db(sys.argv[1])
db.init_db(sys.argv[1])
PY
"$SCIRAG_VENV/bin/python" "$SCIRAG_ROOT/scripts/catalog_compare.py" "$fresh" "$dsn" \
  || die "upgrade test: the upgraded catalog differs from a fresh deploy of HEAD (diff above: - fresh, + upgraded)"
# ... and the comparison sees a difference: one function left SECURITY INVOKER on the
# upgraded side (in a transaction rolled back after the snapshot) must be reported.
planted="$("$SCIRAG_VENV/bin/python" "$SCIRAG_ROOT/scripts/catalog_compare.py" \
  --plant "ALTER FUNCTION scirag.current_scope() SECURITY INVOKER" "$fresh" "$dsn")" \
  && die "upgrade test: catalog_compare reported no difference for a planted SECURITY INVOKER"
grep -q '^+function scirag.current_scope(): .*security=invoker' <<<"$planted" \
  || die "upgrade test: catalog_compare did not name the planted difference: $planted"
"$SCIRAG_VENV/bin/python" -c 'import sys; from scirag import db; db.drop_db(sys.argv[1])' "$fresh"

log "pgTAP suites on the upgraded database"
"$SCIRAG_ROOT/scripts/pgtap.sh" "$dsn"
