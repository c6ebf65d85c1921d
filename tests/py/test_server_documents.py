"""REST for the library (issue 25): GET /v1/documents, DELETE and PATCH
/v1/documents/{ref}, on the real server with the demo corpus."""

from __future__ import annotations

import uuid

from test_server_harness import SAMPLE_QUESTION, bearer, http, server, server_keys


def mcp_session(url, key, fn):
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        async with create_mcp_http_client(headers=bearer(key)) as http_client:
            async with Client(streamable_http_client(url + "/mcp", http_client=http_client)) as c:
                return await fn(c)

    return anyio.run(main)


def test_list_is_scoped_and_counts_license_and_source(server, server_keys, demo_corpus):
    r = http(server.url + "/v1/documents?limit=1000", headers=bearer(server_keys["reader"]))
    assert r.status == 200, r.text
    body = r.json()
    licenses = {d["license"] for d in body["documents"]}
    assert licenses == {"public", "open_commercial"}  # a reader's default scope, nothing else
    assert sum(c["documents"] for c in body["counts"]) == len(body["documents"])
    assert "stored_from" not in body["documents"][0] and "source_path" not in body["documents"][0]
    r = http(server.url + "/v1/documents?limit=1001", headers=bearer(server_keys["reader"]))
    assert r.status == 400 and "limit" in r.json()["detail"]
    r = http(server.url + "/v1/documents?limit=2&offset=1", headers=bearer(server_keys["loader"]))
    assert r.status == 200 and len(r.json()["documents"]) == 2


def test_reader_may_not_delete_or_patch_a_loader_may(server, server_keys, dsn, embedder, restore_corpus):
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_entries
    from scirag.ingest.manifest import Entry

    u = uuid.uuid4().hex[:8]
    with db.connect(dsn, role="scirag_loader") as conn:
        entry = Entry(
            line_no=1, id=f"rest-{u}", title="T", text=f"Note {u}: stover bales at 12 % moisture.", license="public"
        )
        assert ingest_entries(conn, [(1, entry)], "test", Ingester(conn, embedder=embedder))["added"] == 1
    reader, loader = bearer(server_keys["reader"]), bearer(server_keys["loader"])

    r = http(server.url + f"/v1/documents/rest-{u}", "PATCH", {"title": "Hacked"}, headers=reader)
    assert r.status == 403 and r.json()["code"] == "forbidden"
    r = http(server.url + f"/v1/documents/rest-{u}", "DELETE", headers=reader)
    assert r.status == 403

    r = http(
        server.url + f"/v1/documents/rest-{u}",
        "PATCH",
        {"title": "Right", "year": 2020, "license": "CC-BY"},
        headers=loader,
    )
    assert r.status == 200, r.text
    assert (r.json()["title"], r.json()["year"], r.json()["license"]) == ("Right", 2020, "open_commercial")
    r = http(server.url + f"/v1/documents/rest-{u}", "PATCH", {"colour": "red"}, headers=loader)
    assert r.status == 400
    r = http(server.url + f"/v1/documents/rest-{u}", "PATCH", {"license": "GPL"}, headers=loader)
    assert r.status == 400 and "GPL" in r.json()["detail"]

    r = http(server.url + f"/v1/documents/rest-{u}", "DELETE", headers=loader)
    assert r.status == 200, r.text
    assert r.json()["external_id"] == f"rest-{u}" and r.json()["deleted"]["chunks"] >= 1
    r = http(server.url + f"/v1/documents/rest-{u}", "DELETE", headers=loader)
    assert r.status == 404
    r = http(server.url + f"/v1/documents/rest-{u}", headers=loader)
    assert r.status == 404


def test_compact_results_for_agents(server, server_keys):
    """MCP gives agents the compact form by default (answer, abstained, citations; results
    without the trace), the full one on request; REST gives it for "detail": "compact"."""
    key = server_keys["reader"]
    r = http(server.url + "/v1/answer", "POST", {"question": SAMPLE_QUESTION, "detail": "compact"}, headers=bearer(key))
    assert r.status == 200 and set(r.json()) == {"answer", "abstained", "citations"} and r.json()["citations"]
    r = http(server.url + "/v1/answer", "POST", {"question": SAMPLE_QUESTION}, headers=bearer(key))
    assert {"answer", "abstained", "citations", "retrieval", "checks", "trace"} <= set(r.json())

    async def run(c):
        return (
            await c.call_tool("answer", {"question": SAMPLE_QUESTION}),
            await c.call_tool("answer", {"question": SAMPLE_QUESTION, "detail": "full"}),
            await c.call_tool("retrieve", {"question": SAMPLE_QUESTION, "k": 3}),
            await c.call_tool("retrieve", {"question": SAMPLE_QUESTION, "k": 101}),
        )

    compact, full, results, too_many = mcp_session(server.url, key, run)
    assert set(compact.structured_content) == {"answer", "abstained", "citations"}
    assert compact.structured_content["answer"] == full.structured_content["answer"]
    assert {"retrieval", "checks", "trace"} <= set(full.structured_content)
    assert set(results.structured_content) == {"results"} and len(results.structured_content["results"]) == 3
    assert too_many.is_error  # one bound of k at this door: 100
