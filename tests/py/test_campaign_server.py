"""Campaigns through the HTTP door (issue 24): the real `scirag serve` on the loopback,
keys mapped to roles. The owner role's key screens (next records, a decision that
supersedes, PRISMA); another loader role's key finds no such campaign; a reader's key
is refused."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from scirag import campaign
from test_campaign import seed_records, server
from test_server_harness import KEY_PREFIX, ServerProc, bearer, http, make_key


@pytest.fixture
def roles(dsn):
    tag = uuid.uuid4().hex[:8]
    names = {"alice": f"camp_alice_{tag}", "bob": f"camp_bob_{tag}"}
    with psycopg.connect(dsn, autocommit=True) as admin:
        for r in names.values():
            admin.execute(f'CREATE ROLE "{r}" NOLOGIN IN ROLE scirag_loader')
    yield names
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("DELETE FROM scirag.api_keys WHERE name LIKE %s", (KEY_PREFIX + "camp-" + tag + "%",))
        for r in names.values():
            admin.execute(f'DROP ROLE "{r}"')


def test_campaign_rest_as_the_owner_role_only(dsn, roles, tmp_path):
    tag = roles["alice"].rsplit("_", 1)[1]
    keys = {who: make_key(dsn, f"camp-{tag}-{who}", role=role, rate_per_minute=100000) for who, role in roles.items()}
    keys["reader"] = make_key(dsn, f"camp-{tag}-reader", role="scirag_reader", rate_per_minute=100000)
    conn = psycopg.connect(dsn)
    conn.execute(f'SET ROLE "{roles["alice"]}"')
    c = campaign.create(conn, "rest " + tag, "straw AND ash")
    rel, irr = seed_records(conn, c, n_rel=3, n_irr=6)
    campaign.decide(conn, c, rel[0], "include")
    campaign.decide(conn, c, irr[0], "exclude", "wrong topic")
    srv = ServerProc(dsn, tmp_path / "serve.log")
    try:
        base = f"{srv.url}/v1/campaigns/{c.name.replace(' ', '%20')}"
        r = http(base + "/next?n=2", headers=bearer(keys["alice"]))
        assert r.status == 200, srv.log()[-3000:]
        body = r.json()
        assert {x["record_id"] for x in body["records"]} <= set(rel[1:]) and body["training_size"] == 2
        assert body["stopping"]["screened"] == 2 and "wrong topic" in body["exclusion_reasons"]
        r = http(base + "/decisions", "POST", {"record_id": irr[0], "decision": "include"}, bearer(keys["alice"]))
        assert r.status == 200, r.text
        bad = http(base + "/decisions", "POST", {"record_id": irr[1], "decision": "exclude"}, bearer(keys["alice"]))
        assert bad.status == 400 and "not one of the campaign's" in bad.text
        r = http(base + "/prisma", headers=bearer(keys["alice"]))
        assert r.status == 200 and r.json()["violations"] == [] and r.json()["counts"]["screened"] == 2
        assert r.json()["counts"]["excluded"] == 0  # the exclusion was superseded
        # another loader role: no such campaign; a reader: refused
        assert http(base + "/next", headers=bearer(keys["bob"])).status == 404
        assert http(base + "/decisions", "POST", {"record_id": rel[1], "decision": "include"}, bearer(keys["bob"])).status == 404  # fmt: skip
        assert http(base + "/prisma", headers=bearer(keys["reader"])).status == 403
        assert http(base + "/next").status == 401

        # the same through MCP: an agent screens
        from test_server import mcp_session

        async def agent(cl):
            nxt = await cl.call_tool("campaign_next", {"campaign": c.name, "n": 1})
            rid = nxt.structured_content["records"][0]["record_id"]
            dec = await cl.call_tool("campaign_decide", {"campaign": c.name, "record_id": rid, "decision": "include"})
            bad = await cl.call_tool("campaign_decide", {"campaign": c.name, "record_id": rid, "decision": "exclude"})
            pr = await cl.call_tool("campaign_prisma", {"campaign": c.name})
            return rid, dec, bad, pr

        rid, dec, bad, pr = mcp_session(srv.url, keys["alice"], agent)
        assert rid in rel and not dec.is_error and dec.structured_content["decision"] == "include"
        assert bad.is_error and "not one of the campaign's" in bad.content[0].text
        assert pr.structured_content["counts"]["screened"] == 3 and pr.structured_content["violations"] == []
        hidden = mcp_session(srv.url, keys["bob"], lambda cl: cl.call_tool("campaign_prisma", {"campaign": c.name}))
        assert hidden.is_error and "not_found" in hidden.content[0].text
    finally:
        srv.stop()
        conn.close()
    rows = (
        psycopg.connect(dsn)
        .execute("SELECT decision FROM scirag.screening_decisions WHERE record_id = %s ORDER BY id", (irr[0],))
        .fetchall()
    )
    assert rows == [("exclude",), ("include",)]


def test_screening_page_in_a_browser(dsn, roles, tmp_path):
    """The screening view at /screen in headless chromium: the record the API ranks
    first, keyboard decisions (i, then e with the selected reason), progress, the
    stopping rule and the PRISMA counts move with them."""
    from test_server_page import Browser

    tag = roles["alice"].rsplit("_", 1)[1]
    key = make_key(dsn, f"camp-{tag}-page", role=roles["alice"], rate_per_minute=100000)
    conn = psycopg.connect(dsn)
    conn.execute(f'SET ROLE "{roles["alice"]}"')
    c = campaign.create(conn, "page " + tag, "straw AND ash")
    rel, irr = seed_records(conn, c, n_rel=3, n_irr=6)
    campaign.decide(conn, c, rel[0], "include")
    campaign.decide(conn, c, irr[0], "exclude", "wrong topic")
    srv = ServerProc(dsn, tmp_path / "serve.log")
    browser = Browser(tmp_path / "chromium")
    try:
        browser.call("Page.navigate", url=srv.url + "/screen")
        browser.wait("document.readyState === 'complete' && !!document.getElementById('load')")
        browser.eval(
            f"""(() => {{ document.getElementById('apikey').value = {json.dumps(key)};
                 document.getElementById('campaign').value = {json.dumps(c.name)};
                 document.getElementById('load').click(); }})()"""
        )
        assert browser.wait("document.body.dataset.state") == "ready", browser.eval("document.body.innerText")
        api = http(f"{srv.url}/v1/campaigns/{c.name.replace(' ', '%20')}/next?n=1", headers=bearer(key)).json()
        first = api["records"][0]
        assert int(browser.eval("document.getElementById('record').dataset.recordId")) == first["record_id"]
        assert browser.eval("document.getElementById('title').textContent") == first["title"]
        assert "2 of 9 screened, 1 included" in browser.eval("document.getElementById('progress').textContent")
        assert "stopping suggested at 50" in browser.eval("document.getElementById('stop').textContent")

        def key_press(k):
            browser.eval("delete document.body.dataset.state")
            browser.call("Input.dispatchKeyEvent", type="keyDown", key=k, text=k)
            browser.call("Input.dispatchKeyEvent", type="keyUp", key=k)
            assert browser.wait("document.body.dataset.state") == "ready", browser.eval("document.body.innerText")

        key_press("i")
        second = int(browser.eval("document.getElementById('record').dataset.recordId"))
        assert second != first["record_id"]
        browser.eval("document.getElementById('reason').value = 'wrong population'")
        key_press("e")
        assert "4 of 9 screened, 2 included" in browser.eval("document.getElementById('progress').textContent")
        prisma = json.loads(browser.eval("document.getElementById('prisma').textContent"))
        assert prisma["excluded_reasons"] == {"wrong topic": 1, "wrong population": 1}
        shot = browser.call("Page.captureScreenshot", format="png")["data"]
        (tmp_path / "screen.png").write_bytes(__import__("base64").b64decode(shot))
    finally:
        browser.close()
        srv.stop()
    got = conn.execute(
        "SELECT record_id, decision, reason FROM scirag.screening_decisions WHERE campaign_id = %s ORDER BY id", (c.id,)
    ).fetchall()
    conn.close()
    assert got[2] == (first["record_id"], "include", None) and got[3] == (second, "exclude", "wrong population")


def test_campaign_steps_through_rest_and_mcp(dsn, roles, tmp_path, server, monkeypatch):
    """new -> discover -> (decisions) -> resolve -> fetch through the HTTP door and as MCP
    tools, in bounded steps, against recorded OpenAlex responses and PDFs served on the
    loopback; the same rights as screening: another loader role finds nothing (404), a
    reader is refused (403); files land in the server's campaign folder only."""
    from test_campaign import ABSTRACT, PDF

    import campaign_fixtures as fx

    monkeypatch.setenv("SCIRAG_CAMPAIGNS_DIR", str(tmp_path / "campaigns"))
    tag = roles["alice"].rsplit("_", 1)[1]
    keys = {who: make_key(dsn, f"camp-{tag}-{who}s", role=role, rate_per_minute=100000) for who, role in roles.items()}
    keys["reader"] = make_key(dsn, f"camp-{tag}-readers", role="scirag_reader", rate_per_minute=100000)
    files = server.url + "/files/"
    works = [
        fx.oa_work(
            i, f"Straw ash paper {i}", 2010 + i, f"10.1016/st{i}", ABSTRACT, f"{files}w{i}.pdf" if i < 4 else None
        )
        for i in range(1, 6)
    ]
    for page in (1, 2, 3):
        server.json("/openalex/works", str(page), fx.oa_page(works[2 * page - 2 : 2 * page], 5, page, 2))
    for i in range(1, 4):
        server.routes[(f"/files/w{i}.pdf", "*")] = [(200, {"Content-Type": "application/pdf"}, PDF)]
    srv = ServerProc(dsn, tmp_path / "serve.log")
    try:
        spec = {"name": "steps " + tag, "query": "straw AND ash", "years": "2000-2025", "sources": ["openalex"]}
        r = http(f"{srv.url}/v1/campaigns", "POST", spec, bearer(keys["alice"]))
        assert r.status == 201, r.text
        cid = r.json()["id"]
        assert r.json()["owner_role"] == roles["alice"] and r.json()["sources"] == ["openalex"]
        assert http(f"{srv.url}/v1/campaigns", "POST", spec, bearer(keys["alice"])).status == 409
        assert (
            http(f"{srv.url}/v1/campaigns", "POST", {**spec, "name": "r" + tag}, bearer(keys["reader"])).status == 403
        )
        bad = http(f"{srv.url}/v1/campaigns", "POST", {**spec, "years": "2025-2000"}, bearer(keys["alice"]))
        assert bad.status == 400 and "first year is after the last" in bad.text
        assert http(f"{srv.url}/v1/campaigns", "POST", {**spec, "max_records": 0}, bearer(keys["alice"])).status == 400
        assert http(f"{srv.url}/v1/campaigns", "POST", {**spec, "sources": ["scholar"]}, bearer(keys["alice"])).status == 400  # fmt: skip

        base = f"{srv.url}/v1/campaigns/{spec['name'].replace(' ', '%20')}"
        alice = bearer(keys["alice"])
        r = http(base + "/discover", "POST", {"max_pages": 2}, alice)
        assert r.status == 200, r.text
        assert r.json()["done"] is False and r.json()["counts"]["identified"] == 4
        r = http(base + "/discover", "POST", {"max_pages": 2}, alice)
        assert r.json()["done"] is True and r.json()["counts"]["identified"] == 5
        assert [k for p, k in server.log if p == "/openalex/works"] == ["1", "2", "3"]  # no page asked twice
        assert http(base + "/discover", "POST", {"max_pages": 51}, alice).status == 400
        assert http(base + "/discover", "POST", {}, bearer(keys["bob"])).status == 404
        assert http(base + "/discover", "POST", {}, bearer(keys["reader"])).status == 403

        nxt = http(base + "/next?n=5", headers=alice)
        assert nxt.status == 200, srv.log()[-3000:]
        ids = [x["record_id"] for x in nxt.json()["records"]]
        titles = {x["record_id"]: x["title"] for x in nxt.json()["records"]}
        for rid in ids:
            n = int(titles[rid].rsplit(" ", 1)[1])
            d = {"record_id": rid, "decision": "include"} if n != 2 else {"record_id": rid, "decision": "exclude", "reason": "wrong topic"}  # fmt: skip
            assert http(base + "/decisions", "POST", d, alice).status == 200
        r = http(base + "/resolve", "POST", {"max_records": 3}, alice)
        assert r.status == 200 and r.json()["records"] == 3 and r.json()["remaining"] == 1 and not r.json()["done"]
        r = http(base + "/resolve", "POST", {"max_records": 3}, alice)
        assert r.json()["records"] == 1 and r.json()["done"]
        assert http(base + "/fetch", "POST", {}, bearer(keys["bob"])).status == 404
        assert http(base + "/fetch", "POST", {}, bearer(keys["reader"])).status == 403
        r = http(base + "/fetch", "POST", {"max_records": 1}, alice)
        assert (
            r.status == 200 and r.json()["ok"] == 1 and r.json()["remaining"] == 1 and r.json()["manifest_entries"] == 1
        )
        r = http(base + "/fetch", "POST", {"max_records": 5}, alice)
        assert (
            r.json()["ok"] == 1 and r.json()["skipped"] == 1 and r.json()["done"] and r.json()["manifest_entries"] == 2
        )
        folder = tmp_path / "campaigns" / f"{cid}-steps-{tag}"
        assert sorted(p.name for p in (folder / "pdfs").iterdir()) == sorted(
            f"{rid}.pdf" for rid in ids if titles[rid].endswith((" 1", " 3"))
        )
        assert len((folder / "manifest.jsonl").read_text().splitlines()) == 2
        # full-text eligibility of the two retrieved reports
        waiting = http(base + "/reports?n=10", headers=alice).json()["reports"]
        assert sorted(r["record_id"] for r in waiting) == sorted(
            rid for rid in ids if titles[rid].endswith((" 1", " 3"))
        )
        first, second = sorted(r["record_id"] for r in waiting)
        r = http(base + "/eligibility", "POST", {"record_id": first, "decision": "eligible"}, alice)
        assert r.status == 200, r.text
        bad = http(base + "/eligibility", "POST", {"record_id": second, "decision": "exclude"}, alice)
        assert bad.status == 400 and "not one of the campaign's" in bad.text
        unretrieved = next(rid for rid in ids if titles[rid].endswith(" 4"))
        bad = http(base + "/eligibility", "POST", {"record_id": unretrieved, "decision": "eligible"}, alice)
        assert bad.status == 400 and "no retrieved report" in bad.text
        d = {"record_id": second, "decision": "exclude", "reason": "wrong study design"}
        assert http(base + "/eligibility", "POST", d, bearer(keys["bob"])).status == 404
        assert http(base + "/eligibility", "POST", d, alice).status == 200
        prisma = http(base + "/prisma", headers=alice).json()
        c = prisma["counts"]
        assert prisma["violations"] == [] and (c["screened"], c["excluded"], c["sought_for_retrieval"]) == (5, 1, 4)
        assert (c["retrieved"], c["not_retrieved"]) == (2, 2)
        assert (c["assessed_for_eligibility"], c["reports_excluded"], c["included"]) == (2, 1, 1)
        svg = http(base + "/prisma.svg", headers=alice)
        assert svg.status == 200 and svg.headers["content-type"].startswith("image/svg+xml")
        assert "Records screened" in svg.text and "n = 5" in svg.text
        assert http(base + "/prisma.svg", headers=bearer(keys["bob"])).status == 404

        # an agent runs a second campaign through MCP
        from test_server import mcp_session

        name2 = "agent " + tag
        server.log.clear()

        async def agent(cl):
            out = {"new": await cl.call_tool("campaign_new", {"name": name2, "query": "straw ash", "sources": ["openalex"]})}  # fmt: skip
            out["discover"] = []
            for _ in range(3):
                d = await cl.call_tool("campaign_discover", {"campaign": name2, "max_pages": 2})
                out["discover"].append(d)
                if d.structured_content["done"]:
                    break
            nxt = await cl.call_tool("campaign_next", {"campaign": name2, "n": 5})
            for rec in nxt.structured_content["records"]:
                await cl.call_tool("campaign_decide", {"campaign": name2, "record_id": rec["record_id"], "decision": "include"})  # fmt: skip
            out["resolve"] = await cl.call_tool("campaign_resolve", {"campaign": name2})
            out["fetch"] = await cl.call_tool("campaign_fetch", {"campaign": name2, "max_records": 10})
            out["reports"] = await cl.call_tool("campaign_reports", {"campaign": name2, "n": 10})
            for rep in out["reports"].structured_content["reports"]:
                await cl.call_tool("campaign_assess", {"campaign": name2, "record_id": rep["record_id"], "decision": "eligible"})  # fmt: skip
            out["prisma"] = await cl.call_tool("campaign_prisma", {"campaign": name2})
            return out

        out = mcp_session(srv.url, keys["alice"], agent)
        assert not out["new"].is_error, out["new"].content
        assert [d.structured_content["done"] for d in out["discover"]] == [False, True]
        assert out["resolve"].structured_content["records"] == 5
        assert out["fetch"].structured_content["ok"] == 3 and out["fetch"].structured_content["done"]
        pc = out["prisma"].structured_content["counts"]
        assert (pc["identified"], pc["screened"], pc["retrieved"], pc["not_retrieved"]) == (5, 5, 3, 2)
        assert len(out["reports"].structured_content["reports"]) == 3 and pc["included"] == 3

        async def intruder(cl):
            return (
                await cl.call_tool("campaign_fetch", {"campaign": name2}),
                await cl.call_tool("campaign_discover", {"campaign": name2, "max_pages": 99}),
            )

        hidden, too_many = mcp_session(srv.url, keys["bob"], intruder)
        assert hidden.is_error and "not_found" in hidden.content[0].text
        assert too_many.is_error
        refused = mcp_session(srv.url, keys["reader"], lambda cl: cl.call_tool("campaign_new", {"name": "x" + tag, "query": "q"}))  # fmt: skip
        assert refused.is_error and "forbidden" in refused.content[0].text
    finally:
        srv.stop()
