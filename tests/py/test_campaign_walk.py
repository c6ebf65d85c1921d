"""The whole campaign walk (issue 24) as a user runs it, every step the real `scirag`
command in a subprocess, against recorded OpenAlex, Crossref, arXiv and Unpaywall
responses and PDFs served on the loopback (no network):

    new -> discover -> screen (scripted decisions) -> resolve -> fetch -> ingest
        -> assess (full-text eligibility, scripted; killed once and rerun) -> report

and the PRISMA report's numbers, worked out by hand from the recorded responses:

- identified 8: OpenAlex 4 (two pages), Crossref 2 (one page, then an empty one),
  arXiv 2; duplicates 2 (a Crossref DOI OpenAlex gave, an arXiv title + year OpenAlex
  gave without DOI); 6 records to screen;
- screened 6: 2 excluded (wrong topic 1, wrong population 1), 4 included;
- sought 4: W1 (OpenAlex PDF, cc-by), W2 (Unpaywall by DOI, cc-by-nc), the Crossref
  record (its PDF link, CC BY-NC URL), W4 (no DOI, no PDF: not retrieved);
- retrieved 3, not retrieved 1; the three PDFs ingested with the license class their
  source stated;
- assessed 3 on the full text: 1 report excluded (wrong study design), included 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import psycopg

import campaign_fixtures as fx
from test_campaign import ROOT, SCIRAG, cli_env, server
from test_ingest_folder import straw_pdf

STRAW = "straw ash slagging deposits in biomass boilers with potassium and chlorine"
CARDIAC = "patients placebo blood pressure dose randomised trial"


def cli(env, *args, timeout=600):
    import subprocess

    return subprocess.run([str(SCIRAG), *map(str, args)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)  # fmt: skip


def record(server, tmp_path):
    """Serve the recorded API answers and three text PDFs; returns the PDFs' facts."""
    u = server.url + "/files/"
    w = [
        fx.oa_work(1, "Straw ash slagging in boilers", 2012, "10.1016/walk.1", STRAW, u + "p1.pdf", "cc-by"),
        fx.oa_work(2, "Chlorine release from straw ash", 2014, "10.1016/walk.2", STRAW, None, None),
        fx.oa_work(3, "Blood pressure trial of a new drug", 2016, "10.1016/walk.3", CARDIAC, None, None),
        fx.oa_work(4, "Slagging of wheat straw ash in grate boilers", 2019, None, STRAW, None, None),
    ]
    server.json("/openalex/works", "1", fx.oa_page(w[:2], 4, 1, 2))
    server.json("/openalex/works", "2", fx.oa_page(w[2:], 4, 2, 2))
    server.json(
        "/crossref/works",
        "*",
        fx.crossref_page(
            [
                fx.crossref_item("10.1016/walk.1", "Straw ash slagging in boilers", 2012, STRAW),  # duplicate DOI
                fx.crossref_item("10.1016/walk.5", "Potassium from straw ash deposits", 2018, STRAW, u + "p3.pdf"),
            ],
            2,
            "cursor-2",
        ),
    )
    server.json("/crossref/works", "cursor-2", fx.crossref_page([], 2, "cursor-2"))
    feed = fx.arxiv_feed(
        [
            ("2101.00001", "Slagging of Wheat Straw Ash in Grate Boilers", STRAW, 2019, None),  # duplicate title + year
            ("2102.00002", "Cardiac outcomes of drug dosing", CARDIAC, 2021, None),
        ],
        2,
    )
    server.routes[("/arxiv/api/query", "0")] = [(200, {"Content-Type": "application/atom+xml"}, feed)]
    server.json("/unpaywall/v2/10.1016/walk.2", "*", fx.unpaywall_response("10.1016/walk.2", u + "p2.pdf", "cc-by-nc"))
    facts = {
        "p1.pdf": "In the boiler the straw ash began slagging at 740 degrees.",
        "p2.pdf": "Chlorine left the straw ash mostly below 700 degrees.",
        "p3.pdf": "Potassium deposits grew by 9 grams per hour on the superheater.",
    }
    for name, fact in facts.items():
        pdf = straw_pdf(tmp_path / "served" / name, [f"Paper {name}"], ["Ada Lovelace"], fact)
        server.routes[("/files/" + name, "*")] = [(200, {"Content-Type": "application/pdf"}, pdf.read_bytes())]
    return facts


