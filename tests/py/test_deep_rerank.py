"""Reranking behind one protocol (scirag_helpers.rerank): the LLM adapter with
recorded responses, the cross-encoder adapter with a recorded fake ONNX session
and with a real (tiny, hand-built) ONNX model, entity boost, intent bias, the
fallbacks, and the PL/Python function scirag.rerank in the database."""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

from scirag_helpers import rerank as rr
from scirag_helpers.llm import LLMError, RecordedClient

RECORDINGS = Path(__file__).parent / "recordings"
QUERY = "How much barley straw does Harlan County supply?"
PASSAGES = [
    "Oats are grown in the south.",
    "Harlan County supplies 69,809 t of barley straw a year.",
    "Straw is baled in August.",
]


def recording(name: str, key: str):
    return json.loads((RECORDINGS / name).read_text(encoding="utf-8"))[key]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# ---------------------------------------------------------------------------
# A word-level tokenizer and a real, tiny ONNX cross-encoder
# ---------------------------------------------------------------------------

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "how",
    "much",
    "barley",
    "straw",
    "does",
    "harlan",
    "county",
    "supply",
    "oats",
    "are",
    "grown",
    "in",
    "the",
    "south",
    "supplies",
    "t",
    "of",
    "a",
    "year",
    "is",
    "baled",
    "august",
    "69,809",
    "?",
    ".",
]


def make_tokenizer():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(VOCAB)}
    vocab["barley"], vocab["straw"] = 60, 90  # the words the tiny model "likes"
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return tok


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _key(num, wire, payload):
    return _varint((num << 3) | wire) + payload


def _int(num, v):
    return _key(num, 0, _varint(v))


def _msg(num, b):
    b = b.encode() if isinstance(b, str) else b
    return _key(num, 2, _varint(len(b)) + b)


def tiny_cross_encoder(scale: float = 0.01) -> bytes:
    """An ONNX ModelProto (opset 13), encoded by hand: logits[:, 0] = scale *
    sum(input_ids * attention_mask) (+ 0 * token_type_ids). Real enough for
    onnxruntime; no weights to download."""

    def value_info(name, elem, dims):
        shape = b"".join(_msg(1, _int(1, d) if isinstance(d, int) else _msg(2, d)) for d in dims)
        return _msg(1, name) + _msg(2, _msg(1, _int(1, elem) + _msg(2, shape)))

    def node(op, ins, outs, attrs=b""):
        return b"".join(_msg(1, i) for i in ins) + b"".join(_msg(2, o) for o in outs) + _msg(4, op) + attrs

    def attr_int(name, v):
        return _msg(5, _msg(1, name) + _int(3, v) + _int(20, 2))

    def tensor(name, dims, dtype, payload_field, payload):
        return _msg(
            5, b"".join(_int(1, d) for d in dims) + _int(2, dtype) + _msg(payload_field, payload) + _msg(8, name)
        )

    FLOAT, INT64 = 1, 7
    nodes = [
        node("Cast", ["input_ids"], ["ids_f"], attr_int("to", FLOAT)),
        node("Cast", ["attention_mask"], ["mask_f"], attr_int("to", FLOAT)),
        node("Cast", ["token_type_ids"], ["tt_f"], attr_int("to", FLOAT)),
        node("Mul", ["ids_f", "mask_f"], ["prod"]),
        node("Mul", ["tt_f", "zero"], ["tt0"]),
        node("Add", ["prod", "tt0"], ["prod2"]),
        node("ReduceSum", ["prod2", "axes"], ["summed"], attr_int("keepdims", 1)),
        node("Mul", ["summed", "scale"], ["logits"]),
    ]
    graph = (
        b"".join(_msg(1, n) for n in nodes)
        + _msg(2, "tiny-cross-encoder")
        + tensor("axes", [1], INT64, 7, _varint(1))
        + tensor("scale", [], FLOAT, 4, struct.pack("<f", scale))
        + tensor("zero", [], FLOAT, 4, struct.pack("<f", 0.0))
        + b"".join(
            _msg(11, value_info(n, INT64, ["batch", "seq"])) for n in ("input_ids", "attention_mask", "token_type_ids")
        )
        + _msg(12, value_info("logits", FLOAT, ["batch", 1]))
    )
    return _int(1, 8) + _msg(2, "scirag-tests") + _msg(7, graph) + _msg(8, _msg(1, "") + _int(2, 13))


