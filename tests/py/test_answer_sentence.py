"""The sentence selector (scirag_helpers/answer_sentence.py, model in
models/answer_sentence/): the shipped model's reading of plain cases, its bounds, its
card, and the answer forms that use it (policy from models/answer_forms.json)."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from scirag_helpers import answer, answer_forms, answer_sentence

pytestmark = pytest.mark.skipif(
    not answer_sentence.SentenceSelector.available(), reason="sentence selector model not installed"
)

SENTENCES = [
    (1, "Our approach is inspired by recent work on contrastive learning for text."),
    (2, "We evaluate the model on the SNLI and MultiNLI datasets."),
    (2, "Training uses Adam with a learning rate of 0.001 for 20 epochs."),
    (3, "The annotators were graduate students in linguistics."),
]


@pytest.fixture(scope="module")
def selector():
    return answer_sentence.SentenceSelector()


def best(selector, question):
    scores = selector.scores(question, [s for _n, s in SENTENCES])
    return SENTENCES[max(range(len(scores)), key=scores.__getitem__)][1]


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Which datasets do they evaluate on?", "SNLI"),
        ("What learning rate is used?", "0.001"),
        ("Who annotated the data?", "graduate students"),
        ("What optimizer do they use?", "Adam"),
    ],
)
def test_shipped_model_picks_the_answering_sentence(selector, question, expected):
    assert expected in best(selector, question)


def test_answering_beats_merely_similar(selector):
    # both sentences share the question's words; only one answers it
    s = selector.scores(
        "What dataset do they use for evaluation?",
        [
            "Evaluation of the dataset quality is an open problem for many tasks.",
            "We report results on the CoNLL-2003 test set.",
        ],
    )
    assert s[1] > s[0]


def test_scores_are_bounded(selector):
    many = [f"Sentence number {i} of a long list." for i in range(200)]
    assert len(selector.scores("What is listed?", many)) == answer_sentence.MAX_SENTENCES
    huge = selector.scores("why " * 5000, ["word " * 5000])  # cut to the model's length
    assert len(huge) == 1
    assert selector.scores("Anything?", []) == []


def test_shipped_files_match_the_card():
    meta = json.loads((answer_sentence.MODEL_DIR / "training.json").read_text())
    digest = hashlib.sha256((answer_sentence.MODEL_DIR / "model.onnx").read_bytes()).hexdigest()
    assert meta["sha256"] == digest
    assert digest in (answer_sentence.MODEL_DIR / "MODEL_CARD.md").read_text()


def policy_model(**overrides):
    model = copy.deepcopy(answer_forms.load_model())
    model["selector"] = {
        "types": ["list", "number", "description", "definition"],
        "sentences": 24,
        "lexical_weight": 0.0,
        "abstain_below": {"list": -1e9, "number": -1e9, "description": -1e9, "definition": -1e9},
        **overrides,
    }
    return model


def test_decide_answers_with_the_selected_sentence(selector):
    shown = [{"n": n, "text": s} for n, s in SENTENCES]
    model = policy_model()
    form = answer_forms.decide("Which datasets do they evaluate on?", shown, answer.terms, model, selector=selector)
    assert form.answer_type == "list" and form.n == 2 and "SNLI" in form.short
    assert form.support == form.short and "selector_logit" in form.details
    # without the selector the linear scorers decide (no selector score in the details)
    plain = answer_forms.decide("Which datasets do they evaluate on?", shown, answer.terms, model)
    assert "selector_logit" not in plain.details
    # a form the policy leaves out is not read by the selector
    model["selector"]["types"] = ["number"]
    other = answer_forms.decide("Which datasets do they evaluate on?", shown, answer.terms, model, selector=selector)
    assert "selector_logit" not in other.details
    # yes/no questions keep their decider
    yn = answer_forms.decide("Do they use Adam?", shown, answer.terms, policy_model(), selector=selector)
    assert yn.short in ("Yes", "No") and "selector_logit" not in yn.details


def test_decide_abstains_below_the_policy_floor(selector):
    shown = [{"n": n, "text": s} for n, s in SENTENCES]
    model = policy_model(abstain_below={"list": 1e9, "number": -1e9, "description": -1e9, "definition": -1e9})
    form = answer_forms.decide("Which datasets do they evaluate on?", shown, answer.terms, model, selector=selector)
    assert form.abstain and form.short is None


def test_shipped_policy_is_consistent():
    model = answer_forms.load_model()
    policy = model.get("selector")
    assert policy, "models/answer_forms.json has no selector policy (run scripts/train_answerer.py)"
    assert set(policy["types"]) <= set(answer_forms.QTYPES) - {"yes_no"}
    assert set(policy["abstain_below"]) == set(policy["types"])
    assert 1 <= policy["sentences"] <= answer_sentence.MAX_SENTENCES


def test_missing_model_files_mean_no_selector(tmp_path):
    assert not answer_sentence.SentenceSelector.available(tmp_path)
    gd: dict = {}
    real = answer_sentence.MODEL_DIR
    try:
        answer_sentence.MODEL_DIR = tmp_path  # what selector_in consults through available()
        assert answer.selector_in(gd) is None
    finally:
        answer_sentence.MODEL_DIR = real
