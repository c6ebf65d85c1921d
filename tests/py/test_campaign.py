"""Literature campaigns (issue 24) against a local HTTP server on 127.0.0.1 that serves
recorded OpenAlex, Crossref and arXiv responses (campaign_fixtures) and PDFs: no
test touches the network. Discovery (dedup, --max, 429 + Retry-After, malformed JSON,
empty pages), resume after kill -9, screening decisions, OA resolution, verified
fetching, the manifest and PRISMA."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

import campaign_fixtures as fx
from scirag import campaign
from scirag.ingest.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]
SCIRAG = ROOT / ".venv" / "bin" / "scirag"
PDF = fx.tiny_pdf(2)

ABSTRACT = "straw ash slagging deposits in biomass boilers"


class Server:
    """Routes: /openalex/works (by page), /crossref/works (by cursor), /arxiv/api/query
    (by start), /files/NAME. Each answer: (status, headers, body[, delay seconds[, stall
    seconds after half the body]])."""

    def __init__(self):
        self.routes: dict[tuple[str, str], list] = {}
        self.log: list[tuple[str, str]] = []
        self.posted: list[tuple[str, bytes]] = []  # (path, body) of every POST
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                outer.posted.append((urlparse(self.path).path, self.rfile.read(n)))
                self.do_GET()

            def do_GET(self):
                u = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query).items()}
                key = q.get("page") or q.get("cursor") or q.get("start") or ""
                outer.log.append((u.path, key))
                answers = outer.routes.get((u.path, key)) or outer.routes.get((u.path, "*"))
                if not answers:
                    status, headers, body, delay, stall = 404, {"Content-Type": "text/plain"}, b"not found", 0, 0
                else:
                    a = answers.pop(0) if len(answers) > 1 else answers[0]
                    status, headers, body = a[:3]
                    delay = a[3] if len(a) > 3 else 0
                    stall = a[4] if len(a) > 4 else 0  # send half the body, then hang this long
                if delay:
                    time.sleep(delay)
                if isinstance(body, (dict, list)):
                    body = json.dumps(body)
                if isinstance(body, str):
                    body = body.encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    if stall:
                        self.wfile.write(body[: len(body) // 2])
                        self.wfile.flush()
                        time.sleep(stall)
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def json(self, path, key, body, status=200, headers=None, delay=0):
        self.routes.setdefault((path, key), []).append(
            (status, {"Content-Type": "application/json", **(headers or {})}, body, delay)
        )

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(monkeypatch):
    s = Server()
    monkeypatch.setenv("SCIRAG_OPENALEX_URL", s.url + "/openalex")
    monkeypatch.setenv("SCIRAG_CROSSREF_URL", s.url + "/crossref")
    monkeypatch.setenv("SCIRAG_ARXIV_URL", s.url + "/arxiv")
    monkeypatch.setenv("SCIRAG_UNPAYWALL_URL", s.url + "/unpaywall")
    monkeypatch.setenv("SCIRAG_CAMPAIGN_MIN_INTERVAL", "0")
    monkeypatch.setenv("SCIRAG_CAMPAIGN_PAGE_SIZE", "2")  # the recorded pages hold 2 records each
    monkeypatch.setenv("SCIRAG_CAMPAIGN_FETCH_PRIVATE", "1")  # the recorded PDFs are served on the loopback
    yield s
    s.close()


@pytest.fixture
def conn(dsn):
    c = campaign.connect(dsn)
    yield c
    c.close()


def new_campaign(conn, sources=("openalex",), max_records=2000, mailto="me@lab.example"):
    name = "straw ash " + uuid.uuid4().hex[:8]
    return campaign.create(conn, name, "straw AND (ash OR slagging)", "2000-2025", max_records, mailto, sources)


def openalex_pages(server, delay_page3=0):
    w = [fx.oa_work(i, f"Straw ash paper {i}", 2010 + i, f"10.1016/oa{i}", ABSTRACT, None) for i in range(1, 6)]
    server.json("/openalex/works", "1", fx.oa_page(w[:2], 5, 1, 2))
    server.json("/openalex/works", "2", fx.oa_page(w[2:4], 5, 2, 2))
    server.json("/openalex/works", "3", fx.oa_page(w[4:], 5, 3, 2), delay=delay_page3)
    return w


def test_record_shapes_parse():
    w = fx.oa_work(7, "Ash  slagging of straw", 2019, "10.1016/ABC", "ash of straw melts", "https://x.org/a.pdf")
    r = campaign.openalex_record(w)
    assert r["source_id"] == "W7" and r["doi"] == "10.1016/abc" and r["year"] == 2019
    assert r["abstract"] == "ash of straw melts" and r["title"] == "Ash slagging of straw"
    assert r["authors"] == "Ada Lovelace; Alan Turing" and r["venue"] == "Fuel"
    assert r["oa"]["locations"][0] == {
        "pdf_url": "https://x.org/a.pdf",
        "url": "https://example.org/landing/7",
        "license": "cc-by",
        "version": "publishedVersion",
    }
    c = campaign.crossref_record(fx.crossref_item("10.1021/X", "Straw", 2001, "an <i>abstract</i>"))
    assert (
        c["doi"] == "10.1021/x"
        and c["year"] == 2001
        and c["abstract"] == "an abstract"
        and c["authors"] == "Grace Hopper"
    )
    recs, total = campaign.arxiv_records(fx.arxiv_feed([("2101.00001v1", "A title", "sum", 2021, "10.48550/Y")], 1))
    assert total == 1 and recs[0]["source_id"] == "2101.00001v1" and recs[0]["doi"] == "10.48550/y"
    assert recs[0]["oa"]["locations"][0]["pdf_url"] == "http://arxiv.org/pdf/2101.00001v1"
    assert campaign.openalex_record({"id": "https://openalex.org/W1"}) is None  # no title: not a record
    assert campaign.norm_title("Étude: the  ASH!") == "etude the ash"
    assert campaign.source_query("arxiv", 'straw AND (ash OR "slag deposit") NOT coal') == (
        'all:straw AND ( all:ash OR all:"slag deposit" ) ANDNOT all:coal'
    )


@pytest.mark.parametrize(
    "stated, cls",
    [
        ("cc-by", "open_commercial"),
        ("cc-by-sa", "open_commercial"),
        ("cc0", "public"),
        ("public-domain", "public"),
        ("cc-by-nc", "open_noncommercial"),
        ("cc-by-nc-nd", "open_noncommercial"),
        ("http://creativecommons.org/licenses/by-nc/4.0/", "open_noncommercial"),
        ("https://creativecommons.org/licenses/by/4.0/", "open_commercial"),
        ("publisher-specific-oa", "unknown"),
        ("other-oa", "unknown"),
        (None, "unknown"),
    ],
)
def test_license_mapping(stated, cls):
    assert campaign.license_class(stated) == cls


def test_discover_dedups_across_sources_and_pages(server, conn):
    c = new_campaign(conn, ("openalex", "crossref", "arxiv"))
    openalex_pages(server)
    server.json("/openalex/works", "4", fx.oa_page([], 5, 4))
    items = [
        fx.crossref_item("10.1016/OA1", "Straw ash paper 1", 2011),  # same DOI as OpenAlex W1
        fx.crossref_item("10.1002/other", "Straw Ash Paper 2!", 2012),  # same title + year as W2, other DOI
        fx.crossref_item("10.1002/new", "Potassium release from straw", 2015, ABSTRACT),
    ]
    server.json("/crossref/works", "*", fx.crossref_page(items, 3, "c2"))
    server.json("/crossref/works", "c2", fx.crossref_page([], 3, "c3"))  # an empty page ends it
    feed = fx.arxiv_feed(
        [("2101.1", "Straw ash paper 3", "s", 2013, None), ("2101.2", "Chlorine in ash", "s", 2020, None)], 2
    )
    server.routes[("/arxiv/api/query", "0")] = [(200, {"Content-Type": "application/atom+xml"}, feed)]
    out = campaign.discover(conn, c, echo=lambda m: None)
    assert out["openalex"]["kept"] == 5 and out["crossref"]["kept"] == 3 and out["arxiv"]["kept"] == 2
    rows = conn.execute(
        "SELECT source, source_id, duplicate_of FROM scirag.campaign_records WHERE campaign_id = %s ORDER BY id",
        (c.id,),
    ).fetchall()
    ids = {sid: rid for rid, (_, sid, _) in zip(range(len(rows)), rows)}
    dups = {sid: dup for _, sid, dup in rows if dup}
    first = dict(
        conn.execute("SELECT source_id, id FROM scirag.campaign_records WHERE campaign_id = %s", (c.id,)).fetchall()
    )
    assert dups == {"10.1016/oa1": first["W1"], "10.1002/other": first["W2"], "2101.1": first["W3"]}
    assert len(ids) == 10
    # the polite pool: mailto on every request; a rerun asks nothing (every source is done)
    n = len(server.log)
    again = campaign.discover(conn, c, echo=lambda m: None)
    assert len(server.log) == n and all(v["added"] == 0 for v in again.values())


def test_max_bounds_the_records_kept(server, conn):
    c = new_campaign(conn, max_records=3)
    openalex_pages(server)
    out = campaign.discover(conn, c, echo=lambda m: None)
    assert out["openalex"]["kept"] == 3
    assert ("/openalex/works", "3") not in server.log  # stopped at the bound, no further page asked


def test_429_is_retried_after_the_time_it_says(server, conn):
    c = new_campaign(conn)
    w = openalex_pages(server)
    server.routes[("/openalex/works", "1")] = [
        (429, {"Content-Type": "application/json", "Retry-After": "2"}, {"error": "rate limited"}),
        (200, {"Content-Type": "application/json"}, fx.oa_page(w[:2], 2, 1)),
    ]
    slept = []
    out = campaign.discover(conn, c, sleep=slept.append, echo=lambda m: None)
    assert 2.0 in slept and out["openalex"]["kept"] == 2
    assert server.log.count(("/openalex/works", "1")) == 2


def test_malformed_json_stops_cleanly_and_a_rerun_continues(server, conn):
    c = new_campaign(conn)
    w = openalex_pages(server)
    server.routes[("/openalex/works", "2")] = [
        (200, {"Content-Type": "application/json"}, '{"meta": {"count": 5}, "resu')
    ]
    said = []
    out = campaign.discover(conn, c, echo=said.append)
    assert out["openalex"] == {"added": 2, "kept": 2, "done": False}
    assert any("stopped at page 2" in s and "not JSON" in s for s in said), said
    server.routes[("/openalex/works", "2")] = [(200, {"Content-Type": "application/json"}, fx.oa_page(w[2:4], 5, 2, 2))]
    out = campaign.discover(conn, c, echo=lambda m: None)
    assert out["openalex"] == {"added": 3, "kept": 5, "done": True}
    assert server.log.count(("/openalex/works", "1")) == 1  # page 1 was never asked again
    pages = conn.execute("SELECT page_no FROM scirag.campaign_pages p JOIN scirag.campaign_queries q ON q.id = p.query_id WHERE q.campaign_id = %s ORDER BY 1", (c.id,)).fetchall()  # fmt: skip
    assert [p for (p,) in pages] == [1, 2, 3]


def cli_env(dsn, server):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update(
        SCIRAG_DSN=dsn,
        COLUMNS="400",
        SCIRAG_OPENALEX_URL=server.url + "/openalex",
        SCIRAG_CROSSREF_URL=server.url + "/crossref",
        SCIRAG_ARXIV_URL=server.url + "/arxiv",
        SCIRAG_UNPAYWALL_URL=server.url + "/unpaywall",
        SCIRAG_CAMPAIGN_MIN_INTERVAL="0",
        SCIRAG_CAMPAIGN_PAGE_SIZE="2",
        SCIRAG_CAMPAIGN_FETCH_PRIVATE="1",
    )
    return env


def test_kill_9_during_discovery_then_rerun_loses_and_duplicates_nothing(server, conn, dsn):
    c = new_campaign(conn)
    openalex_pages(server, delay_page3=60)  # page 3 hangs: the process is killed while waiting
    env = cli_env(dsn, server)
    proc = subprocess.Popen([str(SCIRAG), "campaign", "discover", c.name], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and ("/openalex/works", "3") not in server.log:
        time.sleep(0.2)
    assert ("/openalex/works", "3") in server.log, proc.communicate(timeout=5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    count = "SELECT count(*), count(DISTINCT source_id) FROM scirag.campaign_records WHERE campaign_id = %s"
    assert conn.execute(count, (c.id,)).fetchone() == (4, 4)  # pages 1 and 2 committed, nothing of page 3
    server.routes[("/openalex/works", "3")] = [(200, {"Content-Type": "application/json"}, fx.oa_page([fx.oa_work(5, "Straw ash paper 5", 2015, "10.1016/oa5", ABSTRACT)], 5, 3))]  # fmt: skip
    rerun = subprocess.run([str(SCIRAG), "campaign", "discover", c.name], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert "1 new records, 5 in all" in rerun.stdout
    assert conn.execute(count, (c.id,)).fetchone() == (5, 5)
    assert server.log.count(("/openalex/works", "1")) == 1 and server.log.count(("/openalex/works", "2")) == 1


def seed_records(conn, c, n_rel=4, n_irr=12, oa=None):
    q = conn.execute(
        "INSERT INTO scirag.campaign_queries (campaign_id, source, query) VALUES (%s, 'openalex', 'q') RETURNING id",
        (c.id,),
    ).fetchone()[0]
    ids = []
    for i in range(n_rel + n_irr):
        rel = i < n_rel
        title = f"Straw ash slagging study {i}" if rel else f"Cardiac trial of drug {i}"
        abstract = (ABSTRACT + " potassium chlorine fouling") if rel else "patients placebo blood pressure dose"
        ids.append(
            conn.execute(
                """INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, doi, title, abstract,
                     year, norm_title, oa) VALUES (%s, %s, 'openalex', %s, %s, %s, %s, 2020, %s, %s) RETURNING id""",
                (
                    c.id,
                    q,
                    f"W{i}",
                    f"10.9999/r{i}",
                    title,
                    abstract if i != 3 else None,
                    campaign.norm_title(title),
                    json.dumps({"locations": (oa or {}).get(i, [])}),
                ),
            ).fetchone()[0]
        )
    conn.commit()
    return ids[:n_rel], ids[n_rel:]


def test_screening_cli_ranks_relevant_first_and_supersedes(server, conn, dsn):
    c = new_campaign(conn)
    rel, irr = seed_records(conn, c)
    env = cli_env(dsn, server)

    def cli(*args):
        return subprocess.run([str(SCIRAG), "campaign", "screen", c.name, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip

    p = cli("--decide", f"{rel[0]}=include", "--decide", f"{irr[0]}=exclude:wrong topic")
    assert p.returncode == 0, p.stderr
    p = cli("--next", "3")
    out = json.loads(p.stdout)
    assert out["model"] and out["training_size"] == 2
    assert {r["record_id"] for r in out["records"]} <= set(rel), out["records"]  # the relevant ones come first
    assert out["stopping"]["screened"] == 2 and out["stopping"]["stop_after"] == 50
    bad = cli("--decide", f"{irr[1]}=exclude:because")
    assert bad.returncode != 0 and "not one of the campaign's" in bad.stderr
    bad = cli("--decide", f"{irr[1]}=exclude")
    assert bad.returncode != 0 and "exclusion reason None" in bad.stderr
    # a change of mind is a new row that supersedes; the old one stays
    assert cli("--decide", f"{irr[0]}=include").returncode == 0
    rows = conn.execute(
        "SELECT decision, supersedes IS NOT NULL FROM scirag.screening_decisions WHERE record_id = %s ORDER BY id",
        (irr[0],),
    ).fetchall()
    assert rows == [("exclude", False), ("include", True)]
    assert cli("--decide", f"{irr[1]}=exclude:wrong topic").returncode == 0
    # interactive: include the top record, then quit
    p = subprocess.run([str(SCIRAG), "campaign", "screen", c.name], input="i\nq\n", env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "irrelevant in a row" in p.stdout
    who = conn.execute(
        "SELECT decider, decided_by, model, training_size FROM scirag.screening_decisions WHERE campaign_id = %s ORDER BY id DESC LIMIT 1",
        (c.id,),
    ).fetchone()
    assert who[0] == "human" and who[1] == "scirag_loader" and who[2] == "tfidf12-svm" and who[3] == 3


def test_resolve_fetch_manifest_and_prisma(server, conn, tmp_path):
    c = new_campaign(conn)
    u = server.url + "/files/"
    files = {
        "ok.pdf": (200, {"Content-Type": "application/pdf"}, PDF),
        "redirect": (302, {"Location": u + "ok2.pdf"}, b""),
        "ok2.pdf": (200, {"Content-Type": "application/pdf; charset=binary"}, PDF),
        "page.html": (200, {"Content-Type": "text/html"}, b"<html>paywall</html>"),
        "fake.pdf": (200, {"Content-Type": "application/pdf"}, b"<html>not a pdf</html>"),
        "broken.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7\n garbage without pages"),
        "loop": (302, {"Location": u + "loop"}, b""),
    }
    for name, answer in files.items():
        server.routes[("/files/" + name, "*")] = [answer]
    oa = {
        0: [{"pdf_url": u + "ok.pdf", "license": "cc-by"}],
        1: [{"pdf_url": u + "redirect", "license": "cc-by-nc"}],
        2: [{"pdf_url": u + "page.html", "license": "cc-by"}, {"pdf_url": u + "fake.pdf", "license": None}],
        3: [{"pdf_url": u + "broken.pdf", "license": "cc-by"}],
        4: [{"pdf_url": u + "loop", "license": "cc-by"}],
        5: [{"url": "https://example.org/landing", "license": None}],  # no direct PDF
    }
    rel, irr = seed_records(conn, c, n_rel=6, n_irr=3, oa=oa)
    for rid in rel:
        campaign.decide(conn, c, rid, "include")
    for rid in irr:
        campaign.decide(conn, c, rid, "exclude", "wrong topic")
    counts = campaign.resolve(conn, c, echo=lambda m: None)
    assert counts["records"] == 6
    lic = dict(
        conn.execute("SELECT url, license FROM scirag.oa_resolutions WHERE campaign_id = %s", (c.id,)).fetchall()
    )
    assert lic[u + "ok.pdf"] == "open_commercial" and lic[u + "redirect"] == "open_noncommercial"
    assert lic[u + "fake.pdf"] == "unknown"
    folder = tmp_path / "camp"
    got = campaign.fetch(conn, c, folder, echo=lambda m: None)
    assert got["ok"] == 2 and got["no_pdf_location"] == 1
    rows = conn.execute(
        "SELECT record_id, url, status, error, sha256, pages, path FROM scirag.campaign_downloads WHERE campaign_id = %s ORDER BY id",
        (c.id,),
    ).fetchall()
    by_url = {r[1].rsplit("/", 1)[1]: r for r in rows}
    assert by_url["ok.pdf"][2] == "ok" and by_url["ok.pdf"][5] == 2 and by_url["ok.pdf"][6] == f"pdfs/{rel[0]}.pdf"
    import hashlib

    assert by_url["ok.pdf"][4] == hashlib.sha256(PDF).hexdigest()
    assert by_url["redirect"][2] == "ok"
    assert "not a PDF: Content-Type text/html" in by_url["page.html"][3]
    assert "does not start with %PDF-" in by_url["fake.pdf"][3]
    assert "page count unreadable" in by_url["broken.pdf"][3]
    assert "more than 3 redirects" in by_url["loop"][3]
    assert sorted(p.name for p in (folder / "pdfs").iterdir()) == sorted([f"{rel[0]}.pdf", f"{rel[1]}.pdf"])
    entries = [e for _, e in read_manifest(folder / "manifest.jsonl")]
    assert all(not isinstance(e, Exception) for e in entries), entries
    assert {e.license for e in entries} == {"open_commercial", "open_noncommercial"}
    assert all(e.path.is_file() for e in entries)
    # a rerun fetches nothing again
    again = campaign.fetch(conn, c, folder, echo=lambda m: None)
    assert again["ok"] == 0 and again["skipped"] == 2
    # never outside the campaign folder
    with pytest.raises(campaign.FetchFailed, match="outside the campaign folder"):
        campaign.download_pdf(u + "ok.pdf", folder / ".." / "escape.pdf", folder)
    assert not (tmp_path / "escape.pdf").exists()

    rep = campaign.report(conn, c, folder, echo=lambda m: None)
    assert rep["identified"] == 9 and rep["screened"] == 9 and rep["excluded"] == 3
    assert rep["excluded_reasons"] == {"wrong topic": 3}
    assert rep["sought_for_retrieval"] == 6 and rep["retrieved"] == 2 and rep["not_retrieved"] == 4
    assert campaign.prisma_violations(rep) == []
    svg = (folder / "prisma.svg").read_text()
    assert svg.startswith("<svg") and "Records screened" in svg and "n = 9" in svg and "wrong topic: 3" in svg
    with open(folder / "prisma.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 9 and sum(r["pdf"] != "" for r in table) == 2
    assert {r["reason"] for r in table if r["decision"] == "exclude"} == {"wrong topic"}


def test_prisma_rules_catch_planted_inconsistencies():
    good = {
        "identified": 10,
        "identified_per_source": {"openalex": 6, "crossref": 4},
        "duplicates_removed": 2,
        "screened": 8,
        "awaiting_human_review": 0,
        "excluded": 5,
        "excluded_reasons": {"wrong topic": 5},
        "sought_for_retrieval": 3,
        "not_retrieved": 1,
        "retrieved": 2,
        "assessed_for_eligibility": 2,
        "awaiting_full_text_assessment": 0,
        "reports_excluded": 1,
        "reports_excluded_reasons": {"wrong population": 1},
        "included": 1,
    }
    assert campaign.prisma_violations(good) == []
    assert "included != assessed - reports excluded" in campaign.prisma_violations({**good, "included": 2})
    assert "assessed + awaiting full-text assessment != retrieved" in campaign.prisma_violations(
        {**good, "awaiting_full_text_assessment": 1}
    )
    assert "reports excluded != sum over reasons" in campaign.prisma_violations(
        {**good, "reports_excluded_reasons": {}}
    )
    assert "screened > identified - duplicates removed" in campaign.prisma_violations({**good, "screened": 9})
    assert "excluded > screened" in campaign.prisma_violations({**good, "excluded": 9, "excluded_reasons": {"x": 9}})
    assert "sought != retrieved + not retrieved" in campaign.prisma_violations({**good, "not_retrieved": 2})
    assert "excluded != sum over reasons" in campaign.prisma_violations({**good, "excluded_reasons": {"x": 4}})


def test_campaign_new_errors_are_one_line(conn):
    with pytest.raises(campaign.CampaignError, match="--years '2025-2000'"):
        campaign.create(conn, "x" + uuid.uuid4().hex, "q", "2025-2000")
    with pytest.raises(campaign.CampaignError, match="--sources: scopus"):
        campaign.create(conn, "x" + uuid.uuid4().hex, "q", None, 10, None, ["scopus"])
    with pytest.raises(campaign.CampaignError, match="no campaign named 'nope-"):
        campaign.get(conn, "nope-" + uuid.uuid4().hex)
    c = new_campaign(conn)
    with pytest.raises(campaign.CampaignError, match="exists already"):
        campaign.create(conn, c.name, "q")


def test_model_screener_hands_doubt_to_a_person_never_excludes_it(conn):
    from scirag_helpers.llm import RecordedClient, prompt_key

    c = new_campaign(conn)
    rel, irr = seed_records(conn, c, n_rel=4, n_irr=5)
    campaign.decide(conn, c, rel[0], "include")
    campaign.decide(conn, c, irr[0], "exclude", "wrong topic")
    texts = dict(
        (rid, (t, a))
        for rid, t, a in conn.execute(
            "SELECT id, title, abstract FROM scirag.campaign_records WHERE campaign_id = %s", (c.id,)
        ).fetchall()
    )
    answers = {
        rel[1]: '{"decision": "include", "confidence": 0.95}',
        rel[2]: "I think this one is relevant",  # malformed
        irr[1]: '{"decision": "exclude", "reason": "wrong topic", "confidence": 0.9}',
        irr[2]: '{"decision": "exclude", "reason": "wrong topic", "confidence": 0.5}',  # low confidence
        irr[3]: '{"decision": "exclude", "reason": "boring", "confidence": 0.99}',  # reason not in the list
        irr[4]: '{"decision": "maybe", "confidence": 0.99}',
    }
    rec = {
        "by_prompt": {
            prompt_key(campaign.llm_prompt(c, *texts[rid]), campaign.LLM_SYSTEM): text for rid, text in answers.items()
        }
    }
    llm = RecordedClient(rec)
    counts = campaign.llm_screen(conn, c, llm, n=20)
    assert counts == {"include": 1, "exclude": 1, "human_review": 5}
    got = dict(
        conn.execute(
            "SELECT record_id, decision || coalesce(': ' || reason, '') FROM scirag.campaign_current_decisions WHERE campaign_id = %s",
            (c.id,),
        ).fetchall()
    )
    assert got[rel[1]] == "include" and got[irr[1]] == "exclude: wrong topic"
    assert got[rel[3]] == "human_review: no abstract: a person decides"
    assert got[rel[2]].startswith("human_review: model answer unusable")
    assert got[irr[2]] == "human_review: low confidence 0.50 (model proposed exclude)"
    assert "not in the list" in got[irr[3]] and got[irr[4]].startswith("human_review: model answer unusable")
    assert len(llm.seen) == 6  # the record without abstract never went to the model
    # a person sees the handed-over records first
    rows, _, _, _ = campaign.next_to_screen(conn, c, 5)
    assert {r["record_id"] for r in rows} == {rel[2], rel[3], irr[2], irr[3], irr[4]}
    decided_by = conn.execute(
        "SELECT DISTINCT decider, decided_by FROM scirag.screening_decisions WHERE campaign_id = %s AND decider = 'llm'",
        (c.id,),
    ).fetchall()
    assert decided_by == [("llm", "recorded")]


def test_fetch_refuses_non_public_addresses(server, tmp_path, monkeypatch):
    """PDF URLs come from third-party metadata: a loopback or private address, directly
    or through a redirect from a public name, is refused unless allowed."""
    server.routes[("/files/ok.pdf", "*")] = [(200, {"Content-Type": "application/pdf"}, PDF)]
    monkeypatch.delenv("SCIRAG_CAMPAIGN_FETCH_PRIVATE")
    folder = tmp_path / "camp"
    for url in (server.url + "/files/ok.pdf", "http://10.1.2.3/x.pdf", "http://[::1]:9/x.pdf"):
        with pytest.raises(campaign.FetchFailed, match="refusing a non-public address"):
            campaign.download_pdf(url, folder / "pdfs" / "1.pdf", folder)
    with pytest.raises(campaign.FetchFailed, match="cannot resolve host"):
        campaign.download_pdf("http://no-such-host.invalid/x.pdf", folder / "pdfs" / "1.pdf", folder)
    assert not (folder / "pdfs" / "1.pdf").exists()
    monkeypatch.setenv("SCIRAG_CAMPAIGN_FETCH_PRIVATE", "1")
    assert campaign.download_pdf(server.url + "/files/ok.pdf", folder / "pdfs" / "1.pdf", folder)["pages"] == 2


def test_assess_interactive_and_its_errors(server, conn, dsn):
    """`scirag campaign assess` at the prompt: the first waiting report is excluded with
    reason 2, the next found eligible; records without a retrieved report are not shown."""
    c = new_campaign(conn)
    rel, irr = seed_records(conn, c, n_rel=3, n_irr=1)
    for rid in rel:
        campaign.decide(conn, c, rid, "include")
    for rid in rel[:2]:  # two retrieved reports; rel[2] was not retrieved
        conn.execute(
            """INSERT INTO scirag.campaign_downloads (campaign_id, record_id, url, status, sha256, pages, path)
               VALUES (%s, %s, 'https://example.org/x.pdf', 'ok', %s, 1, %s)""",
            (c.id, rid, "0" * 64, f"pdfs/{rid}.pdf"),
        )
    conn.commit()
    env = cli_env(dsn, server)
    p = subprocess.run([str(SCIRAG), "campaign", "assess", c.name], input="x\n2\ny\nq\n", env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "No retrieved report waits" in p.stdout
    rows = conn.execute(
        "SELECT record_id, decision, reason, decider FROM scirag.eligibility_decisions WHERE campaign_id = %s ORDER BY id",
        (c.id,),
    ).fetchall()
    assert rows == [(rel[0], "exclude", c.exclusion_reasons[1], "human"), (rel[1], "eligible", None, "human")]
    with pytest.raises(campaign.CampaignError, match="no retrieved report"):
        campaign.assess(conn, c, rel[2], "eligible")
    with pytest.raises(campaign.CampaignError, match="choose eligible or exclude"):
        campaign.assess(conn, c, rel[0], "include")
    counts = campaign.prisma_counts(conn, c)
    assert campaign.prisma_violations(counts) == []
    assert (counts["retrieved"], counts["assessed_for_eligibility"], counts["reports_excluded"], counts["included"]) == (2, 2, 1, 1)  # fmt: skip
