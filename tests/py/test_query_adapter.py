"""The query adapter: a trained linear map on question embeddings (never on documents),
applied as the admin setting query_adapter says (by default only to questions asked of
chosen documents), checked against its own card."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from scirag_helpers.embedder import ADAPTER_DIR, DIM, EmbeddingError, load_adapter, use_adapter

QUESTION = "Which datasets do they evaluate on?"


def cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def parse_vector(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float64)


def test_unadapted_is_the_document_embedding(embedder):
    assert np.array_equal(embedder.embed_query([QUESTION], False), embedder.embed([QUESTION]))


def test_builtin_moves_the_question_and_keeps_unit_length(embedder):
    plain = embedder.embed([QUESTION])[0]
    adapted = embedder.embed_query([QUESTION], True)[0]
    assert abs(float(np.linalg.norm(adapted)) - 1.0) < 1e-5
    # a correction of the general model, not a different space
    assert 0.5 < cosine(plain, adapted) < 0.9999


def test_builtin_is_the_shipped_matrix(embedder):
    w = load_adapter()
    expect = w @ embedder.embed([QUESTION])[0]
    assert cosine(embedder.embed_query([QUESTION], True)[0], expect) >= 0.99999


@pytest.mark.parametrize(
    "setting, scoped, adapted",
    [
        ("scoped", True, True),
        ("scoped", False, False),
        ("always", False, True),
        ("always", True, True),
        ("none", True, False),
        ("none", False, False),
    ],
)
def test_when_the_adapter_applies(setting, scoped, adapted):
    assert use_adapter(setting, scoped) is adapted


def test_an_unknown_setting_fails_naming_it():
    with pytest.raises(EmbeddingError, match="'builtin'.*scoped, always, none"):
        use_adapter("builtin", True)


def test_a_missing_or_misshapen_adapter_is_an_error(tmp_path):
    with pytest.raises(EmbeddingError, match="missing"):
        load_adapter(tmp_path)
    np.save(tmp_path / "adapter.npy", np.eye(DIM + 1, dtype=np.float32))
    with pytest.raises(EmbeddingError, match=r"shape \(385, 385\)"):
        load_adapter(tmp_path)
    bad = np.eye(DIM, dtype=np.float32)
    bad[0, 0] = np.nan
    np.save(tmp_path / "adapter.npy", bad)
    with pytest.raises(EmbeddingError, match="finite"):
        load_adapter(tmp_path)
    np.save(tmp_path / "adapter.npy", np.eye(DIM, dtype=np.float32))
    assert np.array_equal(load_adapter(tmp_path), np.eye(DIM, dtype=np.float32))


def test_the_card_describes_the_shipped_matrix():
    card = json.loads((ADAPTER_DIR / "adapter.json").read_text(encoding="utf-8"))
    assert card["sha256"] == hashlib.sha256((ADAPTER_DIR / "adapter.npy").read_bytes()).hexdigest()
    assert "train" in card["trained_on"] and "dev" in card["trained_on"]
    # the cross-validated figure it was chosen on beats the plain embedding
    assert card["cv_dense_recall_at_5"]["adapter"] > card["cv_dense_recall_at_5"]["identity"]
    assert card["chosen"] in card["grid"]


def test_the_database_setting_and_the_scope_decide(admin_conn, reader_conn, embedder):
    """scirag.embed_query reads the admin setting and the caller's scirag.documents on
    every call (no reconnect), and the per-caller cache keeps the decisions apart."""
    sql = "SELECT scirag.embed_query(%s)::text"
    plain = embedder.embed([QUESTION])[0]
    adapted = embedder.embed_query([QUESTION], True)[0]

    def asked(documents: str) -> np.ndarray:
        reader_conn.execute("SELECT set_config('scirag.documents', %s, false)", (documents,))
        return parse_vector(reader_conn.execute(sql, (QUESTION,)).fetchone()[0])

    assert admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'query_adapter'").fetchone()[0] == "scoped"
    try:
        assert cosine(asked(""), plain) >= 0.9999  # the whole library: plain
        assert cosine(asked("1"), adapted) >= 0.9999  # chosen documents: adapted
        for setting, scoped_vec, library_vec in (("always", adapted, adapted), ("none", plain, plain)):
            admin_conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'query_adapter'", (setting,))
            admin_conn.commit()
            assert cosine(asked("1"), scoped_vec) >= 0.9999, setting
            assert cosine(asked(""), library_vec) >= 0.9999, setting
        admin_conn.execute("UPDATE scirag.settings SET value = 'sideways' WHERE key = 'query_adapter'")
        admin_conn.commit()
        with pytest.raises(Exception, match="query_adapter 'sideways'"):
            asked("1")
        reader_conn.rollback()
    finally:
        reader_conn.execute("SELECT set_config('scirag.documents', '', false)")
        admin_conn.execute("UPDATE scirag.settings SET value = 'scoped' WHERE key = 'query_adapter'")
        admin_conn.commit()
    assert cosine(plain, adapted) < 0.9999