def test_whole_walk_new_to_report(server, dsn, tmp_path):
    (tmp_path / "served").mkdir()
    facts = record(server, tmp_path)
    env = {**cli_env(dsn, server), "SCIRAG_CAMPAIGNS_DIR": str(tmp_path / "campaigns")}
    name = "walk straw ash"

    p = cli(env, "campaign", "new", name, "--query", "straw AND (ash OR slagging)", "--years", "2000-2025",
            "--max", "2000", "--mailto", "me@lab.example")  # fmt: skip
    assert p.returncode == 0, p.stderr
    cid = int(p.stdout.split()[1])

    p = cli(env, "campaign", "discover", name)
    assert p.returncode == 0, p.stderr
    assert "openalex: 4 new records" in p.stdout and "crossref: 2 new records" in p.stdout
    assert "arxiv: 2 new records" in p.stdout

    with psycopg.connect(dsn) as conn:
        ids = dict(
            conn.execute(
                "SELECT source || ':' || source_id, id FROM scirag.campaign_records WHERE campaign_id = %s AND duplicate_of IS NULL",
                (cid,),
            ).fetchall()
        )
    assert sorted(ids) == ["arxiv:2102.00002", "crossref:10.1016/walk.5"] + [f"openalex:W{i}" for i in (1, 2, 3, 4)]

    # the screener ranks; a person (scripted) decides
    p = cli(env, "campaign", "screen", name, "--decide", f"{ids['openalex:W1']}=include",
            "--decide", f"{ids['openalex:W3']}=exclude:wrong topic")  # fmt: skip
    assert p.returncode == 0, p.stderr
    nxt = json.loads(cli(env, "campaign", "screen", name, "--next", "4").stdout)
    ranked = [r["record_id"] for r in nxt["records"]]
    assert ranked[-1] == ids["arxiv:2102.00002"]  # the cardiac record comes last
    script = {
        ids["openalex:W2"]: "include",
        ids["openalex:W4"]: "include",
        ids["crossref:10.1016/walk.5"]: "include",
        ids["arxiv:2102.00002"]: "exclude:wrong population",
    }
    p = cli(env, "campaign", "screen", name, *[x for rid, d in script.items() for x in ("--decide", f"{rid}={d}")])
    assert p.returncode == 0, p.stderr

    p = cli(env, "campaign", "resolve", name)
    assert p.returncode == 0, p.stderr
    assert "resolved 4 records" in p.stdout

    p = cli(env, "campaign", "fetch", name)
    assert p.returncode == 0, p.stderr
    assert "fetched 3 PDFs (0 failed attempts, 0 already there, 1 records without a direct PDF)" in p.stdout
    folder = tmp_path / "campaigns" / f"{cid}-walk-straw-ash"
    manifest = folder / "manifest.jsonl"
    lines = [json.loads(x) for x in manifest.read_text().splitlines()]
    assert {x["id"]: x["license"] for x in lines} == {
        f"campaign-{cid}-{ids['openalex:W1']}": "open_commercial",
        f"campaign-{cid}-{ids['openalex:W2']}": "open_noncommercial",
        f"campaign-{cid}-{ids['crossref:10.1016/walk.5']}": "open_noncommercial",
    }

    p = cli(env, "ingest", manifest)
    assert p.returncode == 0, p.stderr
    with psycopg.connect(dsn) as conn:
        docs = conn.execute(
            """SELECT d.external_id, d.license, d.title, string_agg(c.content, ' ')
               FROM scirag.documents d JOIN scirag.chunks c ON c.document_id = d.id
               WHERE d.external_id LIKE %s GROUP BY 1, 2, 3 ORDER BY 1""",
            (f"campaign-{cid}-%",),
        ).fetchall()
    assert len(docs) == 3
    assert {d[2] for d in docs} == {
        "Straw ash slagging in boilers",
        "Chlorine release from straw ash",
        "Potassium from straw ash deposits",
    }
    body = " ".join(d[3] for d in docs)
    assert all(f in body for f in facts.values()), body[:2000]

    # full-text eligibility: the reports waiting, then scripted decisions; a kill -9
    # between the second decision's INSERT and COMMIT, and the same command again
    waiting = json.loads(cli(env, "campaign", "assess", name, "--next", "10").stdout)["reports"]
    assert sorted(r["record_id"] for r in waiting) == sorted(
        ids[k] for k in ("openalex:W1", "openalex:W2", "crossref:10.1016/walk.5")
    )
    assert all((folder / r["pdf"]).is_file() for r in waiting)
    bad = cli(env, "campaign", "assess", name, "--decide", f"{ids['openalex:W4']}=eligible")
    assert bad.returncode != 0 and "has no retrieved report" in bad.stderr
    assess = ["campaign", "assess", name, "--decide", f"{ids['openalex:W1']}=eligible",
              "--decide", f"{ids['openalex:W2']}=exclude:wrong study design",
              "--decide", f"{ids['crossref:10.1016/walk.5']}=eligible"]  # fmt: skip
    killed = cli({**env, "SCIRAG_CAMPAIGN_KILL_AT": "assess.before_commit:2"}, *assess)
    assert killed.returncode == -9
    p = cli(env, *assess)
    assert p.returncode == 0, p.stderr
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT record_id, decision, supersedes FROM scirag.eligibility_decisions WHERE campaign_id = %s ORDER BY id",
            (cid,),
        ).fetchall()
    assert [r[:2] for r in rows] == [
        (ids["openalex:W1"], "eligible"),
        (ids["openalex:W2"], "exclude"),
        (ids["crossref:10.1016/walk.5"], "eligible"),
    ]
    assert all(r[2] is None for r in rows)

    p = cli(env, "campaign", "report", name)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout.strip().splitlines()[-1])
    assert rep["identified"] == 8 and rep["identified_per_source"] == {"arxiv": 2, "crossref": 2, "openalex": 4}
    assert rep["duplicates_removed"] == 2 and rep["screened"] == 6 and rep["awaiting_human_review"] == 0
    assert rep["excluded"] == 2 and rep["excluded_reasons"] == {"wrong population": 1, "wrong topic": 1}
    assert (rep["sought_for_retrieval"], rep["retrieved"], rep["not_retrieved"]) == (4, 3, 1)
    assert (rep["assessed_for_eligibility"], rep["awaiting_full_text_assessment"]) == (3, 0)
    assert rep["reports_excluded"] == 1 and rep["reports_excluded_reasons"] == {"wrong study design": 1}
    assert rep["included"] == 2
    assert json.loads((folder / "prisma.json").read_text()) == rep
    svg = (folder / "prisma.svg").read_text()
    assert "n = 8" in svg and "Duplicate records removed" in svg and "wrong population: 1" in svg
    assert "wrong study design: 1" in svg
    with open(folder / "prisma.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 8 and sum(1 for r in table if r["duplicate_of"]) == 2
    assert sorted(r["eligibility"] for r in table if r["eligibility"]) == ["eligible", "eligible", "exclude"]
    assert sorted(Path(r["pdf"]).name for r in table if r["pdf"]) == sorted(
        f"{ids[k]}.pdf" for k in ("openalex:W1", "openalex:W2", "crossref:10.1016/walk.5")
    )