def write_model_dir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(tiny_cross_encoder())
    make_tokenizer().save(str(folder / "tokenizer.json"))
    return folder


def tiny_expected(query: str, passages: list[str]) -> list[float]:
    tok = make_tokenizer()
    return [sigmoid(0.01 * sum(tok.encode(query, p).ids)) for p in passages]


class FakeInput:
    def __init__(self, name, type_="tensor(int64)"):
        self.name, self.type = name, type_


class FakeSession:
    """Stands in for onnxruntime.InferenceSession: replays recorded logits, keeps the feeds."""

    def __init__(self, outputs, inputs=("input_ids", "attention_mask", "token_type_ids"), fail=False):
        self.outputs = list(outputs)
        self.inputs = [FakeInput(n) for n in inputs]
        self.feeds = []
        self.fail = fail

    def get_inputs(self):
        return self.inputs

    def run(self, output_names, feeds):
        self.feeds.append(feeds)
        if self.fail:
            raise RuntimeError("onnxruntime: invalid input")
        return [np.asarray(self.outputs.pop(0), dtype=np.float32)]


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def test_options_defaults_and_errors():
    opts = rr.parse_options(None)
    assert opts["reranker"] == "none" and opts["entity_boost"] == 0.05 and opts["batch_size"] == 8
    assert opts["max_length"] == 512 and opts["intent_bias"] is False
    assert rr.parse_options('{"intent": "definition"}')["intent"] == "DEFINITION"
    for bad, key in [
        ({"bogus": 1}, "bogus"),
        ({"reranker": "bge"}, "reranker"),
        ({"batch_size": 0}, "batch_size"),
        ({"entity_boost": "x"}, "entity_boost"),
        ({"intent_bias": 1}, "intent_bias"),
        ({"entities": "Harlan"}, "entities"),
        ({"intent": "WHY"}, "intent"),
        ({"fused_scores": [1, "a"]}, "fused_scores"),
        ({"deadline_ms": -1}, "deadline_ms"),
        ({"deadline_ms": 600_001}, "deadline_ms"),
        ({"deadline_ms": "5"}, "deadline_ms"),
    ]:
        with pytest.raises(rr.OptionsError, match=key):
            rr.parse_options(bad)
    with pytest.raises(rr.OptionsError):
        rr.rerank(QUERY, [1, 2], ["only one"])


# ---------------------------------------------------------------------------
# LLM adapter (recorded responses)
# ---------------------------------------------------------------------------


def test_llm_reranker_scores_in_batches_with_recorded_responses():
    client = RecordedClient(recording("deep_rerank_llm.json", "ok"))
    rows = rr.rerank(QUERY, [11, 12, 13], PASSAGES, {"reranker": "llm", "batch_size": 2, "entity_boost": 0}, llm=client)
    assert [(cid, round(s, 3), st) for cid, s, st in rows] == [(12, 0.9, "ok"), (13, 0.6, "ok"), (11, 0.2, "ok")]
    # two batches (2 + 1 passages), each prompt holds the question and its passages, numbered
    assert len(client.seen) == 2
    first, second = client.seen
    assert (
        QUERY in first["prompt"] and "[1] Oats are grown" in first["prompt"] and "[2] Harlan County" in first["prompt"]
    )
    assert "Straw is baled" not in first["prompt"] and "[1] Straw is baled in August." in second["prompt"]
    assert first["json_mode"] is True and first["temperature"] == 0.0 and first["system"] == rr.LLM_SYSTEM


