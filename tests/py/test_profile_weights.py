"""The fusion weights live in one place, the retrieval profile rows (issue 16): the
docs/retrieval.md quotes them, and this test holds that quote to a freshly deployed database."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "docs" / "retrieval.md"
LAYERS = ["vector", "keyword", "graph", "community", "hyde"]


def readme_weights() -> dict[str, tuple[str, list[float]]]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- profile-weights:begin -->\n(.*?)<!-- profile-weights:end -->", text, re.S)
    assert block, "README lacks the profile-weights table"
    rows = [line.strip("|").split("|") for line in block.group(1).splitlines() if line.startswith("| ")]
    header = [c.strip() for c in rows[0]]
    assert header == ["profile", "fusion", *LAYERS], header
    return {r[0].strip(): (r[1].strip(), [float(c) for c in r[2:]]) for r in rows[1:]}


def test_readme_quotes_the_profile_rows(admin_conn):
    rows = admin_conn.execute(
        "SELECT name, config->>'fusion', config->'weights' FROM scirag.retrieval_profiles"
    ).fetchall()
    deployed = {name: (fusion, [float(w[layer]) for layer in LAYERS]) for name, fusion, w in rows}
    assert readme_weights() == deployed


def test_no_function_keeps_weights_of_its_own(admin_conn):
    # the released default_*_weights() functions were a second copy that could disagree
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM pg_proc WHERE pronamespace = 'scirag'::regnamespace "
            "AND (proname LIKE '%weights%' AND proname <> 'fusion_weights' "
            "     OR (proname IN ('fuse_rrf', 'fuse_scores') AND pronargdefaults > 0))"
        ).fetchone()[0]
        == 0
    )
