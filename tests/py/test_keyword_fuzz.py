"""The keyword layer never raises, whatever the query text, and ranks like BM25 over an
OR of the question's terms, with "quoted phrases" and -negation.

Runs against the demo corpus ingested into scirag_pytest, as scirag_reader."""

from __future__ import annotations

import json
import os
import random

import psycopg
import pytest

SEED = 20261129

CONTROL = [chr(c) for c in range(1, 32)] + ["\x7f"]  # every C0 control except NUL, and DEL
EMOJI = ["🌾", "🚜", "👩🏽‍🔬", "🏳️‍🌈", "🇩🇪", "💩", "🔥"]
RTL = ["שלום", "قش الأرز", "\u202e", "\u200f", "\u061c", "עברית", "مرحبا"]
COMBINING = ["e\u0301", "a\u0308", "\u0336", "n\u0303", "Z\u0351\u0352\u0353\u0354", "\u20dd", "o\u0328\u0304"]
OTHER = [
    "稻草",
    "ストロー",
    "солома",
    "Ωμέγα",
    "ß",
    "ﬁ",
    "\u00a0",
    "\u200b",
    "\ufeff",
    "\u2028",
    "\ufffd",
    "𝔰𝔱𝔯𝔞𝔴",
    "\U0010fffd",
    "straw",
    "barley",
    "Harlan",
    "corn stover",
    "the",
    "of",
    "-",
    '"',
    "'",
    "\\",
    "&",
    "|",
    "!",
    ":*",
    "<->",
    "(",
    ")",
    ":",
    "*",
    "%",
    "_",
    "$1",
    "E'\\x00'",
    ";",
    "--",
    "/*",
]
POOLS = [CONTROL, EMOJI, RTL, COMBINING, OTHER, [chr(c) for c in range(32, 127)]]


def random_strings(n: int = 300) -> list[str]:
    rng = random.Random(SEED)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 24)):
            pool = rng.choice(POOLS)
            parts.append(rng.choice(pool))
            if rng.random() < 0.3:
                parts.append(" ")
        # a few fully random code points (no surrogates, no NUL)
        for _ in range(rng.randint(0, 4)):
            c = rng.randint(1, 0x10FFFF)
            if not 0xD800 <= c <= 0xDFFF:
                parts.append(chr(c))
        rng.shuffle(parts)
        out.append("".join(parts))
    return out


OPERATORS = [
    "&",
    "|",
    "!",
    "<->",
    "<2>",
    ":*",
    ":A",
    "(",
    ")",
    "\\",
    "'",
    "straw & barley",
    "straw | corn",
    "!straw",
    "!!straw",
    "straw <-> barley",
    "straw <2> corn",
    "stra:*",
    "straw:A",
    "straw:ABCD",
    "straw:*B",
    "(straw",
    "straw)",
    "((straw | corn) & !rice)",
    "\\'",
    "''",
    "'straw'",
    "'straw & corn'",
    "a:*:*",
    "&&&",
    "|||",
    "(((",
    ")))",
    "<0>",
    "<-1>",
    "<99999999999>",
    "straw <-> ",
    " <-> straw",
    "straw & ",
    "& straw",
    "straw\\",
    "\\\\",
    "straw:",
    ":",
    "::",
    "straw & !",
    "! ! !",
    "straw <1> <2> corn",
    "'''",
    '\\"',
    "straw'corn",
    "&|!<->()",
    "straw <-> (corn | rice)",
    "'a' & 'b'",
]
QUOTES = [
    '"',
    '""',
    '"""',
    '" "',
    '"barley straw',
    'barley straw"',
    '"barley" straw"',
    '"the of"',
    '"" straw',
    'straw ""',
    '"barley straw" "corn stover',
    "'barley straw",
    "barley's straw",
    '"-barley"',
    '-"barley straw"',
    '"straw -barley"',
    '"' + "x" * 3000 + '"',
]
NEGATIONS = [
    "-",
    "--",
    "- -",
    "-straw",
    "straw -",
    "---straw",
    "-the",
    "-the -of",
    "straw --barley",
    "straw - barley",
    "residue-to-product ratio",
    "-\u00e9",
    "-🌾",
]
EDGE = [
    "",
    " ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    " \t\n\r\x0b\x0c ",
    "\u3000",
    "\u00a0\u2003",
    "the of and a to",
    "x" * 10000,
    ("barley straw yield " * 600)[:10000],
    "".join(random.Random(SEED).choice("abc def 稻草🌾-\"':&|!()") for _ in range(10000)),
    "a" * 2100 + " straw",  # a word too long to index, then a real one
    "SELECT * FROM scirag.chunks; --",
    "'; DROP TABLE scirag.chunks; --",
    "%s %(x)s {}",
]

ALL_INPUTS = random_strings() + OPERATORS + QUOTES + NEGATIONS + EDGE


def test_inputs_cover_what_they_claim():
    assert len(random_strings()) == 300
    assert random_strings() == random_strings()  # seeded, repeatable
    assert not any("\x00" in s for s in ALL_INPUTS)
    assert any(len(s) == 10000 for s in ALL_INPUTS)
    joined = "".join(random_strings())
    assert any(c in joined for c in CONTROL)
    assert any(c in joined for c in EMOJI)


