"""A library managed day to day (issue 25): `scirag docs list|show|rm|reparse|set`,
deleting a document from every layer in one transaction, re-parsing in place, and
metadata corrections and new versions through ingest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid

import pytest

from conftest import ROOT

SCIRAG = ROOT / ".venv" / "bin" / "scirag"


@pytest.fixture
def run_cli(dsn):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = dsn
    env["COLUMNS"] = "400"

    def _run(*args, timeout=180):
        return subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

    return _run


def table_counts(conn) -> dict[str, int]:
    """Rows of every scirag table, and the keyword statistics' totals, as the superuser."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = 'scirag'::regnamespace AND relkind IN ('r', 'p')"
        ).fetchall()
    ]
    counts = {t: conn.execute(f'SELECT count(*) FROM scirag."{t}"').fetchone()[0] for t in tables}
    counts["kw_term_stats.df"] = conn.execute("SELECT coalesce(sum(df), 0) FROM scirag.kw_term_stats").fetchone()[0]
    counts["kw_class_stats.n_chunks"] = conn.execute(
        "SELECT coalesce(sum(n_chunks), 0) FROM scirag.kw_class_stats"
    ).fetchone()[0]
    counts["kw_blocks.postings"] = conn.execute(
        "SELECT coalesce(sum(cardinality(chunk_ids)), 0) FROM scirag.kw_blocks"
    ).fetchone()[0]
    counts["cited_document_id"] = conn.execute(
        "SELECT count(*) FROM scirag.document_citations WHERE cited_document_id IS NOT NULL"
    ).fetchone()[0]
    return counts


def ingest_text(dsn, embedder, ident: str, text: str, **meta) -> int:
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_entries
    from scirag.ingest.manifest import Entry

    entry = Entry(line_no=1, id=ident, title=meta.pop("title", ident), text=text, license="public", **meta)
    with db.connect(dsn, role="scirag_loader") as conn:
        counts = ingest_entries(conn, [(1, entry)], "test", Ingester(conn, embedder=embedder))
        assert counts["added"] == 1, counts
        return conn.execute("SELECT id FROM scirag.documents WHERE external_id = %s", (ident,)).fetchone()[0]


ZORVATH = (
    "Wheat straw is the principal residue of Zorvath County. The Quellmoor depot receives only barley straw. "
    "The Quellmoor depot in Zorvath County baled 41,000 dry tonnes in 2023. "
    "Earlier estimates are in doi:10.5555/scirag.demo.001 and the method follows Ostrander et al."
)


