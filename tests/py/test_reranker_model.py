"""The deep profile with a cross-encoder behind the rerank protocol (issue 29), in the
database: the admin setting reranker_model_path (deployed as "builtin", the folder
scirag_helpers/models/reranker, whose trained weights are committed), the deep profile
reranking its fused pool when a caller turns the stage on, with the builtin model and
with an admin's model, and the fallback to the fused order with a trace entry when the model is missing. The
tests that check an order use the hand-built tiny ONNX cross-encoder of test_deep_rerank
(its scores are known); the model folder is checked against its card."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from test_deep_rerank import write_model_dir

from scirag_helpers import rerank as rr

Q = "How much barley straw can Harlan County supply each year?"
ON = {"rerank": {"reranker": "cross_encoder", "batch_size": 16, "max_length": 192, "entity_boost": 0}}
# entity_boost 0 on both: the fused order itself (the boost would reorder it whenever the
# corpus holds passages naming the question's entities unevenly, as the full suite's does)
OFF = {"rerank": {"reranker": "none", "entity_boost": 0}}


def _stage(conn, name):
    trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    return next((s for s in trace["stages"] if s["stage"] == name), None)


@pytest.fixture
def model_setting(admin_conn):
    """Sets reranker_model_path for one test and puts the deployed value back."""
    before = admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'reranker_model_path'").fetchone()

    def set_to(value: str) -> None:
        admin_conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'reranker_model_path'", (value,))

    yield set_to
    if before is not None:
        set_to(before[0])


@pytest.fixture
def tiny_model_dir():
    folder = Path(tempfile.mkdtemp(prefix="scirag-deep-reranker-", dir="/tmp"))
    write_model_dir(folder)
    os.chmod(folder, 0o755)
    for f in folder.iterdir():
        os.chmod(f, 0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_deployed_setting_is_builtin(admin_conn):
    row = admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'reranker_model_path'").fetchone()
    assert row == ("builtin",)
    assert (rr.BUILTIN_MODEL_DIR / "MODEL_CARD.md").is_file()
    assert (rr.BUILTIN_MODEL_DIR / "model.onnx").is_file()


def test_profiles_do_not_rerank_the_library_by_default_and_deep_reranks_with_the_builtin_model_when_asked(
    reader_conn, demo_corpus
):
    for profile in ("interactive", "deep"):
        reader_conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 5, profile => %s)", (Q, profile)).fetchone()
        assert _stage(reader_conn, "rerank") is None, profile
    # the committed model: the stage as docs/reranker.md shows it (the folder gives the length)
    asked = {"pool": 20, "rerank": {"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0}}
    got = [
        r[0]
        for r in reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve(%s, 5, profile => 'deep', options => %s)", (Q, json.dumps(asked))
        )
    ]
    stage = _stage(reader_conn, "rerank")
    assert stage["status"] == "ok" and stage["candidates"] == 20
    assert len(got) == 5


def test_deep_profile_reranks_its_pool_with_the_admins_model(reader_conn, demo_corpus, model_setting, tiny_model_dir):
    model_setting(str(tiny_model_dir))
    pool = reader_conn.execute(
        "SELECT chunk_id, content FROM scirag.retrieve(%s, 20, profile => 'deep', options => %s)",
        (Q, json.dumps(OFF | {"pool": 20})),
    ).fetchall()
    assert len(pool) >= 6
    got = [
        r[0]
        for r in reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve(%s, 5, profile => 'deep', options => %s)",
            (Q, json.dumps(ON | {"pool": 20})),
        )
    ]
    stage = _stage(reader_conn, "rerank")
    assert stage["status"] == "ok" and stage["candidates"] == len(pool)
    # the order is the model's over the whole pool of 20, not the fused top 5 reshuffled
    model = rr.CrossEncoderReranker(str(tiny_model_dir), batch_size=16, max_length=192)
    scores = model.score(Q, [c for _, c in pool])
    want = [pool[i][0] for i in sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:5]]
    assert got == want and got != [c for c, _ in pool[:5]]


@pytest.mark.parametrize("profile, pool", [("interactive", 20), ("deep", 20)])
def test_a_question_asked_of_one_paper_is_reranked(
    reader_conn, demo_corpus, model_setting, tiny_model_dir, profile, pool
):
    """The profiles' rerank stage runs only under a narrow scope (narrow_only), over their
    pool of 20 (the fused list before it is cut to k)."""
    model_setting(str(tiny_model_dir))
    reader_conn.execute("SELECT set_config('scirag.documents', 'county-straw-2022', false)")
    try:
        fused = reader_conn.execute(
            "SELECT chunk_id, content FROM scirag.retrieve(%s, %s, profile => %s, options => %s)",
            (Q, pool, profile, json.dumps(OFF)),
        ).fetchall()
        assert _stage(reader_conn, "rerank")["status"] == "disabled"  # switched off by the caller
        got = [
            r[0]
            for r in reader_conn.execute("SELECT chunk_id FROM scirag.retrieve(%s, 5, profile => %s)", (Q, profile))
        ]
        stage = _stage(reader_conn, "rerank")
        assert stage["status"] == "ok" and stage["candidates"] == len(fused) > 1
        model = rr.CrossEncoderReranker(str(tiny_model_dir), batch_size=16, max_length=512)
        scores = model.score(Q, [c for _, c in fused])
        assert got == [fused[i][0] for i in sorted(range(len(fused)), key=lambda i: (-scores[i], i))][:5]
    finally:
        reader_conn.execute("SELECT set_config('scirag.documents', '', false)")
    # the whole library: no stage, the fused order
    reader_conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 5, profile => %s)", (Q, profile)).fetchone()
    assert _stage(reader_conn, "rerank") is None


@pytest.mark.parametrize("bad", [{"paragraphs": 0}, {"paragraphs": 9}, {"paragraphs": "2"}, {"narrow_only": "yes"}])
def test_the_new_rerank_options_are_bounded(reader_conn, bad):
    import psycopg

    with pytest.raises(psycopg.errors.InvalidParameterValue, match="rerank"):
        reader_conn.execute(
            "SELECT count(*) FROM scirag.retrieve(%s, 5, options => %s)", (Q, json.dumps({"rerank": bad}))
        )


@pytest.mark.parametrize("where", ["/nonexistent/scirag-reranker", "tmp"])
def test_deep_profile_without_the_model_keeps_the_fused_order(reader_conn, demo_corpus, model_setting, tmp_path, where):
    # tmp: a folder under pytest's private tmp, which the server's OS user may not even read
    fused = [
        r[0]
        for r in reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve(%s, 10, profile => 'deep', options => %s)", (Q, json.dumps(OFF))
        )
    ]
    model_setting(str(tmp_path / "gone") if where == "tmp" else where)
    got = [
        r[0]
        for r in reader_conn.execute(
            "SELECT chunk_id FROM scirag.retrieve(%s, 10, profile => 'deep', options => %s)", (Q, json.dumps(ON))
        )
    ]
    stage = _stage(reader_conn, "rerank")
    assert stage["status"] == "fallback: model_unavailable"
    assert got == fused


# ---------------------------------------------------------------------------
# The model folder (models/reranker): weights, tokenizer, blend and card, all committed
# ---------------------------------------------------------------------------


def test_model_folder_matches_its_card():
    import hashlib
    import re

    card = (rr.BUILTIN_MODEL_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    m = re.search(r"`tokenizer\.json`[^\n]*?`([0-9a-f]{64})`", card)
    assert m, "the model card gives the SHA-256 of tokenizer.json"
    assert hashlib.sha256((rr.BUILTIN_MODEL_DIR / "tokenizer.json").read_bytes()).hexdigest() == m.group(1)
    want = re.search(r"`model\.onnx`[^\n]*?`([0-9a-f]{64})`", card)
    assert want, "the card names the weights it was measured with"
    assert hashlib.sha256((rr.BUILTIN_MODEL_DIR / "model.onnx").read_bytes()).hexdigest() == want.group(1)
    # the blend and the pair length the card's figures were measured with
    assert tuple(rr.read_model_config(str(rr.BUILTIN_MODEL_DIR))) == (0.8, 64, 0.6, 6, 32)
    said = re.search(r"\| `reranker\.json` \| `(\{[^`]*\})`", card)
    assert said, "the card quotes the folder's reranker.json"
    assert json.loads(said.group(1)) == json.loads((rr.BUILTIN_MODEL_DIR / "reranker.json").read_text())


def test_the_committed_model_starts_from_the_base_word_vectors():
    # The word table (30522 x 384) is not in the file: it is the installed base model's,
    # looked up by the stage, so the committed weights stay small.
    import onnxruntime as ort

    from scirag_helpers.embedder import base_word_vectors

    path = rr.BUILTIN_MODEL_DIR / "model.onnx"
    assert path.stat().st_size < 4 * 1024 * 1024
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert {i.name for i in session.get_inputs()} == {"inputs_embeds", "attention_mask", "token_type_ids"}
    model = rr.CrossEncoderReranker(str(rr.BUILTIN_MODEL_DIR))
    assert model.word_vectors.shape == base_word_vectors().shape == (30522, 384)
    scores = model.score(Q, ["Harlan County could supply 69,809 t of barley straw a year.", "Rice is burned."])
    assert len(scores) == 2 and all(0 < s < 1 for s in scores)


def test_a_pool_from_one_document_is_fed_pairs_of_the_folders_shorter_length():
    model = rr.CrossEncoderReranker(str(rr.BUILTIN_MODEL_DIR))
    view = model.one_document("A Paper")
    assert (model.max_length, view.max_length) == (64, 32)
    long = "A Paper\nResults\n\n" + "measured word " * 100

    def pair_tokens(m):
        return [len(e.ids) for e in m.tokenizer.encode_batch([("Which datasets?", p) for p in m._heads("q", [long])])]

    assert pair_tokens(view) == [32] and pair_tokens(model) == [64]
    assert model.tokenizer is not view.tokenizer  # the cached model keeps its own length
