"""One stop-word list and one word normaliser (scirag_helpers.words), shared by the
answerer, the supports check, HyDE, the answer-form features, graph resolution and
the reranker's training data (issue 28 item 3)."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import pytest

from scirag_helpers import answer, answer_forms, checks, hyde, words

ROOT = Path(__file__).resolve().parents[2]

# The lists as they were when each part was tuned or trained (sha256 of the sorted
# words joined by one blank). A change to one of them changes behaviour that was
# measured: the answer-form model (models/answer_forms.json) must be retrained, the
# papers' answer figures and the HyDE probe re-measured. Change the pin with them.
PINNED = {
    "STOP": (227, "9492b92cdc83d005"),
    "SUPPORT_STOP": (104, "8c5e74b6bb183070"),
    "PROBE_STOP": (130, "2d01697f7d252758"),
    "FORM_STOP": (48, "8d1ce168884bf732"),
    "BM25_STOP": (27, "6f6d9339ec763aa6"),
    "ENTITY_STOP": (4, "d92ded942f93a0fd"),
}


def _digest(s: frozenset) -> str:
    return hashlib.sha256(" ".join(sorted(s)).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_lists_are_the_ones_measured(name):
    s = getattr(words, name)
    assert (len(s), _digest(s)) == PINNED[name]


def test_the_pin_notices_one_word():
    assert _digest(words.FORM_STOP | {"such"}) != PINNED["FORM_STOP"][1]
    assert _digest(words.FORM_STOP - {"the"}) != PINNED["FORM_STOP"][1]


def test_named_sub_lists_are_stop_plus_named_extras():
    assert words.SUPPORT_STOP - words.STOP == words.SUPPORT_EXTRA
    assert words.PROBE_STOP - words.STOP == words.PROBE_EXTRA
    for s in (words.FORM_STOP, words.BM25_STOP, words.ENTITY_STOP):
        assert s <= words.STOP
    with pytest.raises(ValueError, match="not in scirag_helpers.words.STOP: \\['qubit'\\]"):
        words._within("the qubit")


def test_every_part_uses_the_shared_objects():
    from scirag.graph import resolve

    assert answer.STOP is words.STOP and answer.terms is words.terms
    assert checks.SUPPORT_STOP is words.SUPPORT_STOP and checks.normalize_number is words.normalize_number
    assert hyde.terms is words.probe_terms
    assert answer_forms._STOP is words.FORM_STOP
    assert resolve.norm is words.entity_name
    spec = importlib.util.spec_from_file_location("_reranker_data_t", ROOT / "scripts" / "reranker_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod._STOP == words.BM25_STOP
    assert mod.terms("The tagger of the corpus") == ["tagger", "corpus"]


def test_no_other_stop_list_in_the_code():
    """A sixth list is the drift this module ends: a stop-word set is defined here only."""
    pattern = re.compile(r"^\s*_?[A-Z_]*STOP[A-Z_]* = (frozenset\(|set\(|\{)", re.M)
    found = []
    for folder in ("python", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "words.py" and path.parent.name == "scirag_helpers":
                continue
            if pattern.search(path.read_text(encoding="utf-8")):
                found.append(str(path.relative_to(ROOT)))
    assert found == []
    for planted in ('_STOP = frozenset(\n    """a an the""".split()\n)', 'STOP = {"the", "a"}', "    MY_STOP = set(x)"):
        assert pattern.search(planted), planted
    assert pattern.search("_STOP = FORM_STOP") is None


def test_form_features_see_the_trained_list():
    toks = answer_forms.tokens("We use the SQuAD dataset of questions .")
    in_q = [t.lower() in ("squad", "dataset") for t in toks]
    f = answer_forms.span_features("list", toks, in_q, 2, 5, 0, 1.0, 1.0)  # "the SQuAD dataset"
    assert f["edge_stop"] == 1.0 and f["frac_stop"] == pytest.approx(1 / 3)
    f = answer_forms.span_features("list", toks, in_q, 3, 5, 0, 1.0, 1.0)  # "SQuAD dataset"
    assert f["edge_stop"] == 0.0 and f["frac_stop"] == 0.0 and f["frac_q"] == 1.0


def test_normalisers():
    assert words.terms("The prices of maize fell in 2020", with_numbers=True) == ["cost", "corn", "decrea", "#2020"]
    assert words.support_terms("Table 2 shows the accuracy of BERT-large") == {"accur", "bert", "large"}
    assert words.support_terms("the row shows accuracies") == {"accur"}
    assert words.probe_terms("Based on the state-of-the-art BERT, ours is better") == [
        "state-of-the-art",
        "bert",
        "better",
    ]
    assert words.entity_name("The Transformers (Vaswani et al.)") == "transformer"
    assert words.normalize_number("120,300") == "120300" and words.normalize_number("0.40") == "0.4"


def test_one_edit_reaches_the_word_a_typo_came_from():
    from scirag_helpers.words import one_edit

    assert "algorithm" in one_edit("algorihm")  # a letter dropped
    assert "hierarchical" in one_edit("heirarchical")  # two letters swapped
    assert "apart" in one_edit("appart") and "outperform" in one_edit("outpeform")
    assert "algorihm" not in one_edit("algorihm") and "algorithm" not in one_edit("algorim")
    assert len(one_edit("harvset")) <= 54 * 7 + 25  # linear in the word's length


# Every way each unit phrase is written (one example per alternative of its pattern).
PHRASE_FORMS = [
    "cubic metres",
    "cubic meter",
    "10 m³",
    "fine particulate matter",
    "fine particulates",
    "fine particles",
    "pm 2.5",
    "pm2.5",
    "pm 10",
    "pm10",
    "carbon dioxide",
    "co2",
    "co₂",
    "ch4",
    "ch₄",
    "soil organic carbon",
    "per cent",
    "percentages",
    "12%",
    "annually",
    "each year",
    "a year",
    "per year",
    "t/ yr",
    "5 yr",
]


def test_every_phrase_match_holds_one_of_its_needles():
    # terms() skips a phrase pattern when its text holds none of the pattern's plain
    # strings; a match without one would be skipped wrongly
    matched = set()
    for form in PHRASE_FORMS:
        for needles, pat, _rep in words._PHRASES:
            for m in pat.finditer(form):
                matched.add(form)
                assert any(x in m.group() for x in needles), (form, pat.pattern)
    assert matched == set(PHRASE_FORMS)  # every form is one of the patterns'


def test_phrases_and_change_verbs_normalise_as_before():
    # the outputs of the regular-expression version these replaced (same terms, faster)
    assert words.terms("Fine particles and PM 10 rose 12% per year; CO₂ fell") == [
        "pm25",
        "pm10",
        "increa",
        "percen",
        "year",
        "co2",
        "decrea",
    ]
    assert words.terms("growth declining dropped risen grew falls") == ["increa", "decrea", "decrea"] + [
        "increa"
    ] * 2 + ["decrea"]
    assert [words.stem(w) for w in ("durability", "visibility", "ability", "stability")] == [
        "durabl",
        "visibl",
        "able",
        "stable",
    ]