def test_rm_leaves_no_row_in_any_layer_and_runs_in_one_transaction(
    dsn, demo_corpus, embedder, admin_conn, run_cli, restore_corpus
):
    from scirag import db
    from scirag.graph.communities import build_communities
    from scirag.graph.extract import resolve_citations, run_extract
    from scirag.graph.offline import OfflineExtractor
    from scirag.graph.ontology import load_domain

    domain = load_domain()
    u = uuid.uuid4().hex[:8]
    # a demo document's Crossref reference list cites the new document's DOI (unresolved yet)
    admin_conn.execute(
        """INSERT INTO scirag.document_citations (document_id, cited_doi, origin, license, source)
           SELECT id, %s, 'crossref', license, source FROM scirag.documents WHERE external_id = 'county-straw-2022'""",
        (f"10.5555/scirag.test.{u}",),
    )
    before = table_counts(admin_conn)
    doc = ingest_text(dsn, embedder, f"zorvath-{u}", ZORVATH, doi=f"10.5555/scirag.test.{u}", year=2024)
    with db.connect(dsn, role="scirag_loader") as conn:
        run_extract(conn, domain, OfflineExtractor(domain), document_ids=[doc])
        resolve_citations(conn)
        conn.commit()
        build_communities(conn, domain, None, embedder=embedder)
    loaded = table_counts(admin_conn)
    layers = admin_conn.execute("SELECT scirag.document_counts(%s)", (doc,)).fetchone()[0]
    # every layer holds something of the document, or the test proves nothing
    for layer in ("chunks", "postings", "mentions", "relationships", "citations", "cited_by", "communities"):
        assert layers[layer] > 0, (layer, layers)
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.kg_entities WHERE name = 'Zorvath County'").fetchone()[0] == 1
    )
    kept_communities = admin_conn.execute(
        "SELECT count(*) FROM scirag.kg_communities WHERE NOT source_documents @> ARRAY[%s::bigint]", (doc,)
    ).fetchone()[0]

    # an unknown id in the same command deletes nothing (one transaction)
    proc = run_cli("docs", "rm", f"zorvath-{u}", "no-such-document", "--yes")
    assert proc.returncode == 1 and "no document 'no-such-document'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert table_counts(admin_conn) == loaded

    proc = run_cli("docs", "rm", f"zorvath-{u}", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert f"deleted zorvath-{u} (id {doc})" in proc.stdout
    after = table_counts(admin_conn)
    # communities were rebuilt over the whole corpus after `before`; ingest runs and
    # their reports are the log of what each run did, and keep their rows
    apart = ("kg_communities", "kg_community_members", "kg_community_chunks", "ingest_runs", "ingest_reports")
    assert {k: v for k, v in after.items() if k not in apart} == {k: v for k, v in before.items() if k not in apart}
    assert after["kg_communities"] == kept_communities
    for table, column in (
        ("chunks", "document_id"),
        ("kw_postings", "document_id"),
        ("kg_mentions", "document_id"),
        ("kg_relationships", "document_id"),
        ("document_citations", "document_id"),
        ("document_citations", "cited_document_id"),
        ("kg_community_chunks", "document_id"),
    ):
        assert admin_conn.execute(f"SELECT count(*) FROM scirag.{table} WHERE {column} = %s", (doc,)).fetchone()[0] == 0
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kg_communities WHERE source_documents @> ARRAY[%s::bigint]", (doc,)
        ).fetchone()[0]
        == 0
    )
    # the entity whose name only the deleted text held is gone with it
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.kg_entities WHERE name = 'Zorvath County'").fetchone()[0] == 0
    )
    admin_conn.execute("DELETE FROM scirag.document_citations WHERE cited_doi = %s", (f"10.5555/scirag.test.{u}",))


def test_rm_needs_confirmation_and_readers_may_not_delete(dsn, demo_corpus, run_cli, reader_conn):
    import psycopg

    proc = subprocess.run(
        [str(SCIRAG), "docs", "rm", "pellet-trial"],
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}, "SCIRAG_DSN": dsn},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "pass --yes" in proc.stderr
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        reader_conn.execute("SELECT scirag.document_delete('pellet-trial')")


def test_list_show_and_set(dsn, demo_corpus, embedder, run_cli, admin_conn, restore_corpus):
    u = uuid.uuid4().hex[:8]
    doc = ingest_text(dsn, embedder, f"lib-{u}", f"Note {u}: corn stover bales held 14 % moisture in storage.")
    admin_conn.execute("UPDATE scirag.documents SET metadata_inferred = '{title,year}' WHERE id = %s", (doc,))
    proc = run_cli("docs", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["external_id"]: r for r in json.loads(proc.stdout)}
    assert rows[f"lib-{u}"]["document_id"] == doc and rows[f"lib-{u}"]["chunks"] >= 1
    assert "county-straw-2022" in rows
    proc = run_cli("docs", "list", "--source", "journal")
    assert proc.returncode == 0 and "residue-composition" in proc.stdout and f"lib-{u}" not in proc.stdout
    assert "by license: open_commercial 1, open_noncommercial 1" in proc.stdout

    proc = run_cli(
        "docs",
        "set",
        f"lib-{u}",
        "--title",
        "Stover Moisture",
        "--authors",
        "A. Author; B. Author",
        "--license",
        "CC-BY-NC",
    )
    assert proc.returncode == 0, proc.stderr
    assert "taken as open_noncommercial" in proc.stderr
    title, authors, license_, inferred, chunk_license = admin_conn.execute(
        """SELECT d.title, d.authors, d.license::text, d.metadata_inferred,
                  (SELECT DISTINCT c.license::text FROM scirag.chunks c WHERE c.document_id = d.id)
           FROM scirag.documents d WHERE d.id = %s""",
        (doc,),
    ).fetchone()
    assert (title, authors, license_, chunk_license) == (
        "Stover Moisture",
        ["A. Author", "B. Author"],
        "open_noncommercial",
        "open_noncommercial",
    )
    assert inferred == ["year"]  # the title set by hand is stated now

    proc = run_cli("docs", "show", str(doc), "--json")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["title"] == "Stover Moisture" and shown["layers"]["chunks"] >= 1

    proc = run_cli("docs", "set", f"lib-{u}", "--year", "123456")
    assert (
        proc.returncode == 1 and proc.stderr.startswith("error: scirag.document_set: year") and "\n" == proc.stderr[-1]
    )
    proc = run_cli("docs", "set", f"lib-{u}", "--license", "cc-by-nd")
    assert proc.returncode == 1 and "no license class matches it exactly" in proc.stderr
    proc = run_cli("docs", "show", "no-such-doc")
    assert proc.returncode == 1 and "no document 'no-such-doc'" in proc.stderr and "Traceback" not in proc.stderr


