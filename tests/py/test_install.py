"""A non-editable install works (issue 16): the wheel built from pyproject.toml holds
every module of the source tree, and from a throwaway virtualenv that sees only the
installed copy (never python/ of the checkout) every module imports and `scirag
--help` lists every command. Offline: the pinned setuptools of .venv builds the
wheel (no build isolation), pip installs it with --no-deps --no-index, and the
dependencies come from .venv's site-packages through a .pth line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT

VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
SOURCE_ROOTS = {
    "scirag": ROOT / "python" / "loader" / "scirag",
    "scirag_helpers": ROOT / "python" / "plpy_helpers" / "scirag_helpers",
}
# Run inside the throwaway venv: import every module of the installed packages, say where each came from.
PROBE = r"""
import importlib, json, pkgutil, sys
out = {"sys_path": sys.path, "modules": {}, "errors": {}}
for top in ("scirag", "scirag_helpers"):
    pkg = importlib.import_module(top)
    out["modules"][top] = pkg.__file__
    for m in pkgutil.walk_packages(pkg.__path__, top + "."):
        try:
            out["modules"][m.name] = importlib.import_module(m.name).__file__
        except Exception as exc:
            out["errors"][m.name] = repr(exc)
print(json.dumps(out))
"""


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


def source_modules() -> set[str]:
    """Every module a source checkout has, by file: what the wheel must hold."""
    names = set()
    for top, folder in SOURCE_ROOTS.items():
        for path in folder.rglob("*.py"):
            parts = [top, *path.relative_to(folder).with_suffix("").parts]
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, clean environment, work folder, what PROBE found) of a fresh venv with
    the wheel installed non-editable."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"  # a copy: building never writes build/ or egg-info into the checkout
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "python", src / "python", ignore=shutil.ignore_patterns("__pycache__"))
    run(
        [
            VENV_PYTHON,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            tmp / "dist",
            src,
        ]
    )
    [wheel] = (tmp / "dist").glob("scirag-*.whl")
    venv = tmp / "venv"
    run([VENV_PYTHON, "-m", "venv", "--without-pip", venv])
    purelib = Path(
        subprocess.run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # the dependencies, after the venv's own site-packages (so its scirag wins); .pth files
    # inside .venv (its editable-install finder) are not run for a path added this way
    (purelib / "zz_scirag_deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    run(
        [
            VENV_PYTHON,
            "-m",
            "pip",
            "--python",
            venv / "bin" / "python",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-index",
            wheel,
        ]
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["COLUMNS"] = "200"
    probe = json.loads(run([venv / "bin" / "python", "-c", PROBE], env=env, cwd=tmp).stdout)
    return venv, env, tmp, probe


def test_the_wheel_holds_every_module_of_the_source_tree(installed):
    venv, env, tmp, found = installed
    assert found["errors"] == {}
    assert set(found["modules"]) == source_modules()
    static = {p.name for p in (SOURCE_ROOTS["scirag"] / "server" / "static").iterdir()}
    installed_static = Path(found["modules"]["scirag.server"]).parent / "static"
    assert {p.name for p in installed_static.iterdir()} == static


def test_every_module_comes_from_the_installed_copy_not_the_checkout(installed):
    venv, env, tmp, found = installed
    assert not [p for p in found["sys_path"] if p.startswith(str(ROOT / "python"))]
    outside = {name: f for name, f in found["modules"].items() if not f.startswith(str(venv))}
    assert outside == {}


def test_installed_scirag_help_lists_every_command(installed):
    from scirag.cli import COMMANDS, GROUPS

    venv, env, tmp, _ = installed
    exe = venv / "bin" / "scirag"
    assert exe.read_text(encoding="utf-8").startswith(f"#!{venv}/bin/python")
    top = run([exe, "--help"], env=env, cwd=tmp).stdout
    for name in [n for n, _ in COMMANDS] + [g for g, _, _ in GROUPS]:
        assert re.search(rf"^\s+{name}\s", top, flags=re.M), f"scirag --help does not list {name}"
    for group, _, commands in GROUPS:
        out = run([exe, group, "--help"], env=env, cwd=tmp).stdout
        for name, _ in commands:
            assert re.search(rf"^\s+{name}\s", out, flags=re.M), f"scirag {group} --help does not list {name}"
    where = run([venv / "bin" / "python", "-c", "import scirag.cli; print(scirag.cli.__file__)"], env=env, cwd=tmp)
    assert where.stdout.strip().startswith(str(venv)) and sys.prefix not in where.stdout


def test_installed_copy_finds_the_project_through_scirag_root(installed):
    """Installed outside the checkout, scirag finds sqitch.plan and sql/ through SCIRAG_ROOT
    (scripts/env.sh exports it) and without it says what to set."""
    venv, env, tmp, _ = installed
    probe = "from scirag import db; print(db.plan_file())"
    env = {k: v for k, v in env.items() if k != "SCIRAG_ROOT"}
    found = run([venv / "bin" / "python", "-c", probe], env={**env, "SCIRAG_ROOT": str(ROOT)}, cwd=tmp)
    assert found.stdout.strip() == str(ROOT / "sqitch.plan")
    lost = subprocess.run([venv / "bin" / "python", "-c", probe], env=env, cwd=tmp, capture_output=True, text=True)
    assert lost.returncode == 1 and "set SCIRAG_ROOT to the scirag checkout" in lost.stderr
