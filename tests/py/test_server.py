"""The HTTP door (`scirag serve`): the real server on the loopback against the real
database with the demo corpus. Keys, scope, problem+json, SSE vs JSON, BYO model keys,
rate limits, content-free logs, and MCP over streamable HTTP behind the same keys."""

from __future__ import annotations

import time

import anyio
import psycopg
import pytest

from scirag.server import events as ev
from scirag.server.keys import CACHE_SECONDS, MISS_REFRESH_SECONDS
from scirag_helpers import text as text_rules
from test_server_harness import (
    RESTRICTED_DOC,
    RESTRICTED_QUESTION,
    SAMPLE_QUESTION,
    bearer,
    http,
    make_key,
    psql_evidence,
    restricted_chunk_ids,
    server,
    server_keys,
)

PROBLEM = "application/problem+json"


def strip_ms(x):
    """Timings differ between two calls; everything else must not."""
    if isinstance(x, dict):
        return {k: strip_ms(v) for k, v in x.items() if k not in ("ms", "prompt_ms")}
    if isinstance(x, list):
        return [strip_ms(v) for v in x]
    return x


# ---------------------------------------------------------------------------
# pieces without a server
# ---------------------------------------------------------------------------


def test_events_aggregate_to_the_answer():
    result = {
        "trace": {"ms": 1},
        "answer": "First claim [1]. Second one [2]! Third?",
        "abstained": False,
        "citations": [{"n": 1}, {"n": 2}],
        "retrieval": [],
        "sources": [{"n": 1}],
        "checks": {"a": [1]},
    }
    events = list(ev.answer_events(result))
    assert ev.aggregate(events) == result
    assert [e for e, _ in events].count("answer.delta") == 3
    assert events[0][0] == "answer.delta" and events[-1] == ("field", {"name": "trace", "value": {"ms": 1}})
    body = b"".join(ev.sse(e, d) for e, d in events).decode()
    assert ev.aggregate(ev.parse_sse(body)) == result


@pytest.mark.parametrize(
    "answer",
    [
        "Smith et al. reported 1.5 t/ha [1]. J. Doe disagreed (Fig. 2) [2]!\n\nA second paragraph. Yes?",
        "  One sentence without a mark  ",
        "",
    ],
)
def test_answer_deltas_are_the_one_splitter_s_sentences(answer):
    """answer.delta pieces are cut where scirag_helpers.text starts a sentence (not after
    "et al." or "J."), and join back to the answer exactly."""
    deltas = [d["text"] for e, d in ev.answer_events({"answer": answer}) if e == "answer.delta"]
    assert "".join(deltas) == answer
    assert [d.strip() for d in deltas] == [answer[a:b].strip() for a, b in text_rules.sentence_spans(answer)]


def test_scope_settings_refuse_list_items_that_would_split():
    from scirag.server.service import BadRequest, Scope

    assert Scope(licenses=[]).settings() == [("scirag.licenses", "")]  # [] = nothing, fail closed
    assert Scope(sources=["a", "b"], exclude_retracted=True).settings() == [
        ("scirag.sources", "a,b"),
        ("scirag.exclude_retracted", "on"),
    ]
    with pytest.raises(BadRequest, match="scope.sources"):
        Scope(sources=["a,b"]).settings()


def test_positive_filters_become_settings_with_their_separators():
    from scirag.server.service import BadRequest, Scope

    assert Scope(documents=["a", "7"], years=["2019", "2020-"], authors=["Lovelace, Ada", "Turing"]).settings() == [
        ("scirag.documents", "a,7"),
        ("scirag.years", "2019,2020-"),
        ("scirag.authors", "Lovelace, Ada;Turing"),
    ]
    with pytest.raises(BadRequest, match="scope.authors.*semicolons"):
        Scope(authors=["a;b"]).settings()
    with pytest.raises(BadRequest, match="scope.documents"):
        Scope(documents=["a,b"]).settings()