def test_llm_reranker_truncates_passages_to_max_length_words():
    client = RecordedClient({"in_order": ['{"scores": [5]}']})
    rr.rerank("q", [1], [" ".join(f"w{i}" for i in range(50))], {"reranker": "llm", "max_length": 10}, llm=client)
    assert "w9 ..." in client.seen[0]["prompt"] and "w10" not in client.seen[0]["prompt"]


@pytest.mark.parametrize("key", ["not_json", "wrong_count", "out_of_range"])
def test_llm_unusable_output_falls_back_to_the_input_order(key):
    rows = rr.rerank(
        QUERY,
        [11, 12],
        PASSAGES[:2],
        {"reranker": "llm", "entities": ["Harlan County"]},
        llm=RecordedClient(recording("deep_rerank_llm.json", key)),
    )
    assert [r[0] for r in rows] == [11, 12]  # input order, no entity boost
    assert {r[2] for r in rows} == {"fallback: bad_output"}
    assert [r[1] for r in rows] == [1.0, 0.5]


def test_llm_errors_and_missing_client_fall_back():
    class Broken:
        name = "broken"

        def complete(self, *a, **k):
            raise LLMError("connection refused by http://secret-host")

    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "llm"}, llm=Broken())
    assert [r[2] for r in rows] == ["fallback: llm_error"] * 2  # content-free: no host, no text
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "llm"}, env={"SCIRAG_LLM_PROVIDER": "none"})
    assert [r[2] for r in rows] == ["fallback: no_llm_configured"] * 2
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "llm"}, env={"SCIRAG_LLM_PROVIDER": "openai"})
    assert [r[2] for r in rows] == ["fallback: llm_misconfigured"] * 2


# ---------------------------------------------------------------------------
# Cross-encoder adapter: a recorded fake session
# ---------------------------------------------------------------------------


def test_cross_encoder_with_a_recorded_session():
    session = FakeSession(recording("deep_rerank_cross_encoder.json", "one_logit"))
    model = rr.CrossEncoderReranker(session=session, tokenizer=make_tokenizer(), batch_size=2, max_length=8)
    rows = rr.rerank(
        QUERY, [11, 12, 13], PASSAGES, {"reranker": "cross_encoder", "entity_boost": 0}, cross_encoder=model
    )
    assert [r[0] for r in rows] == [12, 13, 11]
    assert [round(r[1], 6) for r in rows] == [round(sigmoid(2.5), 6), round(sigmoid(0.3), 6), round(sigmoid(-1.0), 6)]
    assert {r[2] for r in rows} == {"ok"}
    # batches of 2 then 1; each feed has the three BERT inputs, int64, truncated to max_length
    assert [f["input_ids"].shape[0] for f in session.feeds] == [2, 1]
    for feeds in session.feeds:
        assert set(feeds) == {"input_ids", "attention_mask", "token_type_ids"}
        assert all(a.dtype == np.int64 and a.shape[1] <= 8 for a in feeds.values())
    first = session.feeds[0]
    assert first["input_ids"][0, 0] == 2  # [CLS] query [SEP] passage [SEP]
    assert first["token_type_ids"][0].max() == 1  # the passage is segment 1
    assert (first["attention_mask"][0] == (first["input_ids"][0] != 0)).all()


def test_a_model_starting_from_word_vectors_gets_the_rows_of_its_tokens():
    # The shipped model leaves the (frozen) base word table out of its file: the stage
    # looks each token's row up and feeds inputs_embeds instead of input_ids.
    tok = make_tokenizer()
    table = np.arange((max(tok.get_vocab().values()) + 1) * 3, dtype=np.float32).reshape(-1, 3)
    session = FakeSession([[[0.5], [0.1]]], inputs=("inputs_embeds", "attention_mask", "token_type_ids"))
    model = rr.CrossEncoderReranker(session=session, tokenizer=tok, max_length=8, word_vectors=table)
    model.score(QUERY, PASSAGES[:2])
    feeds = session.feeds[0]
    assert set(feeds) == {"inputs_embeds", "attention_mask", "token_type_ids"}
    ids = np.asarray([tok.encode(QUERY, p).ids[:8] for p in PASSAGES[:2]])
    assert feeds["inputs_embeds"].dtype == np.float32 and feeds["inputs_embeds"].shape == (2, 8, 3)
    assert (feeds["inputs_embeds"][0] == table[ids[0]]).all()
    with pytest.raises(rr.RerankFailure, match="model_unavailable"):  # a table for a smaller vocabulary
        rr.CrossEncoderReranker(session=session, tokenizer=tok, word_vectors=table[:5])