def test_reparse_reads_the_stored_file_again_and_keeps_the_id(
    run_cli, demo_corpus, admin_conn, tmp_path, restore_corpus
):
    u = uuid.uuid4().hex[:8]
    paper = tmp_path / f"paper-{u}.md"
    paper.write_text(f"# Paper {u}\n\n## Results\n\nThe kiln dried {u} straw to 11 % moisture.\n", encoding="utf-8")
    proc = run_cli("ingest", str(paper), "--license", "public")
    assert proc.returncode == 0, proc.stderr
    doc, old_hash = admin_conn.execute(
        "SELECT id, content_hash FROM scirag.documents WHERE external_id = %s", (f"paper-{u}",)
    ).fetchone()
    admin_conn.execute("UPDATE scirag.documents SET year = 1999 WHERE id = %s", (doc,))  # a correction made since
    # rows keyed on the document, not on its text: its Crossref reference list and a citation of it
    admin_conn.execute(
        """INSERT INTO scirag.document_citations (document_id, cited_doi, origin, license, source)
           SELECT id, '10.5555/scirag.cited.by.paper', 'crossref', license, source FROM scirag.documents
           WHERE id = %s""",
        (doc,),
    )
    admin_conn.execute(
        """INSERT INTO scirag.document_citations (document_id, cited_doi, cited_document_id, origin, license, source)
           SELECT id, %s, %s, 'crossref', license, source FROM scirag.documents WHERE external_id = 'county-straw-2022'""",
        (f"10.5555/scirag.paper.{u}", doc),
    )
    keyed = """SELECT count(*) FILTER (WHERE document_id = %(d)s AND origin = 'crossref'),
                      count(*) FILTER (WHERE cited_document_id = %(d)s)
               FROM scirag.document_citations"""

    proc = run_cli("docs", "reparse", f"paper-{u}")
    assert proc.returncode == 0, proc.stderr
    assert f"paper-{u}: duplicate" in proc.stderr  # nothing changed: nothing rewritten

    # "a parser upgrade": the same file now reads differently
    paper.write_text(
        f"# Paper {u}\n\n## Results\n\nThe rotary kiln dried {u} straw to 9 % moisture.\n", encoding="utf-8"
    )
    proc = run_cli("docs", "reparse", str(doc))
    assert proc.returncode == 0, proc.stderr
    assert f"paper-{u}: replaced" in proc.stderr
    same_id, new_hash, year = admin_conn.execute(
        "SELECT id, content_hash, year FROM scirag.documents WHERE external_id = %s", (f"paper-{u}",)
    ).fetchone()
    assert same_id == doc and new_hash != old_hash and year == 1999
    assert admin_conn.execute(keyed, {"d": doc}).fetchone() == (1, 1)  # both stay with the id
    text = " ".join(
        r[0] for r in admin_conn.execute("SELECT content FROM scirag.chunks WHERE document_id = %s", (doc,)).fetchall()
    )
    assert "rotary kiln" in text and "11 %" not in text
    # the old text's keyword postings went with its chunks
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kw_all_postings WHERE document_id = %s AND lexeme = 'rotari'", (doc,)
        ).fetchone()[0]
        == 1
    )
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kw_all_postings p LEFT JOIN scirag.chunks c ON c.id = p.chunk_id "
            "WHERE p.document_id = %s AND c.id IS NULL",
            (doc,),
        ).fetchone()[0]
        == 0
    )

    paper.unlink()
    proc = run_cli("docs", "reparse", f"paper-{u}")
    assert proc.returncode == 1 and "no longer exists" in proc.stderr and "--replace" in proc.stderr
    admin_conn.execute("DELETE FROM scirag.document_citations WHERE cited_doi = %s", (f"10.5555/scirag.paper.{u}",))