def test_unknown_keys_never_reach_the_database():
    """The active keys are read once per CACHE_SECONDS; any number of unknown keys costs
    no further query (so they need no shared limit that could lock a valid key out)."""
    from contextlib import asynccontextmanager

    from scirag.server.keys import KeyStore, hash_key

    queries = []

    class FakeConn:
        async def execute(self, sql, params=None):
            queries.append(sql)

            class Cur:
                async def fetchall(self):
                    return [
                        {
                            "key_hash": hash_key("scirag_good"),
                            "id": 7,
                            "name": "good",
                            "role_name": "scirag_reader",
                            "byo_llm": False,
                            "rate_per_minute": 10,
                        }
                    ]

            return Cur()

    class FakePool:
        @asynccontextmanager
        async def connection(self):
            yield FakeConn()

    store = KeyStore(FakePool())

    async def main():
        out = [await store.lookup(f"scirag_wrong{i}") for i in range(1000)]
        return out, await store.lookup("scirag_good"), await store.active_count()

    t0 = time.monotonic()
    misses, good, count = anyio.run(main)
    assert misses == [None] * 1000 and good.name == "good" and count == 1
    # one read, then at most one more per MISS_REFRESH_SECONDS of misses
    assert len(queries) <= 2 + (time.monotonic() - t0) / MISS_REFRESH_SECONDS


# ---------------------------------------------------------------------------
# keys
# ---------------------------------------------------------------------------


def test_no_key_is_401_problem_json(server):
    r = http(server.url + "/v1/retrieve", "POST", {"question": SAMPLE_QUESTION})
    assert r.status == 401
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["code"] == "missing_key" and r.json()["status"] == 401
    assert r.headers.get("x-request-id")
    assert r.headers.get("www-authenticate", "").startswith("Bearer")
    bad = http(server.url + "/v1/scope", headers=bearer("scirag_not-a-real-key"))
    assert bad.status == 401 and bad.json()["code"] == "invalid_key"
    # health needs no key
    health = http(server.url + "/healthz").json()
    assert health["status"] == "ok" and health["database"] == "ok" and health["primary"]["reachable"]
    assert "standbys" in health and "host" not in str(health)  # replica lag, never a host name


def test_keys_are_stored_hashed_and_admin_only(dsn, server_keys):
    import hashlib

    with psycopg.connect(dsn, autocommit=True) as conn:
        dump = " ".join(str(r) for r in conn.execute("SELECT t::text FROM scirag.api_keys t").fetchall())
        stored = {bytes(r[0]) for r in conn.execute("SELECT key_hash FROM scirag.api_keys").fetchall()}
        conn.execute("SET ROLE scirag_reader")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM scirag.api_keys")
    for key in server_keys.values():
        assert key not in dump
        assert hashlib.sha256(key.encode()).digest() in stored


def test_a_key_cannot_map_to_a_role_that_escapes_rls(dsn):
    from scirag.server.keys import add_key

    with psycopg.connect(dsn) as conn:
        with pytest.raises(psycopg.Error, match="superuser, bypasses RLS or owns the tables"):
            add_key(conn, "pytest-server-evil", "postgres")


def test_request_id_is_echoed_or_made(server, server_keys):
    r = http(server.url + "/v1/scope", headers={**bearer(server_keys["reader"]), "X-Request-ID": "abc-123"})
    assert r.status == 200 and r.headers["x-request-id"] == "abc-123"
    r = http(server.url + "/v1/scope", headers={**bearer(server_keys["reader"]), "X-Request-ID": "bad id\u00e9"})
    assert r.headers["x-request-id"] != "bad id" and len(r.headers["x-request-id"]) == 32


