"""Adversarial suite for issue 13: an untrusted SQL client (a LOGIN role that is a
member of scirag_reader, connected as itself) tries each attack the issue lists; each
test asserts the attack fails with a clear error or learns nothing. A bounded, seeded
fuzz run over scirag.retrieve and the search layers must give 0 crashes (only clear
errors) and nothing running past statement_timeout.

Item 1 (EXPLAIN (ANALYZE), planner estimates, pg_stats, plain SELECT) is closed by the
wall (policies/reader_wall): readers hold no privilege on evidence tables and read them
only through SECURITY DEFINER functions owned by scirag_api, under row-level security
keyed on the caller (docs/threat-model.md, "Threat model and residual limits").
"""

from __future__ import annotations

import json
import os
import random
import time

import psycopg
import pytest
from psycopg import errors
from psycopg.conninfo import make_conninfo

pytestmark = pytest.mark.usefixtures("demo_corpus")

ATTACKER = f"sec_attacker_{os.getpid()}"


@pytest.fixture(scope="module")
def attacker_dsn(dsn):
    """A LOGIN role granted scirag_reader; the attacks run on its own connections."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP ROLE IF EXISTS "{ATTACKER}"')
        admin.execute(f'CREATE ROLE "{ATTACKER}" LOGIN IN ROLE scirag_reader')
    yield make_conninfo(dsn, user=ATTACKER)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (ATTACKER,))
        admin.execute(f'DROP ROLE IF EXISTS "{ATTACKER}"')


@pytest.fixture
def attacker(attacker_dsn):
    conn = psycopg.connect(attacker_dsn, autocommit=True)
    assert conn.execute("SELECT session_user = current_user AND current_user = %s", (ATTACKER,)).fetchone()[0]
    yield conn
    conn.close()


def clear_error(conn, sql, params=None):
    """Runs sql expecting a clear error (SQLSTATE 22023, message from scirag); returns the message."""
    with pytest.raises(errors.InvalidParameterValue) as info:
        conn.execute(sql, params)
    return str(info.value)


# ---------------------------------------------------------------------------
# Item 9: retrieve options validated, each error names the option and its bounds
# ---------------------------------------------------------------------------

BAD_OPTIONS = [
    ({"rrf_k": -1}, '"rrf_k" must be an integer between 1 and 10000'),
    ({"rrf_k": 0}, '"rrf_k"'),
    ({"depth": "abc"}, '"depth" must be an integer between 1 and 1000'),
    ({"depth": 10**9}, '"depth"'),
    ({"depth": 2.5}, '"depth"'),
    ({"weights": {"vector": "abc"}}, '"weights.vector" must be a number'),
    ({"weights": {"telepathy": 1}}, 'unknown key "telepathy" in option "weights"'),
    ({"weights": [1, 2]}, 'option "weights" must be a JSON object'),
    ({"layers": "vector"}, '"layers" must be an array of layer names'),
    ({"layers": ["vector", 7]}, "unknown layer 7"),
    ({"layers": ["telepathy"]}, 'unknown layer "telepathy"'),
    ({"pool": 100000}, '"pool" must be an integer between 1 and 1000'),
    ({"depths": {"vector": -3}}, '"depths.vector"'),
    ({"budgets_ms": {"vector": "fast"}}, '"budgets_ms.vector"'),
    ({"fusion": "sum"}, 'unknown fusion "sum"'),
    ({"keyword_scale": 3}, '"keyword_scale" must be a string'),
    ({"proximity": -1}, '"proximity"'),
    ({"mmr": "yes"}, '"mmr" must be true or false'),
    ({"mmr_lambda": 7}, '"mmr_lambda"'),
    ({"preset": 5}, '"preset" must be a string'),
    ({"rerank": "cross_encoder"}, '"rerank" must be a JSON object'),
    ({"rerank": {"bogus": 1}}, 'unknown key "bogus" in option "rerank"'),
    ({"rerank": {"batch_size": 0}}, '"rerank.batch_size" must be an integer between 1 and 1024'),
    ({"rerank": {"entities": ["x"] * 33}}, '"rerank.entities" must be an array of at most 32 strings'),
    ({"bogus": 1}, 'unknown option "bogus"'),
]


@pytest.mark.parametrize("options,needle", BAD_OPTIONS, ids=[json.dumps(o) for o, _ in BAD_OPTIONS])
def test_bad_retrieve_options_give_an_error_naming_the_option(attacker, options, needle):
    msg = clear_error(attacker, "SELECT * FROM scirag.retrieve('straw', 5, 'interactive', %s)", (json.dumps(options),))
    assert needle in msg


@pytest.mark.parametrize("k", [-5, 0, 1001, 10**6])
def test_k_is_bounded(attacker, k):
    assert '"k" must be an integer between 1 and 1000' in clear_error(
        attacker, "SELECT * FROM scirag.retrieve('straw', %s)", (k,)
    )


def test_options_must_be_an_object_and_profile_known(attacker):
    assert "options must be a JSON object" in clear_error(
        attacker, "SELECT * FROM scirag.retrieve('s', 5, 'interactive', '[1]')"
    )
    assert 'unknown profile "nope"' in clear_error(attacker, "SELECT * FROM scirag.retrieve('s', 5, 'nope')")


def test_retrieve_config_is_one_resolved_configuration(attacker):
    """Profile, then preset, then explicit options; k from the preset's top_n_final."""
    cfg = attacker.execute(
        "SELECT scirag.retrieve_config('interactive', 10, %s)",
        (json.dumps({"preset": "high-precision", "rrf_k": 30, "weights": {"vector": 0.5}}),),
    ).fetchone()[0]
    pre = attacker.execute("SELECT scirag.preset_get('high-precision')->'retrieval'").fetchone()[0]
    assert cfg["k"] == pre["top_n_final"] and cfg["pool"] == pre["top_k_rrf"]
    assert cfg["rrf_k"] == 30  # explicit option wins over the preset
    assert cfg["weights"]["vector"] == 0.5 and "keyword" in cfg["weights"]  # merged key by key
    assert "model_path" not in cfg.get("rerank", {})