def test_cross_encoder_two_class_output_and_failures():
    session = FakeSession(recording("deep_rerank_cross_encoder.json", "two_class"))
    model = rr.CrossEncoderReranker(session=session, tokenizer=make_tokenizer())
    scores = model.score(QUERY, PASSAGES)
    assert [round(s, 6) for s in scores] == [round(sigmoid(-1.0), 6), round(sigmoid(2.0), 6), 0.5]

    bad = rr.CrossEncoderReranker(
        session=FakeSession(recording("deep_rerank_cross_encoder.json", "bad_shape")), tokenizer=make_tokenizer()
    )
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "cross_encoder"}, cross_encoder=bad)
    assert [(r[0], r[2]) for r in rows] == [(1, "fallback: bad_output"), (2, "fallback: bad_output")]

    broken = rr.CrossEncoderReranker(session=FakeSession([], fail=True), tokenizer=make_tokenizer())
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "cross_encoder"}, cross_encoder=broken)
    assert {r[2] for r in rows} == {"fallback: model_error"}

    odd = rr.CrossEncoderReranker(session=FakeSession([[[1.0]]], inputs=("pixel_values",)), tokenizer=make_tokenizer())
    rows = rr.rerank(QUERY, [1], PASSAGES[:1], {"reranker": "cross_encoder"}, cross_encoder=odd)
    assert rows[0][2] == "fallback: model_error"


def test_cross_encoder_model_path_problems_fall_back(tmp_path):
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "cross_encoder"})
    assert {r[2] for r in rows} == {"fallback: no_model_path"}
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "cross_encoder", "model_path": str(tmp_path / "none")})
    assert {r[2] for r in rows} == {"fallback: model_unavailable"}
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "model.onnx").write_bytes(b"not an onnx model")
    make_tokenizer().save(str(tmp_path / "broken" / "tokenizer.json"))
    rows = rr.rerank(QUERY, [1, 2], PASSAGES[:2], {"reranker": "cross_encoder", "model_path": str(tmp_path / "broken")})
    assert {r[2] for r in rows} == {"fallback: model_unavailable"}


# ---------------------------------------------------------------------------
# Cross-encoder adapter: a real ONNX model from a local folder
# ---------------------------------------------------------------------------


def test_cross_encoder_loads_a_local_onnx_folder(tmp_path):
    folder = write_model_dir(tmp_path / "tiny-reranker")
    cache: dict = {}
    opts = {"reranker": "cross_encoder", "model_path": str(folder), "entity_boost": 0, "batch_size": 2}
    rows = rr.rerank(QUERY, [11, 12, 13], PASSAGES, opts, cache=cache)
    expected = tiny_expected(QUERY, PASSAGES)
    assert [r[0] for r in rows] == [11 + i for i in sorted(range(3), key=lambda i: -expected[i])]
    assert [round(r[1], 5) for r in rows] == sorted((round(e, 5) for e in expected), reverse=True)
    assert {r[2] for r in rows} == {"ok"}
    # the model is loaded once per backend (GD) and reused
    model = next(iter(cache["scirag_rerankers"].values()))
    rr.rerank(QUERY, [1], PASSAGES[:1], opts, cache=cache)
    assert next(iter(cache["scirag_rerankers"].values())) is model