def test_rate_limit_per_key(server, server_keys):
    codes = [http(server.url + "/v1/scope", headers=bearer(server_keys["slow"])).status for _ in range(5)]
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
    r = http(server.url + "/v1/scope", headers=bearer(server_keys["slow"]))
    assert r.json()["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
    # another key is not affected
    assert http(server.url + "/v1/scope", headers=bearer(server_keys["reader"])).status == 200


def test_revoked_key_is_refused(server, dsn):
    from scirag.server.keys import revoke_key

    key = make_key(dsn, "revoked")
    time.sleep(MISS_REFRESH_SECONDS)  # a new key works within MISS_REFRESH_SECONDS
    assert http(server.url + "/v1/scope", headers=bearer(key)).status == 200
    with psycopg.connect(dsn) as conn:
        revoke_key(conn, "pytest-server-revoked")
    deadline = time.monotonic() + CACHE_SECONDS + 3
    while http(server.url + "/v1/scope", headers=bearer(key)).status == 200:
        assert time.monotonic() < deadline, "a revoked key still works"
        time.sleep(0.5)
    assert http(server.url + "/v1/scope", headers=bearer(key)).json()["code"] == "invalid_key"


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body,code,needle",
    [
        ({"question": SAMPLE_QUESTION, "k": 0}, "invalid_request", "k"),
        ({"question": SAMPLE_QUESTION, "k": 101}, "invalid_request", "k"),  # REST's bound of k: 100
        ({"question": ""}, "invalid_request", "question"),
        ({"question": SAMPLE_QUESTION, "surprise": 1}, "invalid_request", "surprise"),
        ({"question": SAMPLE_QUESTION, "options": {"bogus": 1}}, "invalid_argument", "bogus"),
        ({"question": SAMPLE_QUESTION, "scope": {"licenses": ["nonsense"]}}, "invalid_argument", "nonsense"),
        ({"question": SAMPLE_QUESTION, "scope": {"sources": ["a,b"]}}, "invalid_request", "scope.sources"),
    ],
)
def test_bad_request_is_problem_json(server, server_keys, body, code, needle):
    r = http(server.url + "/v1/retrieve", "POST", body, headers=bearer(server_keys["reader"]))
    assert r.status == 400, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    p = r.json()
    assert p["code"] == code and needle in p["detail"]
    assert p["type"].endswith("/" + code) and p["instance"] == "/v1/retrieve"
    assert p["request_id"] == r.headers["x-request-id"]


def test_unknown_route_and_method_are_problem_json(server, server_keys):
    r = http(server.url + "/v1/nope", headers=bearer(server_keys["reader"]))
    assert r.status == 404 and r.headers["content-type"].startswith(PROBLEM) and r.json()["code"] == "not_found"
    r = http(server.url + "/v1/retrieve", headers=bearer(server_keys["reader"]))
    assert r.status == 405 and r.json()["code"] == "method_not_allowed"
    r = http(server.url + "/v1/answer", "POST", {"question": "   "}, headers=bearer(server_keys["reader"]))
    assert r.status == 400 and r.json()["code"] == "invalid_argument", r.text


def test_openapi_lists_the_v1_endpoints(server):
    spec = http(server.url + "/openapi.json").json()
    for path in ("/v1/retrieve", "/v1/answer", "/v1/documents/{ref}", "/v1/chunks/{chunk_id}", "/v1/scope", "/healthz"):
        assert path in spec["paths"]
    assert http(server.url + "/docs").status == 404  # no Swagger UI from a CDN on this origin (issue 26)


# ---------------------------------------------------------------------------
# scope: a reader key sees what scirag_reader sees from psql, never more
# ---------------------------------------------------------------------------


def rest_evidence(server, key, question, k=10, scope=None):
    body = {"question": question, "k": k, **({"scope": scope} if scope else {})}
    r = http(server.url + "/v1/retrieve", "POST", body, headers=bearer(key))
    assert r.status == 200, r.text
    return [(x["rank"], x["chunk_id"]) for x in r.json()["results"]]


def test_reader_key_sees_what_psql_reader_sees(server, server_keys, dsn):
    hidden = restricted_chunk_ids(dsn)
    assert hidden, "the demo corpus has a restricted document"
    for q in (SAMPLE_QUESTION, RESTRICTED_QUESTION):
        want = psql_evidence(dsn, q, 10)
        got = rest_evidence(server, server_keys["reader"], q, 10)
        assert got == want and got
        assert not {c for _, c in got} & hidden