def test_valid_options_still_retrieve(attacker):
    rows = attacker.execute(
        "SELECT chunk_id FROM scirag.retrieve('barley straw yield', 5, 'interactive', %s)",
        (json.dumps({"layers": ["keyword"], "depth": 50, "rrf_k": 10, "fusion": "rrf"}),),
    ).fetchall()
    assert len(rows) == 5


# ---------------------------------------------------------------------------
# Item 4: inputs capped before Python; text routines linear; statement_timeout acts
# ---------------------------------------------------------------------------


def test_question_length_is_capped(attacker):
    msg = clear_error(attacker, "SELECT * FROM scirag.retrieve(repeat('A. ', 2000), 5)")
    assert "at most 4000" in msg


def test_the_longest_allowed_adversarial_question_finishes_within_the_timeout(attacker):
    """The issue's attack (sentence starts defeating query_entities) at the cap, with the
    preset that runs the entity boost: it must finish well inside a 3 s timeout."""
    attacker.execute("SET statement_timeout = '3s'")
    q = ("A. " * 1330 + "corn")[:4000]
    t0 = time.monotonic()
    attacker.execute(
        "SELECT count(*) FROM scirag.retrieve(%s, 10, 'interactive', '{\"preset\": \"high-precision\"}')", (q,)
    ).fetchone()
    assert time.monotonic() - t0 < 3
    assert attacker.execute("SELECT scirag.last_trace()").fetchone()[0]["stages"][-1]["stage"] == "rerank"


def test_rerank_inputs_are_capped(attacker):
    assert "at most 4000" in str(
        pytest.raises(
            psycopg.Error,
            attacker.execute,
            "SELECT * FROM scirag.rerank(repeat('x', 4001), '{}'::bigint[], '{}'::text[])",
        ).value
    )
    assert "at most 1000 allowed" in str(
        pytest.raises(
            psycopg.Error,
            attacker.execute,
            "SELECT * FROM scirag.rerank('q', ARRAY(SELECT g::bigint FROM generate_series(1, 1001) g), "
            "ARRAY(SELECT 'x' FROM generate_series(1, 1001)))",
        ).value
    )


def test_text_units_and_window_text_are_linear(attacker):
    """4x the sentences must cost about 4x the time (quadratic would be 16x)."""

    def run(n):
        t0 = time.perf_counter()
        attacker.execute("SELECT count(*) FROM scirag.text_units(repeat('Corn grows well. ', %s))", (n,)).fetchone()
        attacker.execute(
            "SELECT length(scirag.window_text(repeat('Corn grows well. ', %s), 1, 10, %s))", (n, n * 2)
        ).fetchone()
        return time.perf_counter() - t0

    run(200)  # warm-up
    small = min(run(500) for _ in range(2))
    large = min(run(2000) for _ in range(2))
    assert large / small < 9, (small, large)
    attacker.execute("SET statement_timeout = '5s'")
    assert attacker.execute("SELECT count(*) FROM scirag.text_units(repeat('e.g. ', 20000))").fetchone()[0] == 1


