#!/usr/bin/env python3
"""Rewrites imports of the loader modules that moved into packages (issue 28, docs/loader.md).

Work written against the flat layout (``from scirag.parse import parse_file``,
``from scirag import evalqa``) imports modules that are no longer there. This rewrites
the import statements of the given files or folders to the new paths, and nothing else
(no string, no comment):

    scripts/loader_moves.py tests scripts python        # list what would change
    scripts/loader_moves.py --write tests/py/test_x.py  # change it

Standard library only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# old module under scirag -> new dotted module under scirag
MOVES = {
    "blocks": "ingest.blocks",
    "parse": "ingest.parse",
    "parse_guard": "ingest.parse_guard",
    "chunk": "ingest.chunk",
    "ingest": "ingest.pipeline",
    "manifest": "ingest.manifest",
    "licenses": "ingest.licenses",
    "discover": "ingest.discover",
    "pdf_layout": "ingest.pdf.layout",
    "pdf_repair": "ingest.pdf.repair",
    "pdfmeta": "ingest.pdf.meta",
    "evaluation": "evaluation.runs",
    "evalqa": "evaluation.qa",
    "evalpdf": "evaluation.pdf",
    "metrics": "evaluation.metrics",
    "report": "evaluation.report",
    "beir": "evaluation.beir",
    "scitab": "evaluation.scitab",
    "qasper": "evaluation.qasper",
    "qasper_data": "evaluation.qasper_data",
    "pubmedqa": "evaluation.pubmedqa",
    "doctor": "upkeep.doctor",
    "gc": "upkeep.gc",
    "enrich": "upkeep.enrich",
    "maint": "upkeep.maint",
}
# names that left a module for another one in the same move
NAMES_MOVED = {
    ("ingest.parse", "PDF_ENGINE_ENV"): "ingest.pdf.engines",
    ("ingest.parse", "DEFAULT_PDF_ENGINE"): "ingest.pdf.engines",
    ("ingest.parse", "pdf_engine_name"): "ingest.pdf.engines",
    ("ingest.parse", "pdf_engines"): "ingest.pdf.engines",
}
_ALT = "|".join(sorted(map(re.escape, MOVES), key=len, reverse=True))
_DOTTED = re.compile(rf"^(\s*(?:from|import)\s+)scirag\.({_ALT})(?![\w.])")
_FROM_PKG = re.compile(r"^(\s*)from scirag import ([\w, ]+?)(\s*#.*)?$")
_FROM_MOD = re.compile(r"^(\s*)from scirag\.([\w.]+) import ([\w, ]+?)(\s*#.*)?$")


def _split_names(indent: str, module: str, names: str, comment: str) -> list[str]:
    """from scirag.MODULE import NAMES, with the names that moved elsewhere on lines of their own."""
    groups: dict[str, list[str]] = {}
    for name in (n.strip() for n in names.split(",")):
        groups.setdefault(NAMES_MOVED.get((module, name.split(" as ")[0]), module), []).append(name)
    return [f"{indent}from scirag.{m} import {', '.join(ns)}{comment}" for m, ns in groups.items()]


# the two old modules whose names are packages now: importing their submodules (those
# the move made, and any added to the package since) is new code
LOADER = Path(__file__).resolve().parents[1] / "python" / "loader" / "scirag"
PACKAGES = {
    old: {new.split(".")[1] for new in MOVES.values() if new.startswith(old + ".")}
    | {"pdf"}
    | {p.stem for p in (LOADER / old).glob("*.py") if p.stem != "__init__"}
    for old in ("ingest", "evaluation")
}


def _already_new(line: str, old: str) -> bool:
    """`from scirag.ingest import parse, pipeline` names the new package's submodules."""
    f = _FROM_MOD.match(line)
    return (
        old in PACKAGES
        and f is not None
        and all(n.split(" as ")[0].strip() in PACKAGES[old] for n in f.group(3).split(","))
    )


def rewrite_line(line: str) -> str:
    """The line with its import of a moved module rewritten (several lines for a split import)."""
    m = _DOTTED.match(line)
    if m and not _already_new(line, m.group(2)) and not re.match(r"\s*import scirag\.(ingest|evaluation)\s*$", line):
        line = m.group(1) + "scirag." + MOVES[m.group(2)] + line[m.end() :]
        f = _FROM_MOD.match(line)
        return "\n".join(_split_names(f.group(1), f.group(2), f.group(3), f.group(4) or "")) if f else line
    m = _FROM_PKG.match(line)
    if not m:
        return line
    indent, comment = m.group(1), m.group(3) or ""
    names = [n.strip() for n in m.group(2).split(",")]
    stay = [n for n in names if n.split(" as ")[0] not in MOVES]
    out = [f"{indent}from scirag import {', '.join(stay)}{comment}"] if stay else []
    for n in (n for n in names if n not in stay):
        old, _, alias = n.partition(" as ")
        package, module = ("scirag." + MOVES[old]).rsplit(".", 1)
        alias = alias or (old if module != old else "")
        out.append(f"{indent}from {package} import {module}{f' as {alias}' if alias else ''}{comment}")
    return "\n".join(out)


def rewrite(text: str) -> str:
    return "\n".join(rewrite_line(line) for line in text.split("\n"))


def main(argv: list[str]) -> int:
    write = "--write" in argv
    paths = [Path(a) for a in argv if a != "--write"]
    if not paths:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.py")))]
    changed = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            changed += 1
            print(f"{'rewrote' if write else 'would rewrite'} {f}")
            if write:
                f.write_text(new, encoding="utf-8")
    print(f"{changed} file(s) {'changed' if write else 'to change'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