def test_scope_can_narrow_never_widen(server, server_keys, dsn):
    hidden = restricted_chunk_ids(dsn)
    key = server_keys["reader"]
    # asking for restricted as a reader: the ceiling intersects it away -> nothing
    assert rest_evidence(server, key, RESTRICTED_QUESTION, scope={"licenses": ["restricted"]}) == []
    scope = http(server.url + "/v1/scope?licenses=restricted,public", headers=bearer(key)).json()
    assert scope["licenses"] == ["public"] and scope["role"] == "scirag_reader"
    # the loader role's ceiling includes restricted: the same request there does see it,
    # so the reader result above is the ceiling at work, not an empty corpus
    seen = rest_evidence(server, server_keys["loader"], RESTRICTED_QUESTION, scope={"licenses": ["restricted"]})
    assert seen and {c for _, c in seen} <= hidden
    # narrowing: excluding a document removes it
    base = http(server.url + "/v1/retrieve", "POST", {"question": SAMPLE_QUESTION}, headers=bearer(key)).json()
    top_doc = base["results"][0]["external_id"]
    narrowed = http(
        server.url + "/v1/retrieve",
        "POST",
        {"question": SAMPLE_QUESTION, "scope": {"exclude_documents": [top_doc]}},
        headers=bearer(key),
    )
    assert narrowed.status == 200 and top_doc not in {x["external_id"] for x in narrowed.json()["results"]}
    # an empty license list means nothing (fail closed)
    assert rest_evidence(server, key, SAMPLE_QUESTION, scope={"licenses": []}) == []


def test_ask_one_paper_through_rest_and_mcp(server, server_keys, dsn):
    key = server_keys["reader"]
    base = http(server.url + "/v1/retrieve", "POST", {"question": SAMPLE_QUESTION}, headers=bearer(key)).json()
    docs = [x["external_id"] for x in base["results"]]
    other = next(d for d in docs if d != docs[0])  # a document that is not the best match
    body = {"question": SAMPLE_QUESTION, "scope": {"documents": [other]}}
    narrowed = http(server.url + "/v1/retrieve", "POST", body, headers=bearer(key)).json()["results"]
    assert narrowed and {x["external_id"] for x in narrowed} == {other}
    answered = http(server.url + "/v1/answer", "POST", body, headers=bearer(key)).json()
    assert {c["external_id"] for c in answered["citations"]} <= {other}
    scope = http(server.url + f"/v1/scope?documents={other}&years=1900-2100", headers=bearer(key)).json()
    assert scope["filtered_documents"] == 1 and scope["filters"] == {"documents": other, "years": "1900-2100"}
    # a restricted document named as a filter stays invisible: filters narrow only
    hidden = {"question": RESTRICTED_QUESTION, "scope": {"documents": [RESTRICTED_DOC]}}
    assert http(server.url + "/v1/retrieve", "POST", hidden, headers=bearer(key)).json()["results"] == []
    # a bad value is the caller's error, named
    bad = http(
        server.url + "/v1/retrieve", "POST", {"question": "x", "scope": {"years": ["19x9"]}}, headers=bearer(key)
    )
    assert bad.status in (400, 422) and "scirag.years" in bad.text, bad.text

    async def run(c):
        return await c.call_tool("retrieve", {"question": SAMPLE_QUESTION, "k": 10, "documents": [other]})

    r = mcp_session(server.url, key, run)
    assert not r.is_error and {x["external_id"] for x in r.structured_content["results"]} == {other}


