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
from test_campaign import seed_records
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