def test_query_entities_is_linear():
    from scirag_helpers.rerank import MAX_ENTITIES, query_entities

    t0 = time.perf_counter()
    query_entities("A. " * 13000 + "corn")
    assert time.perf_counter() - t0 < 1.0  # quadratic: 18 s on 40k characters
    assert len(query_entities(" ".join(f"HX-{i}" for i in range(500)))) == MAX_ENTITIES


def test_interrupt_ends_the_rerank_call_instead_of_falling_back():
    """A cancel or statement_timeout raised by the interrupt hook must propagate."""
    from scirag_helpers import rerank as rr

    class Model:
        name = "cross_encoder"

        def score(self, q, passages):
            return [0.5] * len(passages)

    class Cancelled(Exception):
        pass

    def interrupt():
        raise Cancelled()

    with pytest.raises(Cancelled):
        rr.rerank(
            "q", list(range(10)), ["t"] * 10, {"reranker": "cross_encoder"}, cross_encoder=Model(), interrupt=interrupt
        )


# ---------------------------------------------------------------------------
# Item 3: model files only from admin settings; bounded caches; LLM pool capped
# ---------------------------------------------------------------------------


def test_a_reader_cannot_choose_the_model_file(attacker):
    assert "rerank.model_path" in clear_error(
        attacker,
        "SELECT * FROM scirag.retrieve('straw', 5, 'interactive', %s)",
        (json.dumps({"rerank": {"reranker": "cross_encoder", "model_path": "/etc"}}),),
    )
    with pytest.raises(psycopg.Error, match="model_path.*not accepted"):
        attacker.execute(
            "SELECT * FROM scirag.rerank('q', ARRAY[1]::bigint[], ARRAY['a'], %s)",
            (json.dumps({"reranker": "cross_encoder", "model_path": "/proc/self/environ"}),),
        )


def test_model_cache_holds_one_model(monkeypatch):
    from scirag_helpers import rerank as rr

    loaded = []

    class Fake:
        name = "cross_encoder"

        def __init__(self, path, batch_size=8, max_length=512):
            loaded.append((path, max_length))
            self.batch_size = batch_size

        def score(self, q, passages):
            return [0.5] * len(passages)

    monkeypatch.setattr(rr, "CrossEncoderReranker", Fake)
    cache: dict = {}
    for i in range(12):
        rr.rerank(
            "q",
            [1, 2],
            ["a", "b"],
            {"reranker": "cross_encoder", "model_path": "/m", "max_length": 16 + i, "batch_size": 1 + i},
            cache=cache,
        )
    assert len(cache["scirag_rerankers"]) == rr.MODEL_CACHE_SIZE == 1
    rr.rerank(
        "q",
        [1],
        ["a"],
        {"reranker": "cross_encoder", "model_path": "/m", "max_length": 27, "batch_size": 3},
        cache=cache,
    )
    assert len(loaded) == 12  # the last one came from the cache
    with pytest.raises(rr.OptionsError, match="batch_size"):
        rr.parse_options({"batch_size": 10**6})


def test_llm_reranker_scores_a_capped_pool():
    from scirag_helpers import rerank as rr

    scored = []

    class Client:
        def complete(self, prompt, **kw):
            n = prompt.count("\n[")
            scored.append(n)
            return json.dumps({"scores": [5] * n})

    rows = rr.rerank(
        "q",
        list(range(300)),
        [f"passage {i}" for i in range(300)],
        {"reranker": "llm", "entity_boost": 0, "batch_size": 1024},
        llm=Client(),
    )
    assert sum(scored) == rr.LLM_MAX_PASSAGES
    assert [r[0] for r in rows][rr.LLM_MAX_PASSAGES :] == list(range(rr.LLM_MAX_PASSAGES, 300))  # tail in fused order
    assert {r[2] for r in rows} == {"ok"}


