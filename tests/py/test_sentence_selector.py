"""The sentence selector (scirag_helpers/sentence_selector.py): the shipped model reads
(question, sentence) pairs and reorders the sentence scorer's best sentences, only its
top ones, only for questions answered by words of the paper; a missing, broken or
failing model leaves the scorer's order and says so; the trainer's choice needs a gain."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from scirag_helpers import answer, answer_forms, sentence_selector

ROOT = Path(__file__).resolve().parents[2]

LIST_Q = "Which datasets do they evaluate on?"
ANSWERING = "We evaluate our approach on three benchmark datasets: SQuAD, TriviaQA and Natural Questions."
OFF_TOPIC = "Training the model on four GPUs took about two days with a batch size of 32."


@pytest.fixture(scope="module")
def selector():
    s = sentence_selector.load()
    assert s is not None, "the shipped sentence selector did not load (models/sentence_selector)"
    return s


class Fixed:
    """A scorer that gives each sentence a set probability, and remembers what it read."""

    def __init__(self, probs: dict, fail: bool = False):
        self.probs, self.fail, self.read = probs, fail, []

    def score(self, query, passages):
        if self.fail:
            raise RuntimeError("model broke")
        self.read.append(list(passages))
        return [self.probs.get(p, 0.5) for p in passages]


def fake(probs: dict, top: int = 2, weight: float = 1.0, fail: bool = False, tmp: Path | None = None):
    folder = tmp or ROOT / "python/plpy_helpers/scirag_helpers/models/sentence_selector"
    sel = sentence_selector.SentenceSelector(folder, scorer=Fixed(probs, fail))
    sel.top, sel.weight = top, weight
    return sel


def test_shipped_files_match_the_model_card(selector):
    folder = sentence_selector.MODEL_DIR
    card = (folder / "MODEL_CARD.md").read_text(encoding="utf-8")
    digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()
    assert digest in card, f"model.onnx: SHA-256 {digest} is not the one the card states"
    assert (folder / "model.onnx").stat().st_size < 4 * 1024 * 1024  # the repository's bound for a file
    cfg = json.loads((folder / "selector.json").read_text(encoding="utf-8"))
    # chosen on held-out train papers, where it gained
    assert cfg["tuned_on"]["answer_f1_gain"] > 0
    assert (selector.top, selector.weight) == (cfg["top"], cfg["weight"])


def test_only_the_top_sentences_are_rescored_and_reordered():
    ranked = [(2.0, 1, "a", 0), (1.5, 1, "b", 0), (1.0, 2, "c", 1), (0.5, 2, "d", 1)]
    # "b" read as certain (logit ~ +13.8), "a" as unlikely; "c" is below the top two
    sel = fake({"a": 0.1, "b": 1.0, "c": 1.0}, top=2, weight=0.5)
    out = sel.reorder("q", ranked)
    assert [x[2] for x in out] == ["b", "a", "c", "d"]
    assert sel.scorer.read == [["a", "b"]]
    assert out[1][0] == pytest.approx(2.0 + 0.5 * -2.1972, abs=1e-3)  # logit(0.1) = -2.197
    assert out[2:] == ranked[2:]  # place and score kept
    # an even reading leaves the order and the scores as they were
    assert fake({}, top=4).reorder("q", ranked) == ranked


def test_decide_answers_from_the_sentence_the_selector_puts_first():
    shown = [{"n": 1, "text": f"{OFF_TOPIC} {ANSWERING}"}]
    model = answer_forms.load_model()
    plain = answer_forms.decide(LIST_Q, shown, answer.terms, model, selector=None)
    assert plain.details["selector"] == "unavailable"
    other = OFF_TOPIC if plain.support == ANSWERING else ANSWERING
    # a selector sure of the other sentence moves the answer to it
    moved = answer_forms.decide(
        LIST_Q, shown, answer.terms, model, selector=fake({other: 1.0, plain.support: 0.0}, weight=5.0)
    )
    assert moved.support == other and moved.details["selector"] == "moved"
    # a yes/no question is not read by the selector (its support is chosen apart)
    spy = fake({other: 1.0, plain.support: 0.0}, weight=5.0)
    answer_forms.decide("Do they evaluate on SQuAD?", shown, answer.terms, model, selector=spy)
    assert spy.scorer.read == []


def test_a_failing_selector_leaves_the_scorers_order():
    shown = [{"n": 1, "text": f"{OFF_TOPIC} {ANSWERING}"}]
    model = answer_forms.load_model()
    plain = answer_forms.decide(LIST_Q, shown, answer.terms, model, selector=None)
    broken = answer_forms.decide(LIST_Q, shown, answer.terms, model, selector=fake({}, fail=True))
    assert broken.details["selector"] == "error: RuntimeError"
    assert (broken.short, broken.support) == (plain.short, plain.support)


def test_a_missing_or_out_of_bounds_model_loads_as_none(tmp_path):
    assert sentence_selector.load(tmp_path / "nowhere") is None
    shipped = sentence_selector.MODEL_DIR
    for name in ("model.onnx",):
        (tmp_path / name).write_bytes((shipped / name).read_bytes())
    cfg = json.loads((shipped / "selector.json").read_text(encoding="utf-8"))
    (tmp_path / "selector.json").write_text(json.dumps({**cfg, "top": 10_000}))
    assert sentence_selector.load(tmp_path) is None  # asks to read too many sentences
    (tmp_path / "selector.json").write_text(json.dumps(cfg))
    sentence_selector._CACHE.pop(str(tmp_path), None)
    assert sentence_selector.load(tmp_path) is not None


def test_the_shipped_selector_prefers_the_sentence_that_names_the_answer(selector):
    # two sentences the linear scorer ties: the model's reading decides. Its reading
    # depends mostly on the sentence (one that names things is more answer-like) and
    # only weakly on the question (docs/answers.md), so this asks only that much.
    ranked = [(1.0, 1, OFF_TOPIC, 0), (1.0, 1, ANSWERING, 0)]
    out = selector.reorder(LIST_Q, ranked)
    assert out[0][2] == ANSWERING and out[0][0] > out[1][0]
    assert selector.reorder(LIST_Q, ranked[::-1])[0][2] == ANSWERING


def test_input_is_bounded(selector):
    import time

    ranked = [(1.0, 1, "word " * 200_000, 0), (0.9, 1, ANSWERING, 0)]
    t0 = time.monotonic()
    out = selector.reorder("why " * 100_000, ranked)
    assert len(out) == 2 and time.monotonic() - t0 < 5


def test_the_trainer_ships_a_choice_only_when_it_gains_a_whole_answer():
    sys.path.insert(0, str(ROOT / "scripts"))
    import train_sentence_selector as tss

    results = {None: 0.200, (5, 0.5): 0.205, (8, 1.0): 0.203}
    assert tss.choose(results, questions=785) == {"top": 5, "weight": 0.5, "answer_f1_gain": 0.005}
    # +0.001 over 785 questions is less than one whole answer: nothing ships
    assert tss.choose({None: 0.200, (5, 0.5): 0.201}, questions=785) is None
    assert tss.trainable({"unanswerable": False, "qtype": "list", "cands": [("s", 1.0)], "f1": [0.4]}, 8)
    assert not tss.trainable({"unanswerable": False, "qtype": "yes_no", "cands": [("s", 1.0)], "f1": [0.4]}, 8)
    assert not tss.trainable(
        {"unanswerable": False, "qtype": "list", "cands": [("s", 1.0)] * 9, "f1": [0] * 8 + [1]}, 8
    )
