"""The one embedder: the loader (Embedder.embed) and PostgreSQL (scirag.embed_query)
must produce the same unit-length 384-d vector for the same text; the query cache
never holds query text; the query adapter (a trained linear map on question
embeddings, never on documents) applies as the admin setting query_adapter says, by
default only to questions asked of chosen documents, and matches its own card."""

from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np
import pytest

from scirag_helpers.embedder import (
    ADAPTER_DIR,
    DIM,
    MAX_TOKENS,
    VERSION,
    EmbeddingError,
    Embedder,
    QueryCache,
    embed_query,
    load_adapter,
    to_pgvector,
    use_adapter,
)

LONG = " ".join(
    f"Sentence {i}: the barley straw yield in Harlan County was measured on plot {i} "
    f"with a residue-to-grain ratio of 1.{i % 10}."
    for i in range(60)
)

STRINGS = {
    "short": "straw",
    "question": "How much barley straw could Harlan County supply each year?",
    "long": LONG,
    "unicode": "Müller’s Stroh — 稻草 🌾 القش المتبقي ñandú ﬁbre Ω≈√ e\u0301",
    "empty": "",
    "whitespace": "  \t ",
}


def parse_vector(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float64)


def cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------------------
# The model on the loader side
# ---------------------------------------------------------------------------


def test_long_string_is_longer_than_the_model_window(embedder):
    assert len(embedder.tokenizer.encode(LONG).ids) == MAX_TOKENS  # truncated
    embedder.tokenizer.no_truncation()
    try:
        assert len(embedder.tokenizer.encode(LONG).ids) > MAX_TOKENS
    finally:
        embedder.tokenizer.enable_truncation(max_length=MAX_TOKENS)


@pytest.mark.parametrize("name", list(STRINGS))
def test_embedding_is_unit_length_and_384_d(embedder, name):
    vecs = embedder.embed([STRINGS[name]])
    assert vecs.shape == (1, DIM) == (1, 384)
    assert vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    assert abs(float(np.linalg.norm(vecs[0])) - 1.0) < 1e-5


def test_batching_and_padding_do_not_change_vectors(embedder):
    texts = list(STRINGS.values())
    together = embedder.embed(texts, batch_size=4)  # two batches, padded to different lengths
    assert together.shape == (len(texts), DIM)
    for text, row in zip(texts, together):
        alone = embedder.embed([text])[0]
        assert cosine(alone, row) >= 0.9999, text[:40]


def test_different_texts_give_different_vectors(embedder):
    a, b, c = embedder.embed(
        ["barley straw ash content", "barley straw ash percentage", "spontaneous combustion of hay stacks"]
    )
    assert cosine(a, b) > cosine(a, c)
    assert cosine(a, c) < 0.95


def test_text_after_the_window_is_ignored(embedder):
    a, b = embedder.embed([LONG + " cellulase enzyme dose", LONG + " methane emissions from rice"])
    assert cosine(a, b) >= 0.99999


def test_empty_batch_has_the_expected_shape(embedder):
    assert embedder.embed([]).shape == (0, DIM)


def test_wrong_expected_dimension_raises_naming_both_dimensions():
    wrong = Embedder(threads=1, expected_dim=512)
    with pytest.raises(EmbeddingError) as info:
        wrong.embed(["straw"])
    assert "384" in str(info.value)
    assert "512" in str(info.value)


def test_to_pgvector_round_trips_float32_exactly(embedder):
    vec = embedder.embed([STRINGS["question"]])[0]
    text = to_pgvector(vec)
    assert re.fullmatch(r"\[[-0-9.e,]+\]", text)
    back = np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float32)
    assert back.shape == (DIM,)
    assert np.array_equal(back, vec)


# ---------------------------------------------------------------------------
# Loader and database agree
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(STRINGS))
def test_embed_query_in_postgres_matches_loader(reader_conn, embedder, name):
    text = STRINGS[name]
    row = reader_conn.execute(
        "SELECT e::text, vector_dims(e), vector_norm(e) FROM scirag.embed_query(%s) AS e", (text,)
    ).fetchone()
    sql_vec = parse_vector(row[0])
    assert row[1] == DIM
    assert abs(row[2] - 1.0) < 1e-5
    # the default setting adapts only questions asked of chosen documents
    assert cosine(sql_vec, embedder.embed([text])[0]) >= 0.9999