@pytest.fixture
def keyword_conn(dsn, demo_corpus):
    """A reader login that may also SELECT chunks and documents, to check results against chunks.tsv.
    Readers hold no privilege on evidence tables (policies/reader_wall): this throwaway
    role gets it directly; row-level security still limits it to the reader ceiling."""
    from psycopg.conninfo import make_conninfo

    name = f"kwfuzz_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP ROLE IF EXISTS "{name}"')
        admin.execute(f'CREATE ROLE "{name}" LOGIN IN ROLE scirag_reader')
        admin.execute(f'GRANT SELECT ON scirag.chunks, scirag.documents TO "{name}"')
    conn = psycopg.connect(make_conninfo(dsn, user=name), autocommit=True)
    yield conn
    conn.close()
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'REVOKE ALL ON scirag.chunks, scirag.documents FROM "{name}"')
        admin.execute(f'DROP ROLE "{name}"')


def search(conn, q, n=100):
    return conn.execute("SELECT chunk_id, rank, score FROM scirag.search_keyword(%s, %s)", (q, n)).fetchall()


def retrieve_keyword(conn, q, k=10):
    rows = conn.execute(
        "SELECT rank, chunk_id, score, layers FROM scirag.retrieve(%s, k => %s, options => %s)",
        (q, k, json.dumps({"layers": ["keyword"]})),
    ).fetchall()
    trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    return rows, trace


def check_ranking(rows, n):
    assert len(rows) <= n
    assert [r[1] for r in rows] == list(range(1, len(rows) + 1))
    scores = [r[2] for r in rows]
    assert all(s is not None and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert len({r[0] for r in rows}) == len(rows)


# ---------------------------------------------------------------------------
# Never raises
# ---------------------------------------------------------------------------


def test_search_keyword_never_raises(keyword_conn):
    failures, hits = [], 0
    for q in ALL_INPUTS:
        if len(q) > 4000:
            # called directly, the layer refuses a query over the cap (issue 13), as retrieve does
            with pytest.raises(
                psycopg.errors.InvalidParameterValue, match="^scirag.search_keyword: .*at most 4000 allowed"
            ):
                search(keyword_conn, q)
            continue
        try:
            rows = search(keyword_conn, q)
            check_ranking(rows, 100)
        except Exception as exc:  # collect them all, report them together
            failures.append((q[:80], f"{type(exc).__name__}: {exc}"[:200]))
            continue
        hits += bool(rows)
    assert failures == []
    assert hits >= 50  # the inputs do reach the ranking query, not only the early exits


def test_retrieve_keyword_layer_never_raises_or_errors(keyword_conn):
    failures = []
    for q in ALL_INPUTS:
        if len(q) > 4000:
            # a question over retrieve's cap (issue 13) is refused up front with a clear error
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="at most 4000 allowed"):
                retrieve_keyword(keyword_conn, q)
            continue
        try:
            rows, trace = retrieve_keyword(keyword_conn, q)
            assert len(rows) <= 10
            assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
            stage = next(s for s in trace["stages"] if s["stage"] == "keyword")
            # retrieve swallows a failing layer: the trace must show it did not fail
            assert stage["status"] in ("ok", "empty"), stage
            assert (stage["status"] == "ok") == bool(rows)
            assert all(set(r[3]) == {"keyword"} for r in rows)
        except Exception as exc:
            failures.append((q[:80], f"{type(exc).__name__}: {exc}"[:200]))
    assert failures == []


def test_trace_is_content_free(keyword_conn):
    q = "zanzibarian HX-40 cellulase secret question"
    retrieve_keyword(keyword_conn, q)
    trace = keyword_conn.execute("SELECT scirag.last_trace()::text").fetchone()[0]
    for word in q.split():
        assert word not in trace


# ---------------------------------------------------------------------------
# Empty results where there is nothing to search for
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("q", ["the of and a to", "", " ", "\t\n", "   \u3000 ", '""', "-straw -barley", "&|!()", None])
def test_nothing_to_search_returns_no_rows(keyword_conn, q):
    assert search(keyword_conn, q) == []
    rows, trace = retrieve_keyword(keyword_conn, q)
    assert rows == []
    assert next(s for s in trace["stages"] if s["stage"] == "keyword")["status"] == "empty"


@pytest.mark.parametrize("n", [0, -5, None])
def test_non_positive_n_returns_no_rows(keyword_conn, n):
    assert search(keyword_conn, "barley straw", n) == []


def test_n_limits_rows(keyword_conn):
    assert len(search(keyword_conn, "straw", 3)) == 3
    assert len(search(keyword_conn, "straw", 1000)) > 3


# ---------------------------------------------------------------------------
# Ranking behaviour
# ---------------------------------------------------------------------------

QUESTION = "how much barley straw does Harlan County produce"