# ---------------------------------------------------------------------------
# Item 10: narrowing settings are strict; unknown excluded ids are reported
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["t", "y", "yes", "1", "onn", "maybe"])
def test_exclude_retracted_accepts_on_off_true_false_only(attacker, value):
    attacker.execute("SELECT set_config('scirag.exclude_retracted', %s, false)", (value,))
    msg = clear_error(attacker, "SELECT count(*) FROM scirag.documents_visible()")  # every query, not only retrieve
    assert "scirag.exclude_retracted" in msg


@pytest.mark.parametrize(
    "value,expected", [("on", True), ("TRUE", True), (" off ", False), ("false", False), ("", False)]
)
def test_exclude_retracted_valid_values(attacker, value, expected):
    attacker.execute("SELECT set_config('scirag.exclude_retracted', %s, false)", (value,))
    assert (
        attacker.execute("SELECT scirag.current_scope()->>'exclude_retracted'").fetchone()[0] == str(expected).lower()
    )


def test_oversized_settings_are_refused(attacker):
    attacker.execute("SELECT set_config('scirag.sources', repeat('a,', 40000), false)")
    assert "scirag.sources" in clear_error(attacker, "SELECT count(*) FROM scirag.documents_visible()")
    attacker.execute("RESET scirag.sources")
    attacker.execute("SELECT set_config('scirag.exclude_documents', repeat('x,', 40000), false)")
    assert "scirag.exclude_documents" in clear_error(attacker, "SELECT count(*) FROM scirag.documents_visible()")


def test_unknown_excluded_ids_are_reported(attacker, admin_conn):
    restricted = admin_conn.execute(
        "SELECT external_id FROM scirag.documents WHERE license = 'restricted' LIMIT 1"
    ).fetchone()[0]
    visible = attacker.execute("SELECT external_id FROM scirag.documents_visible() LIMIT 1").fetchone()[0]
    attacker.execute(
        "SELECT set_config('scirag.exclude_documents', %s, false)", (f"{visible},no-such-doc,{restricted}",)
    )
    scope = attacker.execute("SELECT scirag.current_scope()").fetchone()[0]
    assert scope["excluded_documents"] == 1
    # a hidden id counts exactly like a non-existent one: the report reveals nothing
    assert scope["excluded_documents_unresolved"] == 2


# ---------------------------------------------------------------------------
# Item 8: ceilings by role OID; a dangling row breaks nobody
# ---------------------------------------------------------------------------


def test_dropped_role_ceiling_breaks_no_reader_and_is_not_inherited(dsn, attacker_dsn, admin_conn):
    name = f"sec_p_{os.getpid()}"
    admin_conn.execute(f'DROP ROLE IF EXISTS "{name}"')
    admin_conn.execute(f'CREATE ROLE "{name}" LOGIN')
    admin_conn.execute(f'GRANT scirag_reader TO "{name}"')
    try:
        admin_conn.execute(
            "INSERT INTO scirag.role_ceilings (role_name, licenses) VALUES (%s, %s)",
            (name, ["public", "open_commercial", "open_noncommercial", "restricted", "unknown"]),
        )
        admin_conn.execute(f'DROP OWNED BY "{name}"; DROP ROLE "{name}"')
        with psycopg.connect(attacker_dsn, autocommit=True) as other:
            assert other.execute("SELECT count(*) FROM scirag.retrieve('barley straw', 3)").fetchone()[0] == 3
            assert other.execute("SELECT scirag.scope_licenses()").fetchone()[0] == ["open_commercial", "public"]
        # a new role under the same name gets nothing from the old row
        admin_conn.execute(f'CREATE ROLE "{name}" LOGIN')
        admin_conn.execute(f'GRANT USAGE ON SCHEMA scirag TO "{name}"')
        admin_conn.execute(f'GRANT SELECT ON scirag.documents, scirag.role_ceilings TO "{name}"')
        admin_conn.execute(f'GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA scirag TO "{name}"')
        with psycopg.connect(make_conninfo(attacker_dsn, user=name), autocommit=True) as newcomer:
            assert newcomer.execute("SELECT scirag.scope_licenses()").fetchone()[0] == []
            assert newcomer.execute("SELECT count(*) FROM scirag.documents").fetchone()[0] == 0
            assert newcomer.execute("SELECT count(*) FROM scirag.documents_visible()").fetchone()[0] == 0
    finally:
        admin_conn.execute("DELETE FROM scirag.role_ceilings WHERE role_name = %s", (name,))
        admin_conn.execute(
            f'DROP OWNED BY "{name}"'
            if admin_conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
            else "SELECT 1"
        )
        admin_conn.execute(f'DROP ROLE IF EXISTS "{name}"')


