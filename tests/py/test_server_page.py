"""The web page at / in a real browser: Debian's chromium, headless, driven over the
DevTools protocol (websockets). Ask the demo's sample question, see the cited answer,
open a citation; the restricted question shows the same evidence as psql."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.request

import pytest

from test_server_harness import (
    RESTRICTED_QUESTION,
    SAMPLE_QUESTION,
    bearer,
    end_process,
    http,
    psql_evidence,
    restricted_chunk_ids,
    server,
    server_keys,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """Headless chromium and one page, over CDP."""

    def __init__(self, profile_dir):
        if not CHROMIUM:
            pytest.fail(
                "chromium is not installed: run scripts/install_system.sh (it installs Debian's chromium)",
                pytrace=False,
            )
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                f"--user-data-dir={profile_dir}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                "--window-size=1280,1000",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and port is None:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line or "")
            if m:
                port = int(m.group(1))
            elif not line and self.proc.poll() is not None:
                break
        if port is None:
            self.close()
            pytest.fail("chromium did not start its DevTools endpoint", pytrace=False)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        from websockets.sync.client import connect

        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10).__enter__()
        self._id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page error: {r['exceptionDetails'].get('text')} in {expr[:80]}")
        return r["result"].get("value")

    def wait(self, expr, timeout=90.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expr)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expr}; page: {self.eval('document.body.innerText')[:1500]}")

    def goto(self, url):
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && !!document.getElementById('ask')")

    def close(self):
        try:
            self.ws.__exit__(None, None, None)
        except Exception:
            pass
        end_process(self.proc)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def ask(browser, server, key, question):
    browser.goto(server.url + "/")
    browser.eval(f"""(() => {{ const k = document.getElementById('apikey'); k.value = {json.dumps(key)};
                      k.dispatchEvent(new Event('change')); }})()""")
    browser.wait("document.getElementById('scope').textContent.includes('scirag_reader')")
    browser.eval(f"""(() => {{ delete document.body.dataset.state;
                      document.getElementById('question').value = {json.dumps(question)};
                      document.getElementById('ask').click(); }})()""")
    state = browser.wait("document.body.dataset.state")
    assert state == "answered", browser.eval("document.getElementById('error').textContent")


def test_page_asks_shows_cited_answer_and_opens_a_citation(browser, server, server_keys, tmp_path):
    key = server_keys["reader"]
    ask(browser, server, key, SAMPLE_QUESTION)
    api = http(server.url + "/v1/answer", "POST", {"question": SAMPLE_QUESTION}, headers=bearer(key)).json()
    shown = browser.eval("document.getElementById('answer').textContent")
    assert shown == api["answer"] and not api["abstained"]
    links = browser.eval(
        "[...document.querySelectorAll('#answer a.cite')].map(a => [a.textContent, +a.dataset.chunkId])"
    )
    want = {f"[{c['n']}]": c["chunk_id"] for c in api["citations"]}
    assert links and all(want[text] == cid for text, cid in links)
    rows = browser.eval("[...document.querySelectorAll('#evidence tbody tr')].map(r => +r.dataset.chunkId)")
    assert rows == [r["chunk_id"] for r in api["retrieval"]]
    # every evidence row names its paper, then the section (issue 25)
    shown_rows = browser.eval(
        "[...document.querySelectorAll('#evidence tbody tr td:nth-child(2)')].map(t => t.textContent)"
    )
    assert [t.split(" > ")[0] for t in shown_rows] == [r["title"] for r in api["retrieval"]]
    layers = browser.eval("document.querySelector('#evidence tbody tr td:nth-child(4)').textContent")
    assert re.search(r"(keyword|vector) #\d+", layers)
    assert "retrieve" in browser.eval("document.getElementById('trace').textContent")
    # open the first citation: the cited chunk, highlighted, between its neighbours
    text, cid = links[0]
    browser.eval("document.querySelector('#answer a.cite').click()")
    browser.wait(f"document.querySelector('#chunk-view .chunk.cited[data-chunk-id=\"{cid}\"]') !== null")
    chunk = http(server.url + f"/v1/chunks/{cid}?context=1", headers=bearer(key)).json()
    assert browser.eval("document.querySelector('#chunk-view .chunk.cited').textContent") == chunk["content"]
    header = browser.eval("document.getElementById('chunk-view').innerText")
    a, b = chunk["line_start"], chunk.get("line_end") or chunk["line_start"]
    assert chunk["title"] in header and (f"lines {a}-{b}" if b != a else f"line {a} ") in header
    assert browser.eval("document.querySelectorAll('#chunk-view .chunk').length") == 1 + len(chunk["context"])
    shot = browser.call("Page.captureScreenshot", format="png")["data"]
    (tmp_path / "page.png").write_bytes(__import__("base64").b64decode(shot))


def test_page_shows_the_same_evidence_as_psql_for_a_restricted_question(browser, server, server_keys, dsn):
    ask(browser, server, server_keys["reader"], RESTRICTED_QUESTION)
    rows = browser.eval("[...document.querySelectorAll('#evidence tbody tr')].map(r => +r.dataset.chunkId)")
    assert rows == [c for _, c in psql_evidence(dsn, RESTRICTED_QUESTION, 10)]
    assert not set(rows) & restricted_chunk_ids(dsn)
    # a restricted chunk cannot be opened from the page either
    hidden = min(restricted_chunk_ids(dsn))
    browser.eval(f"openChunk({hidden})")
    browser.wait("document.getElementById('chunk-view').className === 'error'")
    assert "not_found" in browser.eval("document.getElementById('chunk-view').textContent")


def test_page_lists_the_documents_in_scope_with_counts(browser, server, server_keys):
    """The documents view (issue 25): the documents a key's scope shows, and their counts
    per license and per source, as GET /v1/documents gives them."""
    key = server_keys["reader"]
    browser.goto(server.url + "/")
    browser.eval(f"""(() => {{ const k = document.getElementById('apikey'); k.value = {json.dumps(key)};
                      k.dispatchEvent(new Event('change')); }})()""")
    browser.wait("document.getElementById('doc-counts').textContent.includes('by license')")
    api = http(server.url + "/v1/documents?limit=1000", headers=bearer(key)).json()
    rows = browser.eval("[...document.querySelectorAll('#documents tbody tr')].map(r => +r.dataset.documentId)")
    assert rows == [d["document_id"] for d in api["documents"]] and rows
    counts = browser.eval("document.getElementById('doc-counts').textContent")
    assert counts.startswith(f"{len(rows)} document(s); by license: ")
    for lic in {d["license"] for d in api["documents"]}:
        assert f"{lic} {sum(d['license'] == lic for d in api['documents'])}" in counts
    assert "restricted" not in counts  # the reader's scope: nothing above its ceiling


def test_page_says_line_9_not_lines_9_9(browser, server):
    """A chunk's place in the page's tooltips and chunk view (issue 25): one line or page
    is not a range."""
    browser.goto(server.url + "/")
    cases = {
        "{line_start: 9, line_end: 9}": "line 9",
        "{line_start: 9}": "line 9",
        "{line_start: 9, line_end: 12}": "lines 9-12",
        "{page_start: 3, page_end: 3}": "page 3",
        "{page_start: 3, page_end: 5}": "pages 3-5",
    }
    for arg, want in cases.items():
        assert browser.eval(f"location_({arg})") == want, arg
