"""scripts/check_release.py: a released Sqitch change cannot be edited in place,
while a `sqitch rework` after the tag passes. Runs on a copy of the plan and scripts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path):
    """A copy of sqitch.plan, sql/ and the checker, laid out as in the repository."""
    shutil.copy(ROOT / "sqitch.plan", tmp_path / "sqitch.plan")
    shutil.copytree(ROOT / "sql", tmp_path / "sql")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check_release.py", tmp_path / "scripts" / "check_release.py")
    return tmp_path


def run(tree: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(tree / "scripts" / "check_release.py"), *args], capture_output=True, text=True
    )


def released_function(tree: Path) -> str:
    """A function change that sits before the tag and was not reworked since."""
    lines = (tree / "sqitch.plan").read_text().splitlines()
    tag_at = max(i for i, line in enumerate(lines) if line.startswith("@"))
    later = {line.split()[0] for line in lines[tag_at:] if line and not line.startswith(("@", "%", "#"))}
    for line in lines[:tag_at]:
        name = line.split()[0] if line.strip() else ""
        if name.startswith("functions/") and name not in later:
            return name
    raise AssertionError("no released function is left un-reworked to test with")


def test_repository_as_committed_passes():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_release.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unchanged" in proc.stdout


def test_editing_a_released_deploy_script_fails(tree):
    name = released_function(tree)
    script = tree / "sql" / f"{name}.sql"
    script.write_text(script.read_text() + "\n-- edited after release\n")
    proc = run(tree)
    assert proc.returncode == 1
    assert f"sql/{name}.sql was edited" in proc.stdout
    assert f"sqitch rework {name}" in proc.stdout


def test_editing_a_released_verify_script_fails(tree):
    name = released_function(tree)
    script = tree / "sql" / "verify" / f"{name}.sql"
    script.write_text("-- nothing verified any more\n")
    proc = run(tree)
    assert proc.returncode == 1 and f"sql/verify/{name}.sql was edited" in proc.stdout


def test_a_rework_after_the_tag_passes(tree):
    name = released_function(tree)
    tag = [line.split()[0] for line in (tree / "sqitch.plan").read_text().splitlines() if line.startswith("@")][-1]
    for sub in ("", "revert/", "verify/"):
        current = tree / "sql" / f"{sub}{name}.sql"
        shutil.copy(current, current.with_name(f"{Path(name).name}{tag}.sql"))
        current.write_text(current.read_text() + "\n-- the reworked version\n")
    with open(tree / "sqitch.plan", "a") as plan:
        plan.write(f"{name} [{name}{tag}] 2026-11-30T12:00:00Z t <t@example.invalid> # reworked\n")
    proc = run(tree)
    assert proc.returncode == 0, proc.stdout


def test_editing_a_released_plan_line_fails(tree):
    plan = tree / "sqitch.plan"
    text = plan.read_text()
    plan.write_text(text.replace("# group roles", "# group roles, renamed", 1))
    proc = run(tree)
    assert proc.returncode == 1 and "sqitch.plan lines up to" in proc.stdout


def test_a_new_tag_must_be_recorded(tree):
    with open(tree / "sqitch.plan", "a") as plan:
        plan.write("@v9.9 2026-11-30T12:00:00Z t <t@example.invalid> # a later release\n")
    proc = run(tree)
    assert proc.returncode == 1 and "--record" in proc.stdout
    assert run(tree, "--record").returncode == 0
    assert run(tree).returncode == 0