def test_a_ceiling_for_a_missing_role_is_refused(admin_conn):
    with pytest.raises(errors.UndefinedObject, match="does not exist"):
        admin_conn.execute(
            "INSERT INTO scirag.role_ceilings (role_name, licenses) VALUES ('no_such_role_x', '{public}')"
        )


# ---------------------------------------------------------------------------
# Items 5, 6, 12: manifests confined; bad bytes become report rows; ids kept
# ---------------------------------------------------------------------------

DOC = "# Outside\n\nThis text lives outside the manifest folder and must not be loaded. " * 3


def _ingest(loader_conn, embedder, manifest, **kw):
    from scirag.ingest import Ingester, ingest_manifest

    return ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder), **kw)


def _reports(admin_conn, run_id):
    return admin_conn.execute(
        "SELECT line_no, external_id, status, reason FROM scirag.ingest_reports WHERE run_id = %s ORDER BY line_no",
        (run_id,),
    ).fetchall()


def test_manifest_paths_are_confined_to_the_manifest_folder(
    tmp_path, loader_conn, admin_conn, embedder, restore_corpus
):
    outside = tmp_path / "outside.md"
    outside.write_text(DOC.replace("Outside", "Outside A"))
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "inside.md").write_text("# Inside\n\nThis one is inside the folder and is loaded. " * 3)
    (folder / "link.md").symlink_to(outside)
    lines = [
        {"id": "sec-dotdot", "path": "../outside.md", "license": "public"},
        {"id": "sec-abs", "path": "/etc/passwd", "license": "public"},
        {"id": "sec-proc", "path": "/proc/self/environ", "license": "public"},
        {"id": "sec-link", "path": "link.md", "license": "public"},
        {"id": "sec-inside", "path": "inside.md", "license": "public"},
    ]
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    counts = _ingest(loader_conn, embedder, manifest)
    assert counts["added"] == 1 and counts["failed"] == 4
    rows = _reports(admin_conn, counts["run_id"])
    assert [r[1] for r in rows] == [x["id"] for x in lines]
    assert all("outside the manifest's folder" in r[3] for r in rows[:4])
    stored = admin_conn.execute("SELECT source_path FROM scirag.documents WHERE external_id = 'sec-inside'").fetchone()[
        0
    ]
    assert stored == "inside.md"  # no server path for readers
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.documents WHERE external_id LIKE 'sec-%%' AND external_id <> 'sec-inside'"
        ).fetchone()[0]
        == 0
    )


def test_allow_outside_permits_it(tmp_path, loader_conn, admin_conn, embedder, restore_corpus):
    outside = tmp_path / "outside-b.md"
    outside.write_text(DOC.replace("Outside", "Outside B"))
    folder = tmp_path / "corpus-b"
    folder.mkdir()
    manifest = folder / "manifest.jsonl"
    manifest.write_text(json.dumps({"id": "sec-allowed", "path": "../outside-b.md", "license": "public"}) + "\n")
    counts = _ingest(loader_conn, embedder, manifest, allow_outside=True)
    assert counts["added"] == 1
    assert (
        admin_conn.execute("SELECT source_path FROM scirag.documents WHERE external_id = 'sec-allowed'").fetchone()[0]
        == "outside-b.md"
    )


def test_bad_bytes_become_report_rows_and_the_run_finishes(tmp_path, loader_conn, admin_conn, embedder, restore_corpus):
    folder = tmp_path / "corpus-c"
    folder.mkdir()
    (folder / "ok.md").write_text("# Fine\n\nA perfectly ordinary document about maize stover. " * 3)
    raw = [
        json.dumps({"id": "sec-nul\u0000id", "text": "x", "license": "public"}),
        json.dumps({"id": "sec-nulpath", "path": "ok\u0000.md", "license": "public"}),
        json.dumps({"id": 42, "text": "x"}),
        json.dumps({"id": "sec-surrogate\ud800", "text": "x"}),
        json.dumps({"id": "sec-title", "text": "body text here. " * 5, "title": "bad\u0000title"}),
    ]
    data = (
        ("\n".join(raw) + "\n").encode()
        + b'{"id": "sec-latin1", "text": "caf\xe9"}\n'
        + (json.dumps({"id": "sec-ok", "path": "ok.md", "license": "public"}) + "\n").encode()
    )
    manifest = folder / "manifest.jsonl"
    manifest.write_bytes(data)
    counts = _ingest(loader_conn, embedder, manifest)
    assert counts == {
        "run_id": counts["run_id"],
        "added": 1,
        "duplicate": 0,
        "failed": 6,
        **{k: 0 for k in ("updated", "replaced", "skipped")},  # the outcomes of issue 25
    }
    rows = _reports(admin_conn, counts["run_id"])
    assert [r[2] for r in rows] == ["failed"] * 6 + ["added"]
    ids = [r[1] for r in rows]
    assert ids[2] == "42" and "must be a string" in rows[2][3]  # a numeric id is kept, not "missing"
    assert ids[1] == "sec-nulpath" and "NUL" in rows[1][3]
    assert ids[4] == "sec-title" and "NUL" in rows[4][3]
    assert "UTF-8" in rows[5][3]
    assert admin_conn.execute(
        "SELECT finished_at IS NOT NULL FROM scirag.ingest_runs WHERE id = %s", (counts["run_id"],)
    ).fetchone()[0]


