"""REST for the library (issue 25): GET /v1/documents, DELETE and PATCH
/v1/documents/{ref}, on the real server with the demo corpus."""

from __future__ import annotations

import uuid

from test_server_harness import bearer, http, server, server_keys


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
    from scirag.ingest import Ingester, ingest_entries
    from scirag.manifest import Entry

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
