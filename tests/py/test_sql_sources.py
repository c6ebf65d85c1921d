"""Source files that tell the truth (issue 28): every function script not yet released
(the changes after the newest tag in sqitch.plan) declares where it defines a function
what the reader wall would otherwise set afterwards: a reader API function (a name in
scirag.reader_wall_functions()) is SECURITY DEFINER and owned by scirag_api, and every
function pins its search_path. Released scripts are frozen; docs/releasing.md lists the
ones that relied on scirag.apply_reader_wall() and the split changes that now declare
their reader API functions; every such function's last definition in the plan declares
what the wall sets."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_release", ROOT / "scripts" / "check_release.py")
check_release = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = check_release  # its dataclass looks itself up there
_spec.loader.exec_module(check_release)

CREATE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+scirag\.(\w+|\"\w+\")\s*\((.*?)\bAS\s+\$", re.S | re.I)


def unreleased_deploy_scripts() -> list[Path]:
    entries = check_release.read_plan()
    last_tag = max(i for i, e in enumerate(entries) if e.is_tag)
    return sorted(
        {check_release.script_path(entries, i, "deploy") for i in range(last_tag + 1, len(entries))},
        key=str,
    )


def problems(text: str, wall: set[str]) -> list[str]:
    """What a deploy script leaves for the wall to set, one line per function."""
    out = []
    for m in CREATE.finditer(text):
        name, header = m.group(1).strip('"'), m.group(2)
        if not re.search(r"\bSET\s+search_path\s*=\s*pg_catalog,\s*pg_temp\b", header, re.I):
            out.append(f"scirag.{name}: no pinned search_path (SET search_path = pg_catalog, pg_temp)")
        if name not in wall:
            continue
        if not re.search(r"\bSECURITY\s+DEFINER\b", header, re.I):
            out.append(f"scirag.{name}: a reader API function, but not declared SECURITY DEFINER")
        owner = rf"ALTER\s+FUNCTION\s+scirag\.\"?{name}\"?\s*\([^;]*\)\s+OWNER\s+TO\s+scirag_api\s*;"
        if not re.search(owner, text, re.I):
            out.append(f"scirag.{name}: a reader API function, but no ALTER FUNCTION ... OWNER TO scirag_api")
    return out


@pytest.fixture(scope="module")
def wall() -> set[str]:
    """scirag.reader_wall_functions() as the plan defines it last (the deployed list is
    the sweep test's, tests/pgtap/01_rls_sweep.sql)."""
    entries = check_release.read_plan()
    body = None
    for i, e in enumerate(entries):
        if e.is_tag:
            continue
        text = check_release.script_path(entries, i, "deploy").read_text(encoding="utf-8")
        m = re.search(r"FUNCTION\s+scirag\.reader_wall_functions\(\).*?ARRAY\[(.*?)\]", text, re.S)
        body = m.group(1) if m else body
    names = set(re.findall(r"'(\w+)'", re.sub(r"--[^\n]*", "", body or "")))
    assert {"retrieve", "answer", "consolidate", "scope_documents"} <= names, names
    return names


def test_unreleased_function_scripts_declare_what_the_wall_sets(wall):
    scripts = unreleased_deploy_scripts()
    assert scripts, "no change after the newest tag"
    found = {p.relative_to(ROOT).as_posix(): problems(p.read_text(encoding="utf-8"), wall) for p in scripts}
    assert {k: v for k, v in found.items() if v} == {}
    defined = {m.group(1).strip('"') for p in scripts for m in CREATE.finditer(p.read_text(encoding="utf-8"))}
    assert {"consolidate", "current_scope", "references", "mmr_select"} <= defined & wall  # the check saw them


def test_a_planted_invoker_or_unpinned_function_is_named(wall):
    text = (ROOT / "sql" / "functions" / "consolidate_main.sql").read_text(encoding="utf-8")
    assert problems(text, wall) == []
    planted = text.replace(
        "LANGUAGE sql STABLE\nSECURITY DEFINER\nSET search_path = pg_catalog, pg_temp\nAS $$\n  SELECT (row_number()",
        "LANGUAGE sql STABLE\nAS $$\n  SELECT (row_number()",
    )
    assert planted != text
    assert problems(planted, wall) == [
        "scirag.consolidate: no pinned search_path (SET search_path = pg_catalog, pg_temp)",
        "scirag.consolidate: a reader API function, but not declared SECURITY DEFINER",
    ]
    unowned = re.sub(r"ALTER FUNCTION scirag\.consolidate\(bigint\[\], jsonb\) OWNER TO scirag_api;\n", "", text)
    assert problems(unowned, wall) == [
        "scirag.consolidate: a reader API function, but no ALTER FUNCTION ... OWNER TO scirag_api"
    ]


def wall_left_to_the_wall(entries, wall: set[str]) -> dict[str, str]:
    """Reader API functions whose LAST definition in the plan (their home) does not
    declare what the wall sets, with that script's path."""
    home: dict[str, tuple[str, list[str]]] = {}
    for i, e in enumerate(entries):
        if e.is_tag:
            continue
        path = check_release.script_path(entries, i, "deploy")
        text = path.read_text(encoding="utf-8")
        for m in CREATE.finditer(text):
            name = m.group(1).strip('"')
            home[name] = (
                path.relative_to(ROOT).as_posix(),
                [x for x in problems(text, wall) if x.startswith(f"scirag.{name}:")],
            )
    return {n: home[n][0] for n in sorted(wall) if n in home and home[n][1]}


def test_every_reader_api_function_is_defined_last_by_a_script_that_declares_the_wall(wall):
    entries = check_release.read_plan()
    assert wall_left_to_the_wall(entries, wall) == {}
    # without the split change that re-declares them, answer.sql (released, saying
    # SECURITY INVOKER) is answer's and answer_text's home again, and both are named
    without = [e for e in entries if e.name != "functions/answer_main"]
    assert wall_left_to_the_wall(without, wall) == {
        "answer": "sql/functions/answer.sql",
        "answer_text": "sql/functions/answer.sql",
    }


# The name of a design document the repository does not hold, assembled so that this
# file, which looks for citations of it, does not itself read as one.
OUTSIDE_DOC = "DESIGN" + ".md"


def design_citations(text: str) -> list[str]:
    """Lines that cite OUTSIDE_DOC, a document the repository does not hold."""
    return [line.strip() for line in text.splitlines() if OUTSIDE_DOC in line]


def test_no_unreleased_script_cites_a_document_the_repository_does_not_hold():
    """Released scripts are frozen byte for byte (scripts/check_release.py), and 23 of
    their comment lines name sections of the design brief the project started from;
    docs/releasing.md maps them to the project's pages. Every script of a change after
    the newest tag is current code and must stand alone."""
    entries = check_release.read_plan()
    last_tag = max(i for i, e in enumerate(entries) if e.is_tag)
    paths = {
        check_release.script_path(entries, i, kind)
        for i in range(last_tag + 1, len(entries))
        for kind in ("deploy", "revert", "verify")
    }
    found = {
        p.relative_to(ROOT).as_posix(): design_citations(p.read_text(encoding="utf-8")) for p in paths if p.exists()
    }
    assert {k: v for k, v in found.items() if v} == {}
    assert "sql/functions/kw_top_sql.sql" in found  # the check read the split copies
    planted = (
        (ROOT / "sql/functions/kw_top_sql.sql")
        .read_text(encoding="utf-8")
        .replace("(a rule of the layers:", f"({OUTSIDE_DOC} section 2:")
    )
    assert design_citations(planted) == [
        f"-- out of reach ({OUTSIDE_DOC} section 2: every layer that needs no model retrieves"
    ]