def test_embed_query_is_stable_across_calls_and_cache(reader_conn):
    q = "What is the ash content of barley straw?"
    first = reader_conn.execute("SELECT scirag.embed_query(%s)::text", (q,)).fetchone()[0]
    second = reader_conn.execute("SELECT scirag.embed_query(%s)::text", (q,)).fetchone()[0]
    other = reader_conn.execute("SELECT scirag.embed_query(%s)::text", (q + " in Harlan",)).fetchone()[0]
    assert first == second
    assert first != other


def test_embed_query_null_is_the_empty_query(reader_conn, embedder):
    vec = reader_conn.execute("SELECT scirag.embed_query(NULL)::text").fetchone()[0]
    assert vec is not None
    assert cosine(parse_vector(vec), embedder.embed([""])[0]) >= 0.9999


def test_chunk_embeddings_are_stamped_with_the_embedder_version(admin_conn, demo_corpus):
    versions = {
        r[0]
        for r in admin_conn.execute("SELECT DISTINCT embedding_version FROM scirag.chunks WHERE embedding IS NOT NULL")
    }
    assert versions == {VERSION}


# ---------------------------------------------------------------------------
# QueryCache: hashed keys, no query text, TTL, bounded
# ---------------------------------------------------------------------------


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


SECRET = "confidential question about HX-40 cellulase dose"