def chunk_matches(conn, chunk_ids, tsquery_sql, arg):
    """chunk ids among chunk_ids whose tsv matches the tsquery expression."""
    return {
        r[0]
        for r in conn.execute(
            f"SELECT id FROM scirag.chunks WHERE id = ANY (%s) AND tsv @@ {tsquery_sql}", (list(chunk_ids), arg)
        )
    }


def test_natural_language_question_is_not_anded_to_zero(keyword_conn):
    rows = search(keyword_conn, QUESTION)
    assert rows, "a natural-language question must not be ANDed into zero hits"
    anded = keyword_conn.execute(
        "SELECT count(*) FROM scirag.chunks WHERE tsv @@ plainto_tsquery('english', %s)", (QUESTION,)
    ).fetchone()[0]
    assert len(rows) > anded  # terms are OR-ed
    top = keyword_conn.execute(
        "SELECT d.external_id, c.content FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE c.id = %s",
        (rows[0][0],),
    ).fetchone()
    assert top[0] == "county-straw-2022"  # the only document that names Harlan County
    assert "Harlan" in top[1]


def test_question_through_retrieve_returns_cited_hits(keyword_conn):
    rows = keyword_conn.execute(
        "SELECT rank, external_id, citation FROM scirag.retrieve(%s, k => 5, options => %s)",
        (QUESTION, json.dumps({"layers": ["keyword"]})),
    ).fetchall()
    assert len(rows) == 5
    assert rows[0][1] == "county-straw-2022"
    assert all(r[2].get("cite") for r in rows)


def test_rare_term_outranks_common_terms(keyword_conn):
    # BM25: idf makes "Fenwick" (one document) dominate "straw" (everywhere)
    rows = search(keyword_conn, "straw Fenwick")
    top = keyword_conn.execute("SELECT content FROM scirag.chunks WHERE id = %s", (rows[0][0],)).fetchone()[0]
    assert "Fenwick" in top


def test_quoted_phrase_must_occur_as_phrase(keyword_conn):
    unquoted = search(keyword_conn, "stover corn")
    quoted = search(keyword_conn, '"corn stover"')
    assert quoted and unquoted
    ids = {r[0] for r in quoted}
    assert chunk_matches(keyword_conn, ids, "phraseto_tsquery('english', %s)", "corn stover") == ids
    # the quotes did narrow the OR-ed terms
    loose = {r[0] for r in unquoted}
    assert loose - chunk_matches(keyword_conn, loose, "phraseto_tsquery('english', %s)", "corn stover")


def test_quoted_phrase_with_other_terms(keyword_conn):
    rows = search(keyword_conn, '"barley straw" ash content')
    ids = {r[0] for r in rows}
    assert ids
    assert chunk_matches(keyword_conn, ids, "phraseto_tsquery('english', %s)", "barley straw") == ids


def test_reversed_phrase_matches_nothing(keyword_conn):
    assert search(keyword_conn, '"stover corn"') == []


def test_negation_excludes_term(keyword_conn):
    plain = {r[0] for r in search(keyword_conn, "straw", 1000)}
    negated = {r[0] for r in search(keyword_conn, "straw -barley", 1000)}
    with_barley = chunk_matches(keyword_conn, plain, "plainto_tsquery('english', %s)", "barley")
    assert with_barley, "the corpus has straw chunks that mention barley"
    assert negated
    assert not chunk_matches(keyword_conn, negated, "plainto_tsquery('english', %s)", "barley")
    assert negated == plain - with_barley


def test_hyphenated_word_is_not_a_negation(keyword_conn):
    rows = search(keyword_conn, "residue-to-product ratio")
    ids = {r[0] for r in rows}
    assert ids
    assert chunk_matches(keyword_conn, ids, "plainto_tsquery('english', %s)", "product")


def test_bug_negated_phrase_excludes_the_phrase(keyword_conn):
    """BUG (reported, search_keyword.sql): in 'straw -"barley straw"' the quoted phrase is
    collected as a *required* phrase before negation is parsed, so the query returns only
    chunks containing "barley straw": the opposite of what the user asked for."""
    rows = search(keyword_conn, 'straw -"barley straw"', 1000)
    ids = {r[0] for r in rows}
    assert ids
    assert not chunk_matches(keyword_conn, ids, "phraseto_tsquery('english', %s)", "barley straw")


def test_scope_applies_to_keyword_hits(keyword_conn, admin_conn):
    # the default reader scope is public + open_commercial: the restricted memo's own terms
    # and the unknown/noncommercial documents never come back
    ids = [r[0] for r in search(keyword_conn, "HX-40 cellulase glucose saccharification straw soil carbon", 1000)]
    assert ids
    licenses = {
        r[0] for r in admin_conn.execute("SELECT DISTINCT license::text FROM scirag.chunks WHERE id = ANY (%s)", (ids,))
    }
    assert licenses <= {"public", "open_commercial"}
    everything = {
        r[0]
        for r in admin_conn.execute(
            "SELECT DISTINCT license::text FROM scirag.chunks WHERE tsv @@ to_tsquery('english', 'cellulase | soil')"
        )
    }
    assert {"restricted", "unknown"} <= everything  # they exist, the reader just cannot see them