def test_a_long_passage_is_cut_only_where_the_pair_keeps_the_same_tokens(tmp_path):
    model = rr.CrossEncoderReranker(str(write_model_dir(tmp_path / "m")), max_length=10)  # 11 words kept
    words = "Harlan County supplies barley straw every year in August " * 8
    one_long_word = "x" * 79 + " barley straw" * 20  # a long word is one word (one token or more)
    long_question = " ".join(["barley straw"] * 12)  # longer than the pair (24 words)
    shorter_than_question = "barley straw " * 11  # the passage is not the longer side
    no_letters = "\u200b " * 30 + "barley straw " * 4  # words without a letter may give no token
    cases = [
        (QUERY, words),
        (QUERY, one_long_word),
        (long_question, words),
        (long_question, shorter_than_question),
        (QUERY, "Straw is baled."),
        (QUERY, no_letters),
    ]
    heads = [model._heads(q, [p])[0] for q, p in cases]
    assert heads[0] == " ".join(words.split()[:11])  # the usual case is cut (it is what saves the time) ...
    assert heads[1] == " ".join(one_long_word.split()[:11])
    assert 24 < len(heads[2].split()) < len(words.split())  # past the question's length
    assert heads[3:] == [shorter_than_question, "Straw is baled.", no_letters]  # ... these are not
    for (q, p), head in zip(cases, heads):
        assert model.tokenizer.encode(q, head).ids == model.tokenizer.encode(q, p).ids


def test_the_length_a_model_was_trained_at_caps_its_pairs(tmp_path):
    # reranker.json's max_length: a caller asking for longer pairs gets the trained length
    # (the pairs are cut there, so the scores are those of max_length 10 asked outright)
    capped = write_model_dir(tmp_path / "capped")
    (capped / "reranker.json").write_text('{"max_length": 10}')
    plain = write_model_dir(tmp_path / "plain")
    long_asked = rr.CrossEncoderReranker(str(capped), max_length=512)
    assert long_asked.max_length == 10
    assert long_asked.score(QUERY, PASSAGES) == rr.CrossEncoderReranker(str(plain), max_length=10).score(
        QUERY, PASSAGES
    )
    assert long_asked.score(QUERY, PASSAGES) != rr.CrossEncoderReranker(str(plain), max_length=512).score(
        QUERY, PASSAGES
    )
    assert rr.CrossEncoderReranker(str(capped), max_length=4).max_length == 8  # shorter asks stand (8 at least)


# ---------------------------------------------------------------------------
# The deadline: what is scored in time is reordered, the rest keeps its fused order
# ---------------------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class TimedModel:
    """A cross-encoder whose every batch takes ``batch_s`` seconds of the fake clock;
    passage i scores ``scores[i]``."""

    name = "cross_encoder"

    def __init__(self, clock, scores, batch_size=2, batch_s=0.010, load_s=0.0):
        self.clock, self.scores, self.batch_size, self.batch_s = clock, scores, batch_size, batch_s
        self.clock.t += load_s
        self.calls = []

    def score(self, query, passages):
        self.calls.append(len(passages))
        self.clock.t += self.batch_s
        return [self.scores[PASSAGES6.index(p)] for p in passages]


PASSAGES6 = [f"passage {i}" for i in range(6)]
FUSED6 = [6, 5, 4, 3, 2, 1]  # the fused order is the input order
MODEL6 = [0.1, 0.2, 0.3, 0.9, 0.8, 0.7]  # the model prefers the lower half