def test_a_later_line_with_the_same_content_corrects_metadata(
    run_cli, demo_corpus, admin_conn, make_manifest, restore_corpus
):
    u = uuid.uuid4().hex[:8]
    text = f"Trial {u}: wheat straw pellets reached 650 kg/m3 bulk density."
    line = {
        "id": f"fix-{u}",
        "text": text,
        "title": "Wrong Title",
        "authors": ["Nobody"],
        "year": 1900,
        "license": "public",
    }
    assert run_cli("ingest", str(make_manifest([line]))).returncode == 0
    fixed = {**line, "title": "Right Title", "authors": ["Ada Right", "Bo Right"], "year": 2021, "doi": "10.1/x"}
    proc = run_cli("ingest", str(make_manifest([fixed], name="fixed.jsonl")))
    assert proc.returncode == 0, proc.stderr
    assert f"fix-{u}: updated (metadata corrected: title, authors, year, doi" in proc.stderr
    assert "1 updated" in proc.stderr
    row = admin_conn.execute(
        "SELECT title, authors, year, doi FROM scirag.documents WHERE external_id = %s", (f"fix-{u}",)
    ).fetchone()
    assert row == ("Right Title", ["Ada Right", "Bo Right"], 2021, "10.1/x")
    # the same line again is a plain duplicate
    proc = run_cli("ingest", str(make_manifest([fixed], name="again.jsonl")))
    assert f"fix-{u}: duplicate" in proc.stderr


def test_a_new_version_under_the_same_id_is_a_replace(run_cli, demo_corpus, admin_conn, make_manifest, restore_corpus):
    u = uuid.uuid4().hex[:8]
    v1 = {
        "id": f"arxiv-{u}",
        "text": f"Version one {u}: baling at 18 % moisture.",
        "license": "public",
        "arxiv_id": f"2401.{u[:5]}",
    }
    assert run_cli("ingest", str(make_manifest([v1]))).returncode == 0
    doc = admin_conn.execute("SELECT id FROM scirag.documents WHERE external_id = %s", (f"arxiv-{u}",)).fetchone()[0]
    old_chunks = {r[0] for r in admin_conn.execute("SELECT id FROM scirag.chunks WHERE document_id = %s", (doc,))}
    v2 = {**v1, "text": f"Version two {u}: baling at 15 % moisture avoids heating."}
    proc = run_cli("ingest", str(make_manifest([v2], name="v2.jsonl")))
    assert proc.returncode == 1 and "pass --replace" in proc.stderr
    proc = run_cli("ingest", str(make_manifest([v2], name="v2.jsonl")), "--replace")
    assert proc.returncode == 0, proc.stderr
    assert f"arxiv-{u}: replaced" in proc.stderr
    assert (
        admin_conn.execute("SELECT id FROM scirag.documents WHERE external_id = %s", (f"arxiv-{u}",)).fetchone()[0]
        == doc
    )
    # the old version's rows are gone from every layer that holds chunk ids
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.chunks WHERE id = ANY (%s)", (list(old_chunks),)).fetchone()[0]
        == 0
    )
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kw_all_postings WHERE chunk_id = ANY (%s)", (list(old_chunks),)
        ).fetchone()[0]
        == 0
    )
    text = admin_conn.execute(
        "SELECT string_agg(content, ' ') FROM scirag.chunks WHERE document_id = %s", (doc,)
    ).fetchone()[0]
    assert "Version two" in text and "Version one" not in text


