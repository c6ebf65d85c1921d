"""The walk of one answer (issue 28): scirag.answer resolves its preset once (it hands
the resolution down through scirag.retrieve_evidence to scirag.retrieve_config instead
of having retrieve resolve it again), and checks the question's length in SQL three
times (scirag.answer, then retrieve_layers and search_keyword, which readers may call
themselves), not four. The counts are PostgreSQL's own: pg_stat_xact_user_functions
with track_functions = 'pl' set for the session (docs/code-size.md, "The walk of
scirag ask"). Handing the resolution down changes nothing that retrieve returns. Each
PL/Python function it enters bootstraps the Python path only when its backend has not
(plpy_bootstrap once per connection, not once per PL/Python function)."""

from __future__ import annotations

import json

import psycopg
import pytest

SAMPLE = "How much straw could Harlan County supply each year?"
PRESETS = ["default", "high-precision", "high-recall", "detailed-context"]


def counted(dsn, role, statements):
    """Runs statements (SQL, params) as role in one transaction with function
    tracking on; returns the last statement's first value and the calls per function."""
    with psycopg.connect(dsn) as conn:
        conn.execute("SET track_functions = 'pl'")  # superuser login; before SET ROLE
        conn.execute(f"SET ROLE {role}")
        for sql, params in statements:
            value = conn.execute(sql, params).fetchone()[0]
        calls = dict(
            conn.execute(
                "SELECT funcname::text, calls FROM pg_stat_xact_user_functions WHERE schemaname = 'scirag'"
            ).fetchall()
        )
        conn.rollback()
    return value, calls


def python_entries(dsn, calls):
    """The calls of calls that entered PL/Python (each one a step from SQL into Python)."""
    with psycopg.connect(dsn) as conn:
        python = {
            r[0]
            for r in conn.execute(
                "SELECT p.proname::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
                "WHERE p.pronamespace = 'scirag'::regnamespace AND l.lanname = 'plpython3u'"
            )
        }
    return {name: n for name, n in calls.items() if name in python}


def answer_sql(question, options):
    return ("SELECT scirag.answer(%s, %s)", (question, json.dumps(options)))


@pytest.mark.parametrize("preset", PRESETS)
def test_an_answer_resolves_its_preset_once(dsn, demo_corpus, preset):
    a, calls = counted(dsn, "scirag_reader", [answer_sql(SAMPLE, {"preset": preset})])
    assert calls.get("answer_generate") == 1 and calls.get("retrieve") == 1, calls
    assert calls.get("preset_resolve") == 1, calls
    assert a["trace"]["retrieve"]["preset"] == preset  # retrieve did apply the preset


def test_the_count_sees_a_second_resolution(dsn, demo_corpus):
    """The planted error: resolving in the caller and again inside retrieve (what the
    answer did before) is counted as two, and so is retrieve_evidence given no resolution
    after the caller resolved."""
    opts = json.dumps({"preset": "high-recall"})
    _, calls = counted(
        dsn,
        "scirag_loader",
        [
            ("SELECT scirag.preset_resolve('high-recall')", ()),
            ("SELECT count(*) FROM scirag.retrieve_evidence(%s, 10, 'interactive', %s::jsonb)", (SAMPLE, opts)),
        ],
    )
    assert calls.get("preset_resolve") == 2, calls
    _, calls = counted(
        dsn,
        "scirag_loader",
        [
            (
                "SELECT count(*) FROM scirag.retrieve_evidence(%s, 10, 'interactive', %s::jsonb, "
                "scirag.preset_resolve('high-recall'))",
                (SAMPLE, opts),
            )
        ],
    )
    assert calls.get("preset_resolve") == 1, calls


def test_an_answer_checks_the_question_length_three_times_in_sql(dsn, demo_corpus):
    _, calls = counted(dsn, "scirag_reader", [answer_sql(SAMPLE, {})])
    # scirag.answer, retrieve_layers and search_keyword (both callable by readers); the
    # inner retrieve that scirag.answer reaches leaves it to its callers
    assert calls.get("check_question") == 3, calls
    _, calls = counted(
        dsn, "scirag_reader", [("SELECT count(*) FROM scirag.retrieve(%s, 10, 'interactive', '{}')", (SAMPLE,))]
    )
    assert calls.get("check_question") == 3, calls  # retrieve's API signature still checks


