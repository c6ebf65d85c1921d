"""The span reader (scirag_helpers/span_reader.py): the shipped model cuts the sentence
the answerer chose to the words that answer a list question, keeps the whole
sentence when it is not sure or the question wants a description, is bounded, and its
absence leaves answers whole instead of failing them."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from scirag_helpers import answer, answer_forms, span_reader

LIST_Q = "Which datasets do they evaluate on?"
LIST_S = (
    "We evaluate our approach on three benchmark datasets, namely SQuAD, TriviaQA and Natural "
    "Questions, which differ in the length of their contexts."
)


@pytest.fixture(scope="module")
def reader():
    r = span_reader.load()
    assert r is not None, "the shipped span reader did not load (models/span_reader)"
    return r


def test_shipped_files_match_the_model_card():
    card = (span_reader.MODEL_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    for name in ("model.onnx",):
        digest = hashlib.sha256((span_reader.MODEL_DIR / name).read_bytes()).hexdigest()
        assert digest in card, f"{name}: SHA-256 {digest} is not the one the card states"
    cfg = json.loads((span_reader.MODEL_DIR / "span_reader.json").read_text(encoding="utf-8"))
    # chosen on held-out train papers: only types whose spans gained there are cut
    assert set(cfg["types"]) <= set(answer_forms.QTYPES) - {"yes_no"} and cfg["types"]


def test_a_list_question_gets_the_listed_names(reader):
    span = reader.read(LIST_Q, LIST_S)
    assert span is not None and span.margin >= reader.margin
    assert span.text == LIST_S[span.start : span.end]  # verbatim, whole words
    assert "SQuAD" in span.text  # a dataset the sentence names, not the sentence
    assert len(span.text) < len(LIST_S) / 2


def test_decide_answers_with_the_span_and_keeps_the_sentence_as_support():
    shown = [{"n": 1, "text": LIST_S}, {"n": 2, "text": "Training takes two days on one GPU."}]
    form = answer_forms.decide(LIST_Q, shown, answer.terms)
    assert form.answer_type == "list" and not form.abstain
    assert form.support == LIST_S and form.n == 1
    assert form.short != form.support and "SQuAD" in form.short, form
    assert form.details["span_margin"] >= 0
    # without a reader the same question is answered by the whole sentence
    whole = answer_forms.decide(LIST_Q, shown, answer.terms, reader=None)
    assert whole.short == whole.support == LIST_S and whole.details["span_reader"] == "unavailable"


def test_an_unsure_reader_leaves_the_sentence_whole(reader):
    strict = span_reader.SpanReader(span_reader.MODEL_DIR)
    strict.margin = 1e9  # no span can clear it
    shown = [{"n": 1, "text": LIST_S}]
    form = answer_forms.decide(LIST_Q, shown, answer.terms, reader=strict)
    assert form.short == LIST_S and "span_margin" in form.details


def test_a_type_it_was_not_chosen_for_is_not_cut(reader):
    assert "description" not in reader.types
    q = "How do they collect the corpus?"
    s = "We collect the corpus by crawling news sites and filtering duplicates with MinHash."
    form = answer_forms.decide(q, [{"n": 1, "text": s}], answer.terms, reader=reader)
    assert form.answer_type == "description" and form.short == form.support


def test_a_missing_model_folder_loads_as_none(tmp_path):
    assert span_reader.load(tmp_path / "nothing here") is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "span_reader.json").write_text('{"max_length": 128, "max_span": 48}')
    (broken / "model.onnx").write_bytes(b"not a model")
    (broken / "tokenizer.json").write_text("{}")
    assert span_reader.load(broken) is None


def test_input_is_bounded(reader):
    # a table row run of a megabyte is read as its first MAX_SENTENCE_CHARS characters
    huge = "accuracy 0.91 on SQuAD , " * 40_000
    t0 = time.perf_counter()
    span = reader.read("Which datasets? " * 2_000, huge)
    assert time.perf_counter() - t0 < 5
    assert span is None or span.end <= span_reader.MAX_SENTENCE_CHARS
    assert reader.read(LIST_Q, "   ") is None


def test_the_training_examples_label_the_annotated_stretch():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import span_reader_data

    s = "We use BERT, RoBERTa and XLNet as encoders."
    at = span_reader_data.span_in(s, ["RoBERTa", "BERT"])
    assert s[at[0] : at[1]] == "BERT, RoBERTa"  # first to last of the annotator's spans
    assert span_reader_data.span_in(s, ["GPT-2"]) is None
    long = "x " * 30 + "A " + "y " * 45 + "B"
    assert span_reader_data.span_in(long, ["A", "B"]) is None  # a stretch over 40 words is a sentence


def test_a_failing_reader_leaves_the_sentence_whole():
    class Broken:
        types = frozenset({"list"})
        margin = 0.0

        def read(self, question, sentence):
            raise RuntimeError("inference failed")

    form = answer_forms.decide(LIST_Q, [{"n": 1, "text": LIST_S}], answer.terms, reader=Broken())
    assert form.short == LIST_S and form.details["span_reader"] == "error: RuntimeError"


def test_a_span_of_the_questions_own_words_leaves_the_sentence_whole():
    class Echo:
        types = frozenset({"list"})
        margin = 0.0

        def __init__(self, text):
            self.text = text

        def read(self, question, sentence):
            start = sentence.index(self.text)
            return span_reader.Span(self.text, start, start + len(self.text), 3.0)

    q = "Which baselines were compared on CommonsenseQA?"
    s = "On CommonsenseQA, STaR is compared with GPT-J finetuned and a few-shot baseline."
    shown = [{"n": 1, "text": s}]
    echo = answer_forms.decide(q, shown, answer.terms, reader=Echo("CommonsenseQA"))
    assert echo.short == s and echo.details["span_reader"] == "only the question's words"
    # a span that adds a word is cut as before
    cut = answer_forms.decide(q, shown, answer.terms, reader=Echo("GPT-J finetuned and a few-shot baseline"))
    assert cut.short == "GPT-J finetuned and a few-shot baseline"


def test_tuning_cuts_only_for_types_that_gain_a_whole_answer():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import tune_span_reader as tune

    gain = {t: dict.fromkeys(tune.MARGINS, 0.0) for t in tune.TYPES}
    gain["list"].update({0.0: 6.0, 0.5: 7.0, 1.0: 5.0})
    gain["number"].update({0.0: 0.5, 0.5: 1.5})  # gains a whole answer only at 0.5
    gain["description"].update({0.0: -3.0, 0.5: 0.2})  # noise: not cut
    choice = tune.choose({"gain": gain}, questions=100)
    assert choice == {"margin": 0.5, "types": ["list", "number"], "answer_f1_gain": 0.085}
    # nothing gains: nothing is cut
    flat = {t: dict.fromkeys(tune.MARGINS, -1.0) for t in tune.TYPES}
    assert tune.choose({"gain": flat}, questions=100)["types"] == []


def test_the_committed_model_starts_from_the_base_word_vectors(reader):
    # the word table (30,522 x 384) is the installed base's, looked up by the reader,
    # not a copy inside the file; and the outputs are a start and an end per token
    import onnxruntime as ort

    path = span_reader.MODEL_DIR / "model.onnx"
    assert path.stat().st_size < 4 * 1024 * 1024  # the repository's bound for a committed file
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert {i.name for i in session.get_inputs()} == {"inputs_embeds", "attention_mask", "token_type_ids"}
    assert [o.name for o in session.get_outputs()] == ["start_logits", "end_logits"]
    assert len(reader.word_vectors) == 30522