# ---------------------------------------------------------------------------
# Fuzz: bounded, seeded; 0 crashes, only clear errors, nothing past statement_timeout
# ---------------------------------------------------------------------------


def _random_value(rnd):
    return rnd.choice(
        [
            -1,
            0,
            1,
            7,
            1000,
            10**7,
            2.5,
            -0.5,
            "abc",
            "",
            None,
            True,
            [],
            {},
            ["vector"],
            {"vector": 1},
            {"vector": "x"},
            "rrf",
            "score",
            "max",
            "minmax",
            1e308,
        ]
    )


KEYS = [
    "layers",
    "weights",
    "budgets_ms",
    "depth",
    "depths",
    "fusion",
    "keyword_scale",
    "proximity",
    "rrf_k",
    "pool",
    "rerank",
    "mmr",
    "mmr_lambda",
    "preset",
    "_fail_layers",
    "unknown_key",
]


def test_fuzz_retrieve_options(attacker):
    rnd = random.Random(13)
    attacker.execute("SET statement_timeout = '5s'")
    ok = clear = 0
    for _ in range(150):
        opts = {rnd.choice(KEYS): _random_value(rnd) for _ in range(rnd.randint(1, 3))}
        k = rnd.choice([1, 5, 10, 0, -1, 1000, 1001])
        q = rnd.choice(["straw", "", "A. " * 50, "Osgood County corn", "ünïcödé ÷ ∑", "' OR 1=1 --"])
        t0 = time.monotonic()
        try:
            attacker.execute(
                "SELECT count(*) FROM scirag.retrieve(%s, %s, 'interactive', %s)", (q, k, json.dumps(opts))
            ).fetchone()
            ok += 1
        except errors.InvalidParameterValue as exc:
            assert str(exc).startswith("scirag"), exc  # scirag.retrieve: ..., scirag preset: ...
            clear += 1
        assert time.monotonic() - t0 < 5
    assert ok > 0 and clear > 0
    assert attacker.execute("SELECT 1").fetchone()[0] == 1


def test_fuzz_search_layers(attacker):
    rnd = random.Random(29)
    attacker.execute("SET statement_timeout = '5s'")
    words = ["straw", "corn", "&", "|", "!", "(", ")", ":*", "'", "\\", "-1", "1e9", "ñ", "的", "a" * 300]
    for _ in range(60):
        q = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 12)))
        depth = rnd.choice([1, 10, 100, 1000])
        t0 = time.monotonic()
        try:
            attacker.execute("SELECT count(*) FROM scirag.search_keyword(%s, %s)", (q, depth)).fetchone()
        except errors.InvalidParameterValue as exc:
            assert str(exc).startswith("scirag"), exc
        assert time.monotonic() - t0 < 5
    for n in (4001, 100000):
        with pytest.raises(errors.InvalidParameterValue):
            attacker.execute("SELECT * FROM scirag.retrieve(repeat('x', %s), 5)", (n,))


# ---------------------------------------------------------------------------
# Item 1: the wall. Nothing about rows outside the ceiling through EXPLAIN (ANALYZE)
# (index conditions on leakproof operators run before the RLS filter, so "Rows Removed
# by Filter" used to count hidden rows), plain EXPLAIN estimates, pg_stats, SELECT.
# ---------------------------------------------------------------------------

