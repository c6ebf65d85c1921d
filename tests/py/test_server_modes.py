"""`scirag mcp` over stdio, and local-only mode of `scirag serve` (no keys)."""

from __future__ import annotations

import subprocess
import sys
import time

import anyio
import psycopg
import pytest

from scirag.server.keys import CACHE_SECONDS
from test_server_harness import (
    KEY_PREFIX,
    RESTRICTED_QUESTION,
    ROOT,
    SAMPLE_QUESTION,
    ServerProc,
    http,
    make_key,
    psql_evidence,
    restricted_chunk_ids,
)


def test_mcp_over_stdio_lists_and_calls_the_tools(dsn, demo_corpus, tmp_path):
    from mcp import Client, StdioServerParameters

    errlog = open(tmp_path / "mcp.stderr", "w")

    async def main():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "scirag.cli", "mcp", "--dsn", dsn], cwd=str(ROOT)
        )
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params, errlog=errlog)) as c:
            tools = sorted(t.name for t in (await c.list_tools()).tools)
            r = await c.call_tool("retrieve", {"question": RESTRICTED_QUESTION, "k": 10})
            s = await c.call_tool("current_scope", {"licenses": ["restricted", "public"]})
            return tools, r, s

    tools, r, s = anyio.run(main)
    errlog.close()
    assert tools == [
        "answer",
        "campaign_assess",
        "campaign_decide",
        "campaign_discover",
        "campaign_fetch",
        "campaign_new",
        "campaign_next",
        "campaign_prisma",
        "campaign_reports",
        "campaign_resolve",
        "current_scope",
        "get_chunk",
        "get_document",
        "retrieve",
    ]
    got = [(x["rank"], x["chunk_id"]) for x in r.structured_content["results"]]
    assert got == psql_evidence(dsn, RESTRICTED_QUESTION, 10)
    assert not {c for _, c in got} & restricted_chunk_ids(dsn)
    assert s.structured_content["role"] == "scirag_reader" and s.structured_content["licenses"] == ["public"]


@pytest.fixture
def no_active_keys(dsn, demo_corpus):
    """Local-only mode needs a database without active keys: park the active ones, restore after."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        parked = [
            r[0]
            for r in conn.execute(
                "UPDATE scirag.api_keys SET revoked_at = now() WHERE revoked_at IS NULL RETURNING id"
            ).fetchall()
        ]
    yield
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM scirag.api_keys WHERE name = %s", (KEY_PREFIX + "late",))
        conn.execute("UPDATE scirag.api_keys SET revoked_at = NULL WHERE id = ANY(%s)", (parked,))


def test_local_only_mode_warns_binds_loopback_and_closes_when_a_key_appears(dsn, no_active_keys, tmp_path):
    refused = subprocess.run(
        [sys.executable, "-m", "scirag.cli", "serve", "--dsn", dsn, "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert refused.returncode != 0 and "local-only" in refused.stderr
    srv = ServerProc(dsn, tmp_path / "local.log")
    try:
        assert "LOCAL-ONLY MODE" in srv.log() and "WITHOUT authentication" in srv.log()
        r = http(srv.url + "/v1/retrieve", "POST", {"question": SAMPLE_QUESTION, "k": 3})
        assert r.status == 200 and [(x["rank"], x["chunk_id"]) for x in r.json()["results"]] == psql_evidence(
            dsn, SAMPLE_QUESTION, 3
        )
        assert http(srv.url + "/v1/scope").json()["role"] == "scirag_reader"
        # a key made while the server runs closes the open door (never the other way round)
        key = make_key(dsn, "late")
        deadline = time.monotonic() + CACHE_SECONDS + 3
        while http(srv.url + "/v1/scope").status == 200:
            assert time.monotonic() < deadline, "local-only mode stayed open after a key was made"
            time.sleep(0.5)
        assert http(srv.url + "/v1/scope").json()["code"] == "missing_key"
        assert http(srv.url + "/v1/scope", headers={"Authorization": f"Bearer {key}"}).status == 200
    finally:
        srv.stop()