@pytest.mark.parametrize(
    "sql,params,caller,role",
    [
        ("SELECT scirag.answer(%s, '{}')", (), "scirag.answer", "scirag_reader"),
        ("SELECT count(*) FROM scirag.retrieve(%s)", (), "scirag.retrieve", "scirag_reader"),
        # the internal six-argument retrieve (not for readers) is still bounded, by retrieve_layers
        (
            "SELECT count(*) FROM scirag.retrieve(%s, 10, 'interactive', '{}', NULL, NULL)",
            (),
            "scirag.retrieve_layers",
            "scirag_loader",
        ),
        (
            "SELECT count(*) FROM scirag.retrieve_evidence(%s, 10, 'interactive', '{}')",
            (),
            "scirag.retrieve_layers",
            "scirag_loader",
        ),
    ],
)
def test_a_long_question_is_still_refused_on_every_way_in(dsn, demo_corpus, sql, params, caller, role):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=f"{caller}: the question is 4001 characters"):
        counted(dsn, role, [(sql, ("x" * 4001, *params))])


def test_readers_cannot_hand_in_a_resolved_preset(reader_conn, demo_corpus):
    for sql in (
        "SELECT scirag.retrieve_config('interactive', 10, '{}', '{}')",
        "SELECT count(*) FROM scirag.retrieve('x', 10, 'interactive', '{}', NULL, NULL)",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            reader_conn.execute(sql)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_resolved_preset_gives_the_configuration_and_rows_of_the_name(loader_conn, demo_corpus, preset):
    opts = json.dumps({"preset": preset})
    same = loader_conn.execute(
        "SELECT scirag.retrieve_config('interactive', 10, %s::jsonb) "
        "     = scirag.retrieve_config('interactive', 10, %s::jsonb, scirag.preset_resolve(%s))",
        (opts, opts, preset),
    ).fetchone()[0]
    assert same
    rows = "SELECT rank, chunk_id, score FROM {} ORDER BY rank"
    plain = loader_conn.execute(
        rows.format("scirag.retrieve(%s, 10, 'interactive', %s::jsonb)"), (SAMPLE, opts)
    ).fetchall()
    given = loader_conn.execute(
        rows.format("scirag.retrieve_evidence(%s, 10, 'interactive', %s::jsonb, scirag.preset_resolve(%s))"),
        (SAMPLE, opts, preset),
    ).fetchall()
    assert plain and given == plain


def test_a_resolution_of_another_preset_or_with_a_model_folder_is_not_taken(loader_conn, demo_corpus):
    opts = json.dumps({"preset": "high-recall"})
    own = loader_conn.execute("SELECT scirag.retrieve_config('interactive', 10, %s::jsonb)", (opts,)).fetchone()[0]
    other = loader_conn.execute(
        "SELECT scirag.retrieve_config('interactive', 10, %s::jsonb, scirag.preset_resolve('high-precision'))",
        (opts,),
    ).fetchone()[0]
    assert (
        other == own
        and own["pool"]
        != loader_conn.execute(
            "SELECT scirag.retrieve_config('interactive', 10, '{\"preset\": \"high-precision\"}')->'pool'"
        ).fetchone()[0]
    )
    forged = {"preset": "high-recall", "retrieve": {"rerank": {"reranker": "none", "model_path": "/models/planted"}}}
    cfg = loader_conn.execute(
        "SELECT scirag.retrieve_config('interactive', 10, %s::jsonb, %s::jsonb)", (opts, json.dumps(forged))
    ).fetchone()[0]
    assert "model_path" not in (cfg.get("rerank") or {})


@pytest.mark.parametrize(
    "options,entered",
    [
        ({}, {"answer_generate": 1, "embed_query": 1, "kw_top": 1}),
        (
            {"preset": "high-precision"},  # its rerank stage classifies the intent (intent_bias)
            {"answer_generate": 1, "embed_query": 1, "kw_top": 1, "classify_intent": 1, "rerank": 1},
        ),
    ],
)
def test_an_answer_bootstraps_python_once(dsn, demo_corpus, options, entered):
    """A new connection, as `scirag ask` opens: the first PL/Python function runs
    plpy_bootstrap, the others find the path ready (before: each ran it, 3 and 5 times)."""
    _, calls = counted(dsn, "scirag_reader", [answer_sql(SAMPLE, options)])
    assert python_entries(dsn, calls) == {**entered, "plpy_bootstrap": 1}
