"""scripts/catalog_compare.py: the catalog equality check of the upgrade test sees each
kind of difference it is there for, names it, and changes nothing (a planted change is
rolled back). Runs against the freshly deployed test database."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "catalog_compare.py"
_spec = importlib.util.spec_from_file_location("catalog_compare", SCRIPT)
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)


def test_a_fresh_deploy_declares_the_wall_and_no_public_execute(dsn):
    lines = catalog.snapshot(dsn)
    assert lines == catalog.snapshot(dsn), "the snapshot must not depend on the call"
    functions = [x for x in lines if x.startswith("function scirag.")]
    assert len(functions) > 100
    assert not [x for x in functions if "PUBLIC=" in x], "policies/function_privileges: PUBLIC executes nothing"
    for api in ("consolidate(bigint[],jsonb)", "current_scope()", "answer(text,jsonb)", '"references"(bigint)'):
        line = next(x for x in functions if x.startswith(f"function scirag.{api}:"))
        assert "owner=scirag_api" in line and "security=definer" in line
        assert "config=search_path=pg_catalog, pg_temp" in line


@pytest.mark.parametrize(
    "plant,needle",
    [
        ("ALTER FUNCTION scirag.consolidate(bigint[], jsonb) SECURITY INVOKER", "+function scirag.consolidate("),
        ("ALTER FUNCTION scirag.scope_role() RESET search_path", "+function scirag.scope_role(): "),
        ("GRANT EXECUTE ON FUNCTION scirag.scope_role() TO PUBLIC", "PUBLIC=EXECUTE"),
        ("GRANT SELECT ON scirag.chunks TO scirag_reader", "scirag_reader=SELECT"),
        ("ALTER POLICY read_all ON scirag.presets TO scirag_reader", "+policy presets.read_all: "),
        ("ALTER TABLE scirag.chunks NO FORCE ROW LEVEL SECURITY", "+relation scirag.chunks: "),
        ("DROP INDEX scirag.chunks_tsv_gin", "-index chunks_tsv_gin"),
        ("COMMENT ON FUNCTION scirag.current_scope() IS 'changed'", "+function scirag.current_scope(): "),
    ],
)
def test_a_planted_difference_is_reported_and_rolled_back(dsn, plant, needle):
    before = catalog.snapshot(dsn)
    diff = catalog.compare(before, catalog.snapshot(dsn, plant), ("fresh", "upgraded"))
    assert any(needle in d for d in diff), diff
    changed = [d for d in diff if d[:1] in "+-" and not d.startswith(("---", "+++"))]
    assert 1 <= len(changed) <= 4, changed  # the planted object, not a cascade of noise
    assert catalog.snapshot(dsn) == before, "a plant must be rolled back"


def test_the_command_exits_1_with_a_diff_and_0_when_equal(dsn):
    same = subprocess.run([sys.executable, str(SCRIPT), dsn, dsn], capture_output=True, text=True)
    assert same.returncode == 0 and "equal" in same.stdout, same.stdout + same.stderr
    planted = subprocess.run(
        [sys.executable, str(SCRIPT), "--plant", "ALTER FUNCTION scirag.current_scope() SECURITY INVOKER", dsn, dsn],
        capture_output=True,
        text=True,
    )
    assert planted.returncode == 1
    assert "-function scirag.current_scope(): " in planted.stdout and "security=invoker" in planted.stdout
    assert "differs in 2 line(s)" in planted.stdout