# (table, column) pairs a reader used to probe with a leakproof index condition
PROBES = [
    ("kw_postings", "lexeme"),
    ("documents", "external_id"),
    ("documents", "content_hash"),
    ("kg_entities", "name_key"),
    ("chunks", "id"),
    ("kw_blocks", "lexeme"),
    ("settings", "key"),
    ("role_ceilings", "role_name"),
    ("document_keys", "external_id"),
]


@pytest.fixture
def hidden(admin_conn):
    """A restricted document of the demo corpus (the attacker's ceiling excludes it)."""
    row = admin_conn.execute("""SELECT d.id, d.external_id, d.content_hash, min(c.id)
                                FROM scirag.documents d JOIN scirag.chunks c ON c.document_id = d.id
                                WHERE d.license = 'restricted' GROUP BY 1, 2, 3 ORDER BY 1 LIMIT 1""").fetchone()
    assert row is not None, "the demo corpus must hold a restricted document"
    lexeme = admin_conn.execute(
        """SELECT u.lexeme FROM scirag.chunks c, unnest(c.tsv) AS u
                                   WHERE c.document_id = %s AND NOT EXISTS (
                                     SELECT 1 FROM scirag.chunks o, unnest(o.tsv) AS v
                                     WHERE o.license IN ('public', 'open_commercial') AND v.lexeme = u.lexeme)
                                   LIMIT 1""",
        (row[0],),
    ).fetchone()[0]
    return {"document_id": row[0], "external_id": row[1], "content_hash": row[2], "chunk_id": row[3], "lexeme": lexeme}


@pytest.mark.parametrize("table,column", PROBES)
def test_explain_on_evidence_tables_is_denied(attacker, hidden, table, column):
    value = {
        "lexeme": hidden["lexeme"],
        "external_id": hidden["external_id"],
        "content_hash": hidden["content_hash"],
        "name_key": hidden["lexeme"],
        "id": hidden["chunk_id"],
        "key": "python_path",
        "role_name": "scirag_loader",
    }[column]
    for explain in ("EXPLAIN (ANALYZE, FORMAT JSON)", "EXPLAIN (FORMAT JSON)"):
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied"):
            attacker.execute(f"{explain} SELECT 1 FROM scirag.{table} WHERE {column} = %s", (value,))


def test_prefix_walk_is_denied(attacker):
    """The enumeration of issue 13: a range condition on lexeme listed hidden words."""
    with pytest.raises(errors.InsufficientPrivilege):
        attacker.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1 FROM scirag.kw_postings WHERE lexeme >= 'c' AND lexeme < 'd'"
        )
    with pytest.raises(errors.InsufficientPrivilege):
        attacker.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1 FROM scirag.kw_all_postings WHERE lexeme >= 'c' AND lexeme < 'd'"
        )


def test_no_evidence_relation_is_readable_and_pg_stats_shows_none(attacker, admin_conn):
    admin_conn.execute("ANALYZE scirag.documents, scirag.chunks, scirag.kw_postings")
    rels = [
        r[0]
        for r in admin_conn.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'scirag'::regnamespace "
            "AND c.relkind IN ('r', 'v', 'm', 'p') AND NOT scirag.reader_open_table(c.relname)"
        ).fetchall()
    ]
    assert {"documents", "chunks", "kw_postings", "settings", "role_ceilings", "kg_entities"} <= set(rels)
    for rel in rels:
        with pytest.raises(errors.InsufficientPrivilege):
            attacker.execute(f"SELECT 1 FROM scirag.{rel} LIMIT 1")
    leaked = attacker.execute(
        "SELECT tablename FROM pg_stats WHERE schemaname = 'scirag' AND tablename = ANY (%s)", (rels,)
    ).fetchall()
    assert leaked == []
    # the superuser sees them: the empty answer above is the privilege filter, not missing statistics
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM pg_stats WHERE schemaname = 'scirag' AND tablename = 'documents'"
        ).fetchone()[0]
        > 0
    )


