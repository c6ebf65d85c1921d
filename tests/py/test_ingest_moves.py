"""scripts/loader_moves.py: imports written against the flat loader (before issue 28's
move into ingest/, evaluation/ and upkeep/) are rewritten to the new modules."""

from __future__ import annotations

import importlib
import importlib.util
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import loader_moves


def test_every_moved_module_is_there_and_every_old_one_gone():
    for old, new in loader_moves.MOVES.items():
        importlib.import_module(f"scirag.{new}")
        if old not in ("ingest", "evaluation"):  # those two names are packages now
            assert importlib.util.find_spec(f"scirag.{old}") is None, old
    for (_module, name), home in loader_moves.NAMES_MOVED.items():
        assert hasattr(importlib.import_module(f"scirag.{home}"), name)


def test_old_imports_are_rewritten_and_new_ones_left_alone():
    old = "\n".join(
        [
            "from scirag.parse import parse_file, pdf_engine_name  # noqa: E402",
            "from scirag import db, evalqa, report",
            "    from scirag.ingest import Ingester, ingest_manifest",
            "import scirag.pdf_layout as layout",
            "from scirag.evaluation import start_run",
            'x = "scirag.licenses"',
        ]
    )
    assert loader_moves.rewrite(old).split("\n") == [
        "from scirag.ingest.parse import parse_file  # noqa: E402",
        "from scirag.ingest.pdf.engines import pdf_engine_name  # noqa: E402",
        "from scirag import db",
        "from scirag.evaluation import qa as evalqa",
        "from scirag.evaluation import report",
        "    from scirag.ingest.pipeline import Ingester, ingest_manifest",
        "import scirag.ingest.pdf.layout as layout",
        "from scirag.evaluation.runs import start_run",
        'x = "scirag.licenses"',  # a setting's name, not an import
    ]
    new = "from scirag.ingest import parse, pipeline\nfrom scirag.evaluation import qa as evalqa\nimport scirag.ingest"
    assert loader_moves.rewrite(new) == new
    # the repository itself imports nothing by an old path
    for folder in ("python", "scripts", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert loader_moves.rewrite(text) == text, path