def test_profile_names_come_from_the_database(server, server_keys, dsn):
    """The doors check a profile name's shape and length; which names exist is the
    database's: a row added to scirag.retrieval_profiles is usable at once through REST
    and MCP, and an unknown name is refused by scirag.retrieve, named."""
    key = server_keys["reader"]
    with psycopg.connect(dsn, autocommit=True) as conn:  # superuser: an admin adding a profile
        conn.execute(
            "INSERT INTO scirag.retrieval_profiles (name, config, description) "
            "SELECT 'issue28-test', config, 'a copy of interactive (test)' FROM scirag.retrieval_profiles "
            "WHERE name = 'interactive'"
        )
    try:
        body = {"question": SAMPLE_QUESTION, "profile": "issue28-test"}
        r = http(server.url + "/v1/retrieve", "POST", body, headers=bearer(key))
        assert r.status == 200, r.text
        assert r.json()["trace"]["profile"] == "issue28-test" and r.json()["results"]

        async def run(c):
            return await c.call_tool("retrieve", {"question": SAMPLE_QUESTION, "profile": "issue28-test"})

        m = mcp_session(server.url, key, run)
        assert not m.is_error and m.structured_content["results"]
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DELETE FROM scirag.retrieval_profiles WHERE name = 'issue28-test'")
    gone = http(server.url + "/v1/retrieve", "POST", body, headers=bearer(key))
    assert gone.status == 400 and gone.json()["code"] == "invalid_argument", gone.text
    assert 'unknown profile "issue28-test"' in gone.json()["detail"]
    # shape and length at the door, before any query
    for bad in ("deep rrf", "x" * 64, "", "deep;--"):
        r = http(server.url + "/v1/retrieve", "POST", {"question": "x", "profile": bad}, headers=bearer(key))
        assert r.status == 400 and r.json()["code"] == "invalid_request" and "profile" in r.json()["detail"], r.text

    async def bad_mcp(c):
        return await c.call_tool("retrieve", {"question": "x", "profile": "x" * 64})

    assert mcp_session(server.url, key, bad_mcp).is_error


def test_chunks_and_documents_go_through_rls(server, server_keys, dsn):
    key = server_keys["reader"]
    hidden = sorted(restricted_chunk_ids(dsn))
    assert http(server.url + f"/v1/chunks/{hidden[0]}", headers=bearer(key)).status == 404
    assert http(server.url + f"/v1/documents/{RESTRICTED_DOC}", headers=bearer(key)).status == 404
    assert (
        http(server.url + f"/v1/chunks/{hidden[0]}?licenses=restricted", headers=bearer(server_keys["loader"])).status
        == 200
    )
    top = psql_evidence(dsn, SAMPLE_QUESTION, 1)[0][1]
    c = http(server.url + f"/v1/chunks/{top}?context=1", headers=bearer(key)).json()
    assert c["chunk_id"] == top and c["section_path"] and c["line_start"] is not None
    before = [x for x in c["context"] if x["ordinal"] < c["ordinal"]]
    after = [x for x in c["context"] if x["ordinal"] > c["ordinal"]]
    assert len(before) <= 1 and len(after) <= 1 and before + after == c["context"] and c["context"]
    assert all(x["kind"] != "section" and x["chunk_id"] != top for x in c["context"])
    d = http(server.url + f"/v1/documents/{c['document_id']}", headers=bearer(key)).json()
    assert d["external_id"] == c["external_id"] and top in {x["chunk_id"] for x in d["chunks"]}
    assert "source_path" not in d  # no server paths


# ---------------------------------------------------------------------------
# answers: JSON and SSE agree
# ---------------------------------------------------------------------------


def test_sse_aggregate_equals_json(server, server_keys):
    key = server_keys["reader"]
    body = {"question": SAMPLE_QUESTION}
    j = http(server.url + "/v1/answer", "POST", body, headers=bearer(key))
    assert j.status == 200 and j.headers["content-type"].startswith("application/json")
    s = http(server.url + "/v1/answer", "POST", body, headers={**bearer(key), "Accept": "text/event-stream"})
    assert s.status == 200 and s.headers["content-type"].startswith("text/event-stream")
    events = ev.parse_sse(s.text)
    kinds = [e for e, _ in events]
    assert kinds[0] == "answer.delta" and kinds[-1] == "done" and "citation" in kinds and "evidence" in kinds
    assert events[-1][1]["request_id"] == s.headers["x-request-id"]
    answer = j.json()
    assert strip_ms(ev.aggregate(events)) == strip_ms(answer)
    assert answer["citations"] and not answer["abstained"]
    assert all(f"[{c['n']}]" in answer["answer"] for c in answer["citations"])
    # "stream": true in the body is the same as the Accept header
    s2 = http(server.url + "/v1/answer", "POST", {**body, "stream": True}, headers=bearer(key))
    assert strip_ms(ev.aggregate(ev.parse_sse(s2.text))) == strip_ms(answer)