def test_the_api_answers_nothing_about_hidden_ids(attacker, hidden, admin_conn):
    """Ids a reader passes are filtered like every other row (RLS binds scirag_api)."""
    cid, did = hidden["chunk_id"], hidden["document_id"]
    assert attacker.execute("SELECT count(*) FROM scirag.chunk_get(%s)", (cid,)).fetchone()[0] == 0
    assert attacker.execute("SELECT count(*) FROM scirag.chunk_neighbours(%s, 5)", (cid,)).fetchone()[0] == 0
    assert attacker.execute("SELECT count(*) FROM scirag.document_outline(%s)", (did,)).fetchone()[0] == 0
    assert (
        attacker.execute("SELECT count(*) FROM scirag.documents_visible(%s)", (hidden["external_id"],)).fetchone()[0]
        == 0
    )
    assert attacker.execute("SELECT scirag.documents_all_visible(%s)", ([did],)).fetchone()[0] is False
    assert attacker.execute("SELECT count(*) FROM scirag.enrich_chunks(%s)", ([cid],)).fetchone()[0] == 0
    assert attacker.execute("SELECT count(*) FROM scirag.consolidate(%s)", ([cid],)).fetchone()[0] == 0
    assert attacker.execute("SELECT count(*) FROM scirag.mmr_select(%s, %s, 5)", ([cid], [1.0])).fetchone()[0] == 0
    assert attacker.execute("SELECT count(*) FROM scirag.references(%s)", (did,)).fetchone()[0] == 0
    assert (
        attacker.execute("SELECT count(*) FROM scirag.search_keyword(%s, 50)", (hidden["lexeme"],)).fetchone()[0] == 0
    )
    # control: the same calls do find it for a role whose ceiling and scope cover restricted
    with admin_conn.transaction():
        admin_conn.execute("SET LOCAL ROLE scirag_loader")
        admin_conn.execute("SET LOCAL scirag.licenses = 'restricted'")
        assert admin_conn.execute("SELECT count(*) FROM scirag.chunk_get(%s)", (cid,)).fetchone()[0] == 1
        assert (
            admin_conn.execute("SELECT count(*) FROM scirag.search_keyword(%s, 50)", (hidden["lexeme"],)).fetchone()[0]
            > 0
        )


def test_the_caller_cannot_be_forged(attacker):
    """Inside the API current_user is scirag_api; the ceiling follows SET ROLE or the session
    user, which only membership can change."""
    assert attacker.execute("SELECT scirag.current_scope()->>'role'").fetchone()[0] == ATTACKER
    for sql in (
        "SET ROLE scirag_loader",
        "SET ROLE scirag_api",
        "SELECT set_config('role', 'scirag_loader', false)",
        "SET SESSION AUTHORIZATION postgres",
    ):
        with pytest.raises(errors.InsufficientPrivilege):
            attacker.execute(sql)
    assert attacker.execute("SELECT scirag.scope_licenses()").fetchone()[0] == ["open_commercial", "public"]


def test_the_caller_cannot_be_forged_at_connection_time(attacker_dsn, admin_conn):
    """PGOPTIONS and a per-role setting go through the same membership check."""
    with pytest.raises(psycopg.OperationalError, match="permission denied to set role"):
        psycopg.connect(attacker_dsn, options="-c role=scirag_loader").close()
    with psycopg.connect(attacker_dsn, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE \"{ATTACKER}\" SET role = 'scirag_loader'")  # a role may store it...
    try:
        with psycopg.connect(attacker_dsn, autocommit=True) as conn:  # ...but it is refused on use
            assert conn.execute("SELECT current_setting('role'), scirag.current_scope()->>'role'").fetchone() == (
                "none",
                ATTACKER,
            )
    finally:
        admin_conn.execute(f'ALTER ROLE "{ATTACKER}" RESET role')


def test_set_role_behind_a_pooler_keeps_the_callers_scope(admin_conn, attacker_dsn, hidden):
    """A pooler or PostgREST switches roles with SET [LOCAL] ROLE: the API applies the
    ceiling of the role switched to, not scirag_api's (none) nor the session user's (all)."""
    with admin_conn.transaction():
        admin_conn.execute(f'SET LOCAL ROLE "{ATTACKER}"')
        admin_conn.execute("SET LOCAL scirag.licenses = 'public,open_commercial,restricted'")
        assert admin_conn.execute("SELECT scirag.current_scope()->>'role'").fetchone()[0] == ATTACKER
        assert admin_conn.execute("SELECT scirag.scope_licenses()").fetchone()[0] == ["open_commercial", "public"]
        assert admin_conn.execute("SELECT count(*) FROM scirag.chunk_get(%s)", (hidden["chunk_id"],)).fetchone()[0] == 0
        assert admin_conn.execute("SELECT count(*) FROM scirag.retrieve('barley straw', 3)").fetchone()[0] == 3