def test_rerank_stops_before_a_batch_that_would_end_past_the_deadline():
    clock = FakeClock()
    model = TimedModel(clock, MODEL6)
    opts = {"reranker": "cross_encoder", "entity_boost": 0, "fused_scores": FUSED6, "deadline_ms": 25}
    rows = rr.rerank(QUERY, list(range(6)), PASSAGES6, opts, cross_encoder=model, clock=clock)
    # batches end at 10 and 20 ms; a third would end at 30 > 25, so it is not started
    assert model.calls == [2, 2]
    assert [r[0] for r in rows] == [3, 2, 1, 0, 4, 5]  # scored 0-3 by the model, then 4, 5 in fused order
    assert {r[2] for r in rows} == {"partial: deadline, 4 of 6 scored"}
    assert min(r[1] for r in rows[:4]) > max(r[1] for r in rows[4:])
    # time enough: everything scored, the model's order
    clock = FakeClock()
    model = TimedModel(clock, MODEL6)
    rows = rr.rerank(QUERY, list(range(6)), PASSAGES6, {**opts, "deadline_ms": 1000}, cross_encoder=model, clock=clock)
    assert model.calls == [2, 2, 2] and [r[0] for r in rows] == [3, 4, 5, 2, 1, 0]
    assert {r[2] for r in rows} == {"ok"}
    # no deadline: the whole pool, however long it takes
    clock = FakeClock()
    model = TimedModel(clock, MODEL6, batch_s=60.0)
    rows = rr.rerank(QUERY, list(range(6)), PASSAGES6, {**opts, "deadline_ms": None}, cross_encoder=model, clock=clock)
    assert model.calls == [2, 2, 2] and {r[2] for r in rows} == {"ok"}


@pytest.mark.parametrize("deadline, load_s", [(0, 0.0), (50, 0.2)])  # none left, or spent loading the model
def test_rerank_with_no_time_left_keeps_the_fused_order_and_scores_nothing(monkeypatch, deadline, load_s):
    clock = FakeClock()
    loaded = []

    def load(*_args, **_kwargs):
        loaded.append(TimedModel(clock, MODEL6, load_s=load_s))
        return loaded[-1]

    monkeypatch.setattr(rr, "_reranker", load)
    opts = {"reranker": "cross_encoder", "entity_boost": 0, "fused_scores": FUSED6, "deadline_ms": deadline}
    rows = rr.rerank(QUERY, list(range(6)), PASSAGES6, opts, clock=clock)
    assert [r[0] for r in rows] == list(range(6)) and {r[2] for r in rows} == {"fallback: deadline"}
    assert len(loaded) == 1 and loaded[0].calls == []  # the model was loaded, never run


# ---------------------------------------------------------------------------
# Entity boost and intent bias
# ---------------------------------------------------------------------------


def test_query_entities():
    ents = rr.query_entities('Which crops does Osgood County grow with the HX-40 cocktail and "rake-and-bale" gear?')
    assert "Osgood County" in ents and "HX-40" in ents and "rake-and-bale" in ents
    assert "Which" not in ents
    assert rr.query_entities("What is SOC in the Brannock Research Farm trial?")[:1] == ["SOC"]
    assert "Brannock Research Farm" in rr.query_entities("What is SOC in the Brannock Research Farm trial?")
    assert rr.query_entities("how much straw is there?") == []


def test_entity_boost_adds_per_entity_found():
    rows = rr.rerank(
        "q",
        [1, 2, 3],
        ["nothing", "Osgood County corn", "osgood county CORN and maize"],
        {"entities": ["Osgood County", "corn", "maize"], "fused_scores": [1, 1, 1]},
    )
    scores = {cid: round(s, 6) for cid, s, _ in rows}
    assert scores == {1: 1.0, 2: 1.1, 3: 1.15}
    assert [r[0] for r in rows] == [3, 2, 1] and {r[2] for r in rows} == {"disabled"}
    # whole words only: "corn" does not match "cornfield"
    assert rr.entity_hits(["corn"], "a cornfield") == 0