def all_strings(obj, seen=None):
    """Every str reachable from obj's attributes and containers."""
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from all_strings(k, seen)
            yield from all_strings(v, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for x in obj:
            yield from all_strings(x, seen)
    elif hasattr(obj, "__dict__") and not callable(obj):
        yield from all_strings(vars(obj), seen)


def test_cache_key_is_sha256_of_the_text():
    assert QueryCache.key(SECRET) == hashlib.sha256(SECRET.encode("utf-8")).hexdigest()
    assert QueryCache.key("é") == hashlib.sha256("é".encode("utf-8")).hexdigest()


def test_cache_never_stores_raw_text():
    cache = QueryCache(clock=FakeClock())
    cache.put(SECRET, "[0.1,0.2]")
    assert cache.get(SECRET) == "[0.1,0.2]"
    assert list(cache._items) == [hashlib.sha256(SECRET.encode()).hexdigest()]
    for s in all_strings(cache):
        assert SECRET not in s
        assert "cellulase" not in s


def test_cache_entries_expire_after_ttl():
    clock = FakeClock()
    cache = QueryCache(ttl_seconds=300, clock=clock)
    cache.put("q", "[1]")
    clock.now += 299
    assert cache.get("q") == "[1]"
    clock.now += 2  # 301 s after put
    assert cache.get("q") is None
    assert len(cache._items) == 0  # expired entries are dropped, not kept
    cache.put("q", "[2]")  # and a fresh put works again
    assert cache.get("q") == "[2]"


def test_cache_miss_returns_none():
    assert QueryCache(clock=FakeClock()).get("never stored") is None


def test_cache_is_bounded_and_evicts_oldest():
    cache = QueryCache(max_entries=3, clock=FakeClock())
    for i in range(10):
        cache.put(f"q{i}", f"[{i}]")
        assert len(cache._items) <= 3
    assert len(cache._items) == 3
    assert [cache.get(f"q{i}") for i in range(10)] == [None] * 7 + ["[7]", "[8]", "[9]"]


def test_default_cache_is_bounded():
    cache = QueryCache(clock=FakeClock())
    for i in range(cache.max_entries + 50):
        cache.put(f"q{i}", "[0]")
    assert len(cache._items) == cache.max_entries


# ---------------------------------------------------------------------------
# embed_query helper (the body of scirag.embed_query), tested without a database
# ---------------------------------------------------------------------------


class FakePlpy:
    def __init__(self, dim: int, role: str = "scirag_reader", adapter: str = "none", scoped: bool = False):
        self.dim, self.queries, self.role, self.adapter, self.scoped = dim, [], role, adapter, scoped

    def execute(self, query):
        if "current_user" in query:  # the cache key's role, the query_adapter setting, the scope
            return [{"r": self.role, "a": self.adapter, "s": self.scoped}]
        self.queries.append(query)
        assert "embedding_dim" in query
        return [{"value": str(self.dim)}]


class CountingEmbedder:
    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def embed_query(self, texts, adapted):
        self.calls += 1
        return self.inner.embed_query(texts, adapted)


def test_embed_query_helper_caches_by_hash_only(embedder):
    counting = CountingEmbedder(embedder)
    gd = {"scirag_embedder": counting}
    plpy = FakePlpy(DIM)
    first = embed_query(plpy, gd, SECRET)
    second = embed_query(plpy, gd, SECRET)
    assert first == second
    assert counting.calls == 1  # the second call is a cache hit
    assert plpy.queries == []  # the embedder was already loaded
    assert cosine(parse_vector(first), embedder.embed([SECRET])[0]) >= 0.9999
    for s in all_strings(gd["scirag_query_cache"]):
        assert SECRET not in s


def test_embed_query_cache_is_per_role(embedder):
    """Issue 13: a role that switched in with SET ROLE must not hit another role's entry
    (the hit's 0.1 ms would say the question was asked)."""
    counting = CountingEmbedder(embedder)
    gd = {"scirag_embedder": counting}
    embed_query(FakePlpy(DIM, role="alice"), gd, SECRET)
    embed_query(FakePlpy(DIM, role="bob"), gd, SECRET)
    assert counting.calls == 2
    embed_query(FakePlpy(DIM, role="bob"), gd, SECRET)
    assert counting.calls == 2


def test_embed_query_cache_is_per_adapter_decision(embedder):
    """A question asked of chosen documents (adapted) and the same question asked of
    the whole library (plain) must not share a cache entry."""
    counting = CountingEmbedder(embedder)
    gd = {"scirag_embedder": counting}
    plain = embed_query(FakePlpy(DIM, adapter="scoped", scoped=False), gd, SECRET)
    adapted = embed_query(FakePlpy(DIM, adapter="scoped", scoped=True), gd, SECRET)
    assert counting.calls == 2
    embed_query(FakePlpy(DIM, adapter="always", scoped=False), gd, SECRET)  # same decision: a hit
    assert counting.calls == 2
    assert cosine(parse_vector(plain), embedder.embed([SECRET])[0]) >= 0.9999
    assert cosine(parse_vector(adapted), embedder.embed_query([SECRET], True)[0]) >= 0.9999
    assert cosine(parse_vector(plain), parse_vector(adapted)) < 0.999


def test_embed_query_helper_loads_model_with_database_dimension():
    gd = {}
    with pytest.raises(EmbeddingError) as info:
        embed_query(FakePlpy(512), gd, "straw")
    assert "512" in str(info.value)
    assert gd["scirag_embedder"].expected_dim == 512
    assert gd["scirag_query_cache"].get("straw") is None  # a failed embedding is never cached


# ---------------------------------------------------------------------------
# The query adapter
# ---------------------------------------------------------------------------

QUESTION = "Which datasets do they evaluate on?"


def test_an_unadapted_question_is_the_document_embedding(embedder):
    assert np.array_equal(embedder.embed_query([QUESTION], False), embedder.embed([QUESTION]))


def test_the_adapter_moves_the_question_and_keeps_unit_length(embedder):
    plain = embedder.embed([QUESTION])[0]
    adapted = embedder.embed_query([QUESTION], True)[0]
    assert abs(float(np.linalg.norm(adapted)) - 1.0) < 1e-5
    # a correction of the general model, not a different space
    assert 0.5 < cosine(plain, adapted) < 0.9999


def test_the_adapted_question_is_the_shipped_matrix_times_the_plain_one(embedder):
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


def test_an_unknown_adapter_setting_fails_naming_it():
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


def test_the_adapter_card_describes_the_shipped_matrix():
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


def test_a_one_thread_model_keeps_its_tokenizer_on_that_thread(monkeypatch):
    from scirag_helpers.embedder import tokenizer_threads

    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    tokenizer_threads(2)  # the loader's bulk embedding: the tokenizer may use its pool
    assert "TOKENIZERS_PARALLELISM" not in os.environ
    tokenizer_threads(1)  # inside a backend
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    tokenizer_threads(1)  # an explicit setting stands
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