def test_answer_never_cites_a_restricted_chunk_for_a_reader(server, server_keys, dsn):
    hidden = restricted_chunk_ids(dsn)
    a = http(
        server.url + "/v1/answer", "POST", {"question": RESTRICTED_QUESTION}, headers=bearer(server_keys["reader"])
    ).json()
    cited = {c["chunk_id"] for c in a["citations"]} | {r["chunk_id"] for r in a["retrieval"]}
    assert not cited & hidden
    assert "HX-40" not in a["answer"] or a["abstained"]


# ---------------------------------------------------------------------------
# BYO model keys and content-free logs
# ---------------------------------------------------------------------------


def test_byo_llm_key_is_gated_and_never_stored_or_logged(server, server_keys, dsn):
    secret = "byo-" + "Zq9" * 12
    hdr = {"X-LLM-API-Key": secret}
    refused = http(
        server.url + "/v1/answer",
        "POST",
        {"question": SAMPLE_QUESTION},
        headers={**bearer(server_keys["reader"]), **hdr},
    )
    assert refused.status == 403 and refused.json()["code"] == "byo_llm_not_allowed"
    ok = http(
        server.url + "/v1/answer", "POST", {"question": SAMPLE_QUESTION}, headers={**bearer(server_keys["byo"]), **hdr}
    )
    assert ok.status == 200, ok.text
    assert secret not in ok.text
    # nothing in the server's logs
    assert secret not in server.log()
    with psycopg.connect(dsn, autocommit=True) as conn:
        # nothing in any table of the database (every row of every table, as text)
        tables = conn.execute(
            "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for (t,) in tables:
            n = conn.execute(f"SELECT count(*) FROM {t} x WHERE x::text LIKE %s", (f"%{secret}%",)).fetchone()[0]
            assert n == 0, f"BYO key found in {t}"
        # nor in another session's view of the pooled connections, nor in PostgreSQL's log
        acts = conn.execute("SELECT coalesce(string_agg(query, ' '), '') FROM pg_stat_activity").fetchone()[0]
        assert secret not in acts
        logfile = conn.execute("SELECT pg_current_logfile()").fetchone()[0]
        datadir = conn.execute("SHOW data_directory").fetchone()[0]
    from pathlib import Path

    candidates = [Path(datadir) / logfile] if logfile else []
    candidates += [p for p in Path(datadir).glob("*.log")]
    for p in candidates:
        if p.is_file():
            assert secret not in p.read_text(errors="replace"), f"BYO key in {p}"


def test_access_log_is_content_free(server, server_keys):
    marker = "Quokka" + "Xylophone" * 3
    r = http(
        server.url + "/v1/retrieve",
        "POST",
        {"question": f"{marker} straw?"},
        headers={**bearer(server_keys["reader"]), "X-Request-ID": "log-check-1"},
    )
    assert r.status == 200
    http(
        server.url + "/v1/retrieve",
        "POST",
        {"question": marker, "options": {"bogus": 1}},
        headers=bearer(server_keys["reader"]),
    )
    log = server.log()
    assert "log-check-1 POST /v1/retrieve 200" in log
    assert marker not in log
    assert server_keys["reader"] not in log


# ---------------------------------------------------------------------------
# MCP over streamable HTTP, behind the same keys
# ---------------------------------------------------------------------------


def mcp_session(url, key, fn, headers=None):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        http_client = create_mcp_http_client(headers={**(bearer(key) if key else {}), **(headers or {})})
        async with http_client:
            async with Client(streamable_http_client(url + "/mcp", http_client=http_client)) as c:
                return await fn(c)

    return anyio.run(main)


def test_mcp_lists_and_calls_the_tools(server, server_keys, dsn):
    hidden = restricted_chunk_ids(dsn)

    async def run(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        r = await c.call_tool("retrieve", {"question": RESTRICTED_QUESTION, "k": 10})
        a = await c.call_tool("answer", {"question": SAMPLE_QUESTION})
        s = await c.call_tool("current_scope", {})
        ch = await c.call_tool("get_chunk", {"chunk_id": min(hidden)})
        d = await c.call_tool("get_document", {"document": "county-straw-2022"})
        return tools, r, a, s, ch, d

    tools, r, a, s, ch, d = mcp_session(server.url, server_keys["reader"], run)
    assert set(tools) == {"retrieve", "answer", "get_chunk", "get_document", "current_scope"} | {
        "campaign_next",
        "campaign_decide",
        "campaign_prisma",
        "campaign_new",
        "campaign_discover",
        "campaign_resolve",
        "campaign_fetch",
        "campaign_reports",
        "campaign_assess",
    }
    for t in tools.values():
        assert t.description and t.input_schema["type"] == "object"
    assert tools["retrieve"].input_schema["required"] == ["question"]
    assert not r.is_error
    got = [(x["rank"], x["chunk_id"]) for x in r.structured_content["results"]]
    assert got == psql_evidence(dsn, RESTRICTED_QUESTION, 10) and not {c for _, c in got} & hidden
    assert not a.is_error and a.structured_content["citations"]
    assert s.structured_content["role"] == "scirag_reader"
    assert ch.is_error and "not_found" in ch.content[0].text
    assert d.structured_content["external_id"] == "county-straw-2022"


def test_mcp_needs_a_key(server):
    r = http(
        server.url + "/mcp",
        "POST",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert r.status == 401 and r.headers["content-type"].startswith(PROBLEM)
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own exception types
        mcp_session(server.url, None, lambda c: c.list_tools())


def test_pooled_connection_carries_role_scope_and_byo_key_for_one_call_only(dsn, demo_corpus):
    """The transport under every door: the role, the narrowing and a BYO key reach the
    database session for one call and are gone when the connection is reused."""
    from scirag.server.keys import Identity
    from scirag.server.service import LLM_KEY_SETTING, Scope, Service

    ident = Identity("t", "scirag_reader", True, None)
    probe = [
        (
            f"SELECT current_user AS u, current_setting('{LLM_KEY_SETTING}', true) AS k, "
            "scirag.current_scope() AS s, scirag.last_trace() AS t",
            None,
        )
    ]

    async def main():
        svc = Service(dsn, min_size=1, max_size=1)  # one backend: the second call reuses it
        await svc.open()
        try:
            ((first,),) = await svc.run(
                ident, probe, scope=Scope(licenses=["public"], exclude_retracted=True), llm_key="sek-123"
            )
            await svc.retrieve(ident, SAMPLE_QUESTION, k=2)  # leaves a session-level trace behind
            ((second,),) = await svc.run(ident, probe)
            async with svc.pools["scirag_reader"].connection() as conn:  # between calls: the admin login
                idle = await (
                    await conn.execute("SELECT current_user AS u, current_setting('scirag.licenses', true) AS l")
                ).fetchone()
            return first, second, idle
        finally:
            await svc.close()

    first, second, idle = anyio.run(main)
    assert first["u"] == "scirag_reader" and first["k"] == "sek-123"
    assert first["s"]["licenses"] == ["public"] and first["s"]["exclude_retracted"] is True
    assert second["k"] in (None, "") and second["t"] is None
    assert second["s"]["licenses"] == ["open_commercial", "public"] and second["s"]["exclude_retracted"] is False
    assert idle["u"] != "scirag_reader" and idle["l"] == "default"


def test_mcp_answer_byo_key_is_gated_like_rest(server, server_keys):
    secret = "byo-mcp-" + "Kx7" * 10

    async def ask(c):
        return await c.call_tool("answer", {"question": SAMPLE_QUESTION})

    refused = mcp_session(server.url, server_keys["reader"], ask, headers={"X-LLM-API-Key": secret})
    assert refused.is_error and "byo_llm_not_allowed" in refused.content[0].text
    ok = mcp_session(server.url, server_keys["byo"], ask, headers={"X-LLM-API-Key": secret})
    assert not ok.is_error and ok.structured_content["citations"]
    assert secret not in server.log()