def test_intent_bias_prefers_the_shapes_vulcanlab_lists():
    long_text = " ".join(["word"] * 400)
    shapes = {
        1: {"level": 3, "kind": "prose", "is_table": False, "section_path": "A > B"},  # under an H2
        2: {"level": 5, "kind": "prose", "is_table": False, "section_path": "A > B > C > D"},  # under an H4
        3: {"level": 3, "kind": "table", "is_table": True, "section_path": "A > Results"},
        4: {"level": 3, "kind": "prose", "is_table": False, "section_path": "A > Discussion"},
    }
    m = rr.intent_match
    assert m("DEFINITION", shapes[1], " ".join(["w"] * 100)) == 1.0
    assert m("DEFINITION", shapes[2], long_text) == 0.0
    assert m("MECHANISM", shapes[2], long_text) == 1.0
    assert m("COMPARISON", shapes[3], "a | b\nc | d | e") == 1.0
    assert m("STUDY_DETAIL", shapes[1], long_text) == 1.0 and m("STUDY_DETAIL", shapes[1], "short") == 0.0
    assert m("CRITIQUE", shapes[4], " ".join(["w"] * 120)) == 1.0
    assert m("APPLICATION", shapes[1], "- step one\n- step two\n" + " ".join(["w"] * 100)) == 1.0
    assert m("GENERAL", shapes[1], long_text) == 0.0 and m(None, None, long_text) == 0.0
    rows = rr.rerank(
        "Compare yields",
        [1, 3],
        ["prose text", "a | b\nc | d"],
        {"intent_bias": True, "entity_boost": 0, "fused_scores": [1, 1]},
        shapes=shapes,
        classify=lambda q: "COMPARISON",
    )
    assert [r[0] for r in rows] == [3, 1] and round(rows[0][1] - rows[1][1], 6) == 0.025


# ---------------------------------------------------------------------------
# The SQL entry point with a fake plpy
# ---------------------------------------------------------------------------


class FakePlpy:
    def __init__(self, visible, empty_scope=False, intent="GENERAL"):
        self.visible, self.empty_scope, self.intent = visible, empty_scope, intent
        self.queries = []

    def prepare(self, sql, types):
        return sql

    def execute(self, plan, args=None):
        self.queries.append(plan)
        if "scope_is_empty" in plan:
            return [{"e": self.empty_scope}]
        if "classify_intent" in plan:
            return [{"i": self.intent}]
        if plan == "SELECT 1":  # the interrupt check
            return [{"?column?": 1}]
        if "reranker_model_path" in plan:
            return []
        return [
            {"id": i, "level": 3, "kind": "prose", "is_table": False, "section_path": "A > B"}
            for i in args[0]
            if i in self.visible
        ]


def test_rerank_sql_drops_unreadable_ids_and_fails_closed():
    plpy = FakePlpy(visible={1, 3})
    rows = rr.rerank_sql(plpy, {}, "q", [1, 2, 3], ["a", "b", "c"], '{"fused_scores": [3, 2, 1]}')
    assert [r[0] for r in rows] == [1, 3] and [r[1] for r in rows] == [1.0, 0.0]
    empty = FakePlpy(visible={1, 2, 3}, empty_scope=True)
    assert rr.rerank_sql(empty, {}, "q", [1, 2, 3], ["a", "b", "c"], '{"reranker": "llm"}') == []
    assert not any("chunks" in q for q in empty.queries)  # nothing read, no model called
    with pytest.raises(rr.OptionsError, match="bogus"):
        rr.rerank_sql(FakePlpy(visible=set()), {}, "q", [], [], '{"bogus": true}')


# ---------------------------------------------------------------------------
# In the database: scirag.rerank (PL/Python) with a real local model
# ---------------------------------------------------------------------------


@pytest.fixture
def server_model_dir():
    """The tiny model in a folder the PostgreSQL server's OS user can read."""
    folder = Path(tempfile.mkdtemp(prefix="scirag-tiny-reranker-", dir="/tmp"))
    write_model_dir(folder)
    os.chmod(folder, 0o755)
    for f in folder.iterdir():
        os.chmod(f, 0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def server_model_setting(admin_conn, server_model_dir):
    """The admin setting reranker_model_path pointed at the tiny model (the model folder is
    an admin setting, issue 13, never a caller's option), put back afterwards."""
    before = admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'reranker_model_path'").fetchone()
    admin_conn.execute(
        "INSERT INTO scirag.settings (key, value, description) VALUES ('reranker_model_path', %s, 'test') "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(server_model_dir),),
    )
    yield server_model_dir
    if before is None:
        admin_conn.execute("DELETE FROM scirag.settings WHERE key = 'reranker_model_path'")
    else:  # the deployed "builtin" (schema/deep_rerank) for the tests after this one
        admin_conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'reranker_model_path'", before)