def test_folder_walk_reports_the_types_it_skipped(tmp_path):
    from scirag.ingest.discover import discover, skipped_summary

    (tmp_path / "sub").mkdir()
    (tmp_path / "paper.md").write_text("# Paper\n\ntext\n", encoding="utf-8")
    (tmp_path / "draft.docx").write_bytes(b"PK")
    (tmp_path / "sub" / "figure.png").write_bytes(b"\x89PNG")
    (tmp_path / "sub" / "data.json").write_text("{}", encoding="utf-8")
    (tmp_path / "sub" / "more.jsonl").write_text("", encoding="utf-8")
    (tmp_path / ".hidden.docx").write_bytes(b"PK")  # hidden files stay silent
    found = discover([tmp_path])
    assert [e.id for e in found.entries] == ["paper"]
    lines = skipped_summary(found.skipped)
    assert lines[0].startswith("skipped 3 files of unsupported types: .docx, .json, .png (scirag reads ")
    assert (
        lines[1] == "skipped 1 manifest(s) inside folders (name a manifest on the command line to read it): more.jsonl"
    )


def test_license_names_are_case_insensitive_and_common_names_map():
    from scirag.ingest.licenses import normalise_license
    from scirag.ingest.manifest import ManifestError, parse_entry

    assert normalise_license("Open_Commercial") == ("open_commercial", None)
    assert normalise_license("CC-BY")[0] == "open_commercial"
    assert normalise_license("cc by 4.0")[0] == "open_commercial"
    assert normalise_license("CC-BY-NC")[0] == "open_noncommercial"
    assert normalise_license("CC0") == ("public", "hint: license 'CC0' taken as public")
    with pytest.raises(ValueError, match="no license class matches it exactly"):
        normalise_license("CC-BY-ND")
    with pytest.raises(ValueError, match=r"'free' is not one of public, .*common names are accepted too: CC0, CC-BY"):
        normalise_license("free")
    entry = parse_entry('{"id": "a", "text": "x", "license": "CC-BY-NC-SA"}', 1, ROOT)
    assert entry.license == "open_noncommercial"
    with pytest.raises(ManifestError, match=r"manifest line 1 \(a\): license 'GPL'"):
        parse_entry('{"id": "a", "text": "x", "license": "GPL"}', 1, ROOT)


def test_checks_footer_says_what_was_checked_not_ok():
    from scirag.ask import checks_line

    passed = {"checks": {"citations_ok": True, "numbers_ok": True, "numbers": 2, "supports_ok": True, "claims": 3}}
    line = checks_line(passed)
    assert line == (
        "checked (not a verdict on correctness): every [n] names a source listed above; the cited text contains "
        "the answer's 2 number(s); each of 3 claim(s) has its key terms in one sentence or row of a source it cites"
    )
    assert " ok" not in line
    failed = {
        "abstained": True,
        "checks": {
            "citations_ok": False,
            "invalid_citations": [7],
            "numbers_ok": False,
            "ungrounded_numbers": ["28.4"],
            "supports_ok": False,
            "unsupported": [2],
        },
    }
    line = checks_line(failed)
    assert "citations that name no listed source: [7]" in line and "numbers NOT in the cited text: 28.4" in line
    assert "NOT found in one sentence of a source they cite: 2" in line and line.endswith("the answer abstains")
    assert checks_line({"checks": {"numbers_ok": True, "numbers": 0}}).count("the answer states no number") == 1


def test_citations_are_complete(dsn, demo_corpus, embedder, admin_conn, restore_corpus):
    u = uuid.uuid4().hex[:8]
    doc = ingest_text(
        dsn,
        embedder,
        f"btc-{u}",
        f"Note {u}: a purely peer-to-peer version of electronic cash.",
        title="Bitcoin: A Peer-to-Peer Electronic Cash System",
        authors=["Satoshi Nakamoto"],
    )
    cite = """SELECT scirag.citation(d, c) ->> 'cite' FROM scirag.documents d
              JOIN scirag.chunks c ON c.document_id = d.id AND c.kind <> 'section' WHERE d.id = %s"""
    # one line of text: "line 1"; the author stays without a year
    assert admin_conn.execute(cite, (doc,)).fetchone()[0] == (
        "Satoshi Nakamoto, Bitcoin: A Peer-to-Peer Electronic Cash System, line 1"
    )
    admin_conn.execute("UPDATE scirag.documents SET authors = '{}', year = 2008 WHERE id = %s", (doc,))
    assert (
        admin_conn.execute(cite, (doc,)).fetchone()[0]
        == "(2008), Bitcoin: A Peer-to-Peer Electronic Cash System, line 1"
    )
    admin_conn.execute("UPDATE scirag.documents SET year = NULL WHERE id = %s", (doc,))
    assert admin_conn.execute(cite, (doc,)).fetchone()[0] == "Bitcoin: A Peer-to-Peer Electronic Cash System, line 1"
    # a span keeps "lines a-b" (the demo's county assessment is Markdown)
    spans = admin_conn.execute(
        """SELECT scirag.citation(d, c) ->> 'cite' FROM scirag.documents d JOIN scirag.chunks c ON c.document_id = d.id
           WHERE d.external_id = 'county-straw-2022' AND c.line_end > c.line_start LIMIT 1"""
    ).fetchone()[0]
    assert spans.startswith("Marguerite L. Ostrander et al. (2022), Crop Residue") and ", lines " in spans


