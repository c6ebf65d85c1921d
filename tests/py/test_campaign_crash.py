"""Crash safety of the campaign steps (issue 24): the real `scirag campaign` command in a
subprocess is killed with SIGKILL at a deterministic point of `screen`, `resolve` and
`fetch`, and the rerun must finish with nothing lost and nothing duplicated: one current
decision per record and no repeated decision row, one set of OA locations per record,
one verified download row and one file per retrieved record, no temporary file left,
a manifest line per PDF, and PRISMA counts that add up.

Two ways to kill at a known point:
- SCIRAG_CAMPAIGN_KILL_AT=POINT:N (scirag.campaign.failpoint): the process SIGKILLs
  itself the N-th time it passes POINT, e.g. between a row's INSERT and its COMMIT, or
  between a PDF renamed into place and its download row;
- a recorded HTTP responder that stalls (an LLM answer that does not come, a PDF body
  cut in half), and the test sends SIGKILL once the server saw the request.
No test touches the network (campaign_fixtures, test_campaign.Server)."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

import campaign_fixtures as fx
from scirag import campaign
from scirag.ingest.manifest import read_manifest
from test_campaign import ROOT, SCIRAG, cli_env, conn, new_campaign, seed_records, server

JSON_HEADERS = {"Content-Type": "application/json"}


def run(args, env, timeout=120):
    return subprocess.run([str(SCIRAG), "campaign", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)  # fmt: skip


def run_killed_at(args, env, point: str):
    """Run with the failpoint set; the process must die of SIGKILL."""
    p = run(args, {**env, "SCIRAG_CAMPAIGN_KILL_AT": point})
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stdout, p.stderr)
    return p


def run_killed_when(args, env, ready, timeout=120):
    """Start the command and SIGKILL it once ready() holds (e.g. the server saw a request)."""
    proc = subprocess.Popen([str(SCIRAG), "campaign", *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.time() + timeout
    while time.time() < deadline and not ready() and proc.poll() is None:
        time.sleep(0.1)
    assert ready(), proc.communicate(timeout=5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return proc


def decision_rows(conn, c):
    return conn.execute(
        "SELECT record_id, decision, reason, decider, supersedes FROM scirag.screening_decisions WHERE campaign_id = %s ORDER BY id",
        (c.id,),
    ).fetchall()


def assert_prisma_adds_up(conn, c):
    counts = campaign.prisma_counts(conn, c)
    assert campaign.prisma_violations(counts) == [], counts
    return counts


def test_kill_9_during_scripted_screening_then_rerun(server, conn, dsn):
    c = new_campaign(conn)
    rel, irr = seed_records(conn, c, n_rel=3, n_irr=5)
    env = cli_env(dsn, server)
    script = [f"{rel[0]}=include", f"{irr[0]}=exclude:wrong topic", f"{rel[1]}=include", f"{irr[1]}=exclude:other"]
    args = ["screen", c.name] + [x for d in script for x in ("--decide", d)]
    # killed after the third decision's INSERT, before its COMMIT
    run_killed_at(args, env, "decide.before_commit:3")
    assert [r[:2] for r in decision_rows(conn, c)] == [(rel[0], "include"), (irr[0], "exclude")]
    # the same command again: the two recorded decisions are not added twice
    p = run(args, env)
    assert p.returncode == 0, p.stderr
    rows = decision_rows(conn, c)
    assert [r[:3] for r in rows] == [
        (rel[0], "include", None),
        (irr[0], "exclude", "wrong topic"),
        (rel[1], "include", None),
        (irr[1], "exclude", "other"),
    ]
    assert all(r[4] is None for r in rows)  # nothing superseded: no decision was repeated
    counts = assert_prisma_adds_up(conn, c)
    assert (counts["screened"], counts["excluded"], counts["sought_for_retrieval"]) == (4, 2, 2)
    assert counts["excluded_reasons"] == {"wrong topic": 1, "other": 1}
    # a real change of mind still supersedes
    assert run(["screen", c.name, "--decide", f"{irr[1]}=include"], env).returncode == 0
    excluded = conn.execute(
        "SELECT id FROM scirag.screening_decisions WHERE record_id = %s AND decision = 'exclude'", (irr[1],)
    ).fetchone()[0]
    assert decision_rows(conn, c)[-1] == (irr[1], "include", None, "human", excluded)


def test_kill_9_while_the_model_screener_waits_then_rerun(server, conn, dsn):
    """The model screener (an OpenAI-compatible server, recorded) is killed while the
    third answer is pending: two decisions stay, the rerun asks only about records
    without a decision, and no record gets two model decisions."""
    c = new_campaign(conn)
    rel, irr = seed_records(conn, c, n_rel=3, n_irr=6)
    campaign.decide(conn, c, rel[0], "include")
    campaign.decide(conn, c, irr[0], "exclude", "wrong topic")
    answer = lambda d, r=None: fx.chat_completion(json.dumps({"decision": d, "reason": r, "confidence": 0.95}))
    route = ("/llm/chat/completions", "*")
    server.routes[route] = [
        (200, JSON_HEADERS, answer("include")),
        (200, JSON_HEADERS, answer("exclude", "wrong topic")),
        (200, JSON_HEADERS, answer("include"), 60),  # the third answer does not come
        (200, JSON_HEADERS, answer("exclude", "wrong topic")),
    ]
    env = {
        **cli_env(dsn, server),
        "SCIRAG_LLM_PROVIDER": "openai",
        "SCIRAG_OPENAI_BASE_URL": server.url + "/llm",
        "SCIRAG_LLM_MODEL": "llama3.1",
    }
    asked = lambda: [json.loads(b)["messages"][-1]["content"] for p, b in server.posted if p == route[0]]
    run_killed_when(["screen", c.name, "--llm", "4"], env, lambda: len(asked()) == 3)
    llm_rows = [r for r in decision_rows(conn, c) if r[3] == "llm"]
    assert len(llm_rows) == 2
    first_two = {r[0] for r in llm_rows}
    server.routes[route] = [(200, JSON_HEADERS, answer("exclude", "wrong topic"))]
    p = run(["screen", c.name, "--llm", "3"], env)
    assert p.returncode == 0, p.stderr
    llm_rows = [r for r in decision_rows(conn, c) if r[3] == "llm"]
    assert len(llm_rows) == 5 and len({r[0] for r in llm_rows}) == 5  # one model decision per record
    titles = dict(conn.execute("SELECT id, title FROM scirag.campaign_records WHERE campaign_id = %s", (c.id,)).fetchall())  # fmt: skip
    rerun_prompts = asked()[3:]
    assert len(rerun_prompts) == 3
    for rid in first_two:  # records decided before the kill are not asked again
        assert not any(f"Title: {titles[rid]}\n" in q for q in rerun_prompts)
    counts = assert_prisma_adds_up(conn, c)
    assert counts["screened"] == 7


def test_kill_9_during_resolve_then_rerun(server, conn, dsn):
    """Killed after a record's locations were inserted but before they were committed:
    the rerun resolves that record once, skips the committed one, and no location is
    recorded twice."""
    c = new_campaign(conn)
    rel, irr = seed_records(conn, c, n_rel=4, n_irr=2)  # no OA location stated: Unpaywall is asked
    for rid in rel:
        campaign.decide(conn, c, rid, "include")
    for rid in irr:
        campaign.decide(conn, c, rid, "exclude", "wrong topic")
    dois = dict(conn.execute("SELECT id, doi FROM scirag.campaign_records WHERE campaign_id = %s", (c.id,)).fetchall())
    for i, rid in enumerate(rel):
        pdf = f"{server.url}/files/{i}.pdf" if i != 3 else None  # the last one has no OA copy
        server.json(f"/unpaywall/v2/{dois[rid]}", "*", fx.unpaywall_response(dois[rid], pdf, "cc-by-nc"))
    env = cli_env(dsn, server)
    run_killed_at(["resolve", c.name], env, "resolve.before_commit:2")
    got = conn.execute(
        "SELECT DISTINCT record_id FROM scirag.oa_resolutions WHERE campaign_id = %s", (c.id,)
    ).fetchall()
    assert got == [(rel[0],)]
    p = run(["resolve", c.name], env)
    assert p.returncode == 0, p.stderr
    assert "resolved 3 records" in p.stdout
    rows = conn.execute(
        "SELECT record_id, source, url, is_pdf, license FROM scirag.oa_resolutions WHERE campaign_id = %s ORDER BY record_id, id",
        (c.id,),
    ).fetchall()
    per_record = {rid: [r for r in rows if r[0] == rid] for rid in rel}
    for i, rid in enumerate(rel[:3]):
        # best_oa_location and oa_locations name the same PDF: one row
        assert per_record[rid] == [(rid, "unpaywall", f"{server.url}/files/{i}.pdf", True, "open_noncommercial")]
    assert per_record[rel[3]] == [(rel[3], "none", None, False, "unknown")]
    asked = [path for path, _ in server.log if path.startswith("/unpaywall/")]
    assert asked.count(f"/unpaywall/v2/{dois[rel[0]]}") == 1  # committed before the kill: not asked again
    assert asked.count(f"/unpaywall/v2/{dois[rel[1]]}") == 2  # killed before its commit: asked again
    assert_prisma_adds_up(conn, c)
    # and a third run has nothing to do
    p = run(["resolve", c.name], env)
    assert "resolved 0 records" in p.stdout
    assert conn.execute("SELECT count(*) FROM scirag.oa_resolutions WHERE campaign_id = %s", (c.id,)).fetchone()[0] == 4


def test_kill_9_during_fetch_twice_then_rerun(server, conn, dsn, tmp_path):
    """Killed (1) after the second PDF was renamed into place but before its download
    row, (2) while the third PDF's body was half received; the third run ends with one
    ok row, one file and one manifest line per retrievable record, no temporary file,
    the SHA-256 of each file as recorded, and PRISMA sought = retrieved + not retrieved."""
    c = new_campaign(conn)
    u = server.url + "/files/"
    pdfs = {i: fx.tiny_pdf(i + 1) for i in range(5)}  # distinct files: 1 to 5 pages
    oa = {i: [{"pdf_url": f"{u}p{i}.pdf", "license": "cc-by"}] for i in range(5)}
    rel, irr = seed_records(conn, c, n_rel=6, n_irr=2, oa=oa)  # record 5: no PDF location
    for i in range(5):
        server.routes[(f"/files/p{i}.pdf", "*")] = [(200, {"Content-Type": "application/pdf"}, pdfs[i])]
    for rid in rel:
        campaign.decide(conn, c, rid, "include")
    for rid in irr:
        campaign.decide(conn, c, rid, "exclude", "wrong topic")
    campaign.resolve(conn, c, echo=lambda m: None)
    folder = tmp_path / "camp"
    env = cli_env(dsn, server)
    args = ["fetch", c.name, "--folder", str(folder)]
    ok_rows = lambda: conn.execute(
        "SELECT record_id, sha256, path, pages FROM scirag.campaign_downloads WHERE campaign_id = %s AND status = 'ok' ORDER BY id",
        (c.id,),
    ).fetchall()

    # 1. the second PDF is in place, its row not yet written
    run_killed_at(args, env, "fetch.file_in_place:2")
    assert [r[0] for r in ok_rows()] == [rel[0]]
    assert sorted(p.name for p in (folder / "pdfs").iterdir()) == sorted([f"{rel[0]}.pdf", f"{rel[1]}.pdf"])
    assert not (folder / "manifest.jsonl").exists()

    # 2. the third PDF's body stops half way: killed while it downloads
    server.routes[("/files/p2.pdf", "*")] = [(200, {"Content-Type": "application/pdf"}, pdfs[2], 0, 60)]
    part = folder / "pdfs" / f"{rel[2]}.pdf.part"
    run_killed_when(args, env, part.exists)
    assert [r[0] for r in ok_rows()] == [rel[0], rel[1]]
    assert part.exists()  # what a kill leaves behind

    # 3. the rerun finishes
    server.routes[("/files/p2.pdf", "*")] = [(200, {"Content-Type": "application/pdf"}, pdfs[2])]
    p = run(args, env)
    assert p.returncode == 0, p.stderr
    assert "fetched 3 PDFs (0 failed attempts, 2 already there, 1 records without a direct PDF)" in p.stdout
    rows = ok_rows()
    assert [r[0] for r in rows] == rel[:5]  # one ok row per retrievable record, none twice
    files = sorted((folder / "pdfs").iterdir())
    assert [f.name for f in files] == sorted(f"{rid}.pdf" for rid in rel[:5])  # no .part, no stray file
    for i, (_rid, sha, path, pages) in enumerate(rows):
        data = (folder / path).read_bytes()
        assert data == pdfs[i] and hashlib.sha256(data).hexdigest() == sha and pages == i + 1
    entries = [e for _, e in read_manifest(folder / "manifest.jsonl")]
    assert all(not isinstance(e, Exception) for e in entries), entries
    assert sorted(e.id for e in entries) == sorted(f"campaign-{c.id}-{rid}" for rid in rel[:5])
    # each PDF was downloaded as often as the kills require, no more
    got = {f"p{i}.pdf": sum(1 for path, _ in server.log if path == f"/files/p{i}.pdf") for i in range(5)}
    assert got == {"p0.pdf": 1, "p1.pdf": 2, "p2.pdf": 2, "p3.pdf": 1, "p4.pdf": 1}
    counts = assert_prisma_adds_up(conn, c)
    assert (counts["sought_for_retrieval"], counts["retrieved"], counts["not_retrieved"]) == (6, 5, 1)
    # a fourth run changes nothing
    assert "fetched 0 PDFs" in run(args, env).stdout and ok_rows() == rows


@pytest.mark.parametrize("point", ["decide.before_commit:1", "resolve.before_commit:1", "fetch.file_in_place:1"])
def test_failpoints_do_nothing_elsewhere(point, monkeypatch):
    """A failpoint fires only at its own point and count (the hook cannot kill a normal run)."""
    monkeypatch.setenv("SCIRAG_CAMPAIGN_KILL_AT", point)
    campaign.failpoint("some.other.point")
    monkeypatch.setenv("SCIRAG_CAMPAIGN_KILL_AT", point.rsplit(":", 1)[0] + ":2")
    campaign._passes.clear()
    campaign.failpoint(point.rsplit(":", 1)[0])  # first pass of 2: alive
    campaign._passes.clear()
    monkeypatch.delenv("SCIRAG_CAMPAIGN_KILL_AT")
    campaign.failpoint(point.rsplit(":", 1)[0])