def test_sql_rerank_with_a_local_cross_encoder(reader_conn, demo_corpus, server_model_setting):
    ids = [
        r[0]
        for r in reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve('barley straw Harlan County', 3, options => '{\"layers\": [\"keyword\"]}')"
        )
    ]
    assert len(ids) == 3
    rows = reader_conn.execute(
        "SELECT chunk_id, score, status FROM scirag.rerank(%s, %s, %s, %s)",
        (QUERY, ids, PASSAGES, json.dumps({"reranker": "cross_encoder", "entity_boost": 0})),
    ).fetchall()
    expected = tiny_expected(QUERY, PASSAGES)
    assert [r[0] for r in rows] == [ids[i] for i in sorted(range(3), key=lambda i: -expected[i])]
    assert [round(r[1], 5) for r in rows] == sorted((round(e, 5) for e in expected), reverse=True)
    assert {r[2] for r in rows} == {"ok"}


def test_sql_rerank_blends_a_pool_from_one_document_apart(reader_conn, demo_corpus, server_model_setting):
    # The folder says: across documents the fused order alone (1.0), inside one document
    # the model alone (0.0); the stage learns the documents from the chunks it reads.
    (server_model_setting / "reranker.json").write_text('{"fused_weight": 1.0, "fused_weight_one_document": 0.0}')
    os.chmod(server_model_setting / "reranker.json", 0o644)
    seen: dict[int, list[int]] = {}  # chunks the reader may read, by document
    for chunk_id, document_id in reader_conn.execute("SELECT chunk_id, document_id FROM scirag.retrieve('straw', 60)"):
        seen.setdefault(document_id, []).append(chunk_id)
    one = next(ids[:3] for ids in seen.values() if len(ids) >= 3)
    many = [ids[0] for ids in seen.values()][:3]
    assert len(one) == 3 and len(many) == 3
    expected = tiny_expected(QUERY, PASSAGES)
    by_model = sorted(range(3), key=lambda i: -expected[i])
    assert by_model != [0, 1, 2]  # the model's order differs from the fused one
    opts = json.dumps({"reranker": "cross_encoder", "entity_boost": 0, "fused_scores": [3, 2, 1]})
    sql = "SELECT chunk_id FROM scirag.rerank(%s, %s, %s, %s)"
    assert [r[0] for r in reader_conn.execute(sql, (QUERY, one, PASSAGES, opts))] == [one[i] for i in by_model]
    assert [r[0] for r in reader_conn.execute(sql, (QUERY, many, PASSAGES, opts))] == many


def test_retrieve_gives_the_rerank_stage_what_its_deadline_leaves(reader_conn, demo_corpus, server_model_setting):
    stages = {}
    for deadline in (60000, 0):
        opts = {
            "layers": ["keyword"],
            "pool": 3,
            "deadline_ms": deadline,
            "rerank": {"reranker": "cross_encoder", "entity_boost": 0, "batch_size": 1},
        }
        rows = reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve('barley straw Harlan County', 3, options => %s)",
            (json.dumps(opts),),
        ).fetchall()
        assert len(rows) == 3
        trace = reader_conn.execute("SELECT scirag.last_trace()").fetchone()[0]
        stages[deadline] = next(s for s in trace["stages"] if s["stage"] == "rerank")
    assert stages[60000]["status"] == "ok" and stages[60000]["candidates"] == 3
    # no time left once the layers ran: the model is never run and the fused order stays
    assert stages[0]["status"] == "fallback: deadline"