@pytest.mark.parametrize(
    "args",
    [
        ("retrieve", "straw moisture"),
        ("ask", "straw moisture"),
        ("docs", "list"),
        ("ingest", str(ROOT / "domain" / "demo" / "manifest.jsonl")),
        ("preset", "list"),
    ],
)
def test_database_down_is_one_line_with_the_fix(args, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = f"host={tmp_path} port=1 user=postgres dbname=scirag"  # nothing listens there
    proc = subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "scripts/db_start.sh" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "╭" not in proc.stderr


def test_answerer_model_without_a_model_is_one_line_with_the_fix(run_cli, demo_corpus):
    proc = run_cli("ask", "--answerer", "model", "How much straw could Harlan County supply?")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "╭" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert "no model is configured" in line and "SCIRAG_LLM_PROVIDER=google" in line and "--answerer extractive" in line


def test_mcp_with_the_database_down_answers_each_call_with_a_tool_error(tmp_path):
    """`scirag mcp` starts while the database is down and fails each tool call within
    seconds, saying how the database is started (it used to crash after 30 s)."""
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "scirag.cli", "mcp", "--dsn", f"host={tmp_path} port=1 user=postgres dbname=scirag"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )

    def call(message: dict) -> dict:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        hello = call(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert "scirag" in hello["result"]["instructions"]
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        for n, (tool, arguments) in enumerate([("current_scope", {}), ("retrieve", {"question": "straw"})], 2):
            started = time.monotonic()
            reply = call(
                {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
            )
            assert time.monotonic() - started < 20
            assert reply["result"]["isError"] is True
            assert "the database is unreachable" in reply["result"]["content"][0]["text"]
            assert "scripts/db_start.sh" in reply["result"]["content"][0]["text"]
        assert proc.poll() is None  # still serving
    finally:
        proc.stdin.close()
        proc.wait(15)


def test_mcp_answers_again_once_the_database_is_back(dsn, tmp_path):
    """`scirag mcp` started while the database is down serves the first call that comes
    after the database is reachable: its socket appears where the DSN points."""
    import sys

    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(dsn)
    socket = f"{info['host']}/.s.PGSQL.{info['port']}"
    down = tmp_path / "sock"
    down.mkdir()
    mcp_dsn = psycopg.conninfo.make_conninfo(dsn, host=str(down))
    proc = subprocess.Popen(
        [sys.executable, "-m", "scirag.cli", "mcp", "--dsn", mcp_dsn],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )

    def call(n: int, message: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, **message}) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    scope = {"method": "tools/call", "params": {"name": "current_scope", "arguments": {}}}
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        call(1, {"method": "initialize", "params": hello})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        reply = call(2, scope)
        assert reply["result"]["isError"] is True and "scripts/db_start.sh" in reply["result"]["content"][0]["text"]
        (down / f".s.PGSQL.{info['port']}").symlink_to(socket)  # the database is reachable now
        reply = call(3, scope)
        assert reply["result"].get("isError") is not True, reply
        assert "scirag_reader" in json.dumps(reply["result"]), reply
    finally:
        proc.stdin.close()
        proc.wait(15)


def test_help_is_whole_at_80_columns():
    """Every command's --help at 80 columns holds each option's whole help text (no "…")."""
    import re

    import typer
    from typer.testing import CliRunner

    from scirag.cli import app

    root = typer.main.get_command(app)

    def leaves(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from leaves(sub, [*path, name])
        else:
            yield path, cmd

    runner = CliRunner()
    seen = 0
    for path, cmd in leaves(root, []):
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80).output
        assert "…" not in out, (path, out)
        flat = " ".join(out.split())
        for param in cmd.params:
            if getattr(param, "help", None):
                assert " ".join(param.help.split()) in flat, (path, param.name)
                seen += 1
        assert max(len(line) for line in out.splitlines()) <= 80 or path == ["serve"], path
    assert seen > 100


def test_no_unexplained_names_in_what_users_read(run_cli, admin_conn):
    proc = run_cli("preset", "list")
    assert proc.returncode == 0 and "default" in proc.stdout and "VulcanLab" not in proc.stdout
    comments = admin_conn.execute(
        """SELECT count(*) FROM pg_description d
           LEFT JOIN pg_proc p ON d.classoid = 'pg_proc'::regclass AND p.oid = d.objoid
           LEFT JOIN pg_class c ON d.classoid = 'pg_class'::regclass AND c.oid = d.objoid
           WHERE coalesce(p.pronamespace, c.relnamespace) = 'scirag'::regnamespace"""
    ).fetchone()[0]
    assert comments > 100
    assert (
        admin_conn.execute("SELECT count(*) FROM pg_description WHERE description LIKE '%VulcanLab%'").fetchone()[0]
        == 0
    )
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        assert "VulcanLab" not in text and "DESIGN" + ".md" not in text, page  # assembled: not a citation


def test_parallel_ingest_reports_progress_and_skips_unchanged_files(
    run_cli, demo_corpus, admin_conn, tmp_path, restore_corpus
):
    import time

    u = uuid.uuid4().hex[:8]
    folder = tmp_path / f"lib-{u}"
    folder.mkdir()
    for n in range(3):
        (folder / f"note{n}.md").write_text(
            f"# Note {n} {u}\n\nBales {n} {u} held {10 + n} % moisture.\n", encoding="utf-8"
        )
    proc = run_cli("ingest", str(folder), "--license", "public", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "3 added, 0 duplicate, 0 failed" in proc.stderr
    assert re.search(r"\[1/3\] note\d: added \(.*\)  \[[\d.]+ docs/s, ETA \d+:\d\d\]", proc.stderr), proc.stderr
    # the same folder again: nothing is parsed, every file is skipped by its signature
    proc = run_cli("ingest", str(folder), "--license", "public")
    assert proc.returncode == 0, proc.stderr
    assert "0 added, 0 duplicate, 0 failed; 3 skipped" in proc.stderr
    # a touched file (new mtime, same bytes) is read again and found to be the same content
    later = time.time() + 5
    os.utime(folder / "note1.md", (later, later))
    proc = run_cli("ingest", str(folder), "--license", "public")
    assert "0 added, 1 duplicate, 0 failed; 2 skipped" in proc.stderr, proc.stderr
    # --reparse-all reads every file again
    proc = run_cli("ingest", str(folder), "--license", "public", "--reparse-all")
    assert "0 added, 3 duplicate, 0 failed" in proc.stderr and "skipped" not in proc.stderr.split("ingest run")[-1]
    # a stated correction is never skipped: the manifest's title differs from the stored one
    manifest = folder.parent / f"m-{u}.jsonl"
    manifest.write_text(
        json.dumps({"id": "note0", "path": f"lib-{u}/note0.md", "title": "Corrected", "license": "public"}) + "\n",
        encoding="utf-8",
    )
    proc = run_cli("ingest", str(manifest))
    assert "note0: updated (metadata corrected: title" in proc.stderr, proc.stderr


def sql_blocks(page) -> list[str]:
    import re

    return re.findall(r"```sql\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def statements(block: str) -> list[str]:
    code = "\n".join(line.split("--", 1)[0].rstrip() for line in block.splitlines())
    return [s.strip() for s in code.split(";") if s.strip()]


@pytest.mark.parametrize(
    "page, index",
    [("README.md", 0), ("docs/retrieval.md", 0)],
)
def test_psql_examples_run_as_written(dsn, demo_corpus, page, index):
    """The front page's psql block and the first of docs/retrieval.md run exactly as
    written against the demo corpus, each SELECT returning rows."""
    import psycopg

    block = sql_blocks(ROOT / page)[index]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for stmt in statements(block):
            cur = conn.execute(stmt)
            if stmt.upper().startswith("SELECT"):
                rows = cur.fetchall()
                assert rows and rows[0][0] is not None, (page, stmt)
