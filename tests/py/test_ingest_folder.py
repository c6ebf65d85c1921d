"""`scirag ingest PATH...`: folders and files as manifest entries (scirag.ingest.discover), the
inferred manifest, manifest-versus-flag precedence, metadata read from the files, and
saying what the user cannot see (unknown-license warning, no-evidence hints)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest

from scirag.ingest.discover import DiscoverError, discover, write_manifest
from scirag.ingest.manifest import Entry, ManifestError

from conftest import PYTEST_DB, ROOT, write_manifest as write_jsonl
from test_pdfmeta import BODY, make_pdf, paper_page

SCIRAG = ROOT / ".venv" / "bin" / "scirag"


def straw_pdf(path: Path, title: list[str], authors: list, fact: str, stamp: str | None = None) -> Path:
    """A one-page paper whose body states a fact no other test document states."""
    body = [(fact, 10, 72, 380)] + BODY
    items = paper_page(title, authors, stamp=stamp)
    return make_pdf(path, [[i for i in items if i not in BODY] + body])


def mixed_folder(root: Path) -> Path:
    (root / "papers" / "deep").mkdir(parents=True)
    (root / ".hidden").mkdir()
    straw_pdf(
        root / "papers" / "bales.pdf",
        ["Baling Straw at Night"],
        ["Ada Lovelace, Grace Hopper"],
        "Night baling kept straw moisture at 14 percent.",
        stamp="arXiv:2201.00001v1 [cs.LG] 3 Jan 2022",
    )
    (root / "papers" / "deep" / "notes.md").write_text(
        "# Depot notes\n\nThe depot stores 300 bales.\n", encoding="utf-8"
    )
    (root / "page.html").write_text(
        "<html><head><title>Straw prices</title></head><body><p>Prices rose.</p></body></html>", encoding="utf-8"
    )
    (root / "readme.txt").write_text("Plain text notes about straw.\n", encoding="utf-8")
    (root / "photo.png").write_bytes(b"\x89PNG not a document")
    (root / ".hidden" / "secret.md").write_text("# Hidden\n\nnot for the corpus\n", encoding="utf-8")
    (root / ".dotfile.md").write_text("# Dot\n\nnot for the corpus\n", encoding="utf-8")
    return root


def by_id(found) -> dict:
    return {e.id: e for e in found.entries}


# ---------------------------------------------------------------------------
# Discovery (no database)
# ---------------------------------------------------------------------------


def test_folder_is_walked_recursively_with_supported_types_only(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    found = discover([root])
    entries = by_id(found)
    assert sorted(entries) == ["page", "papers/bales", "papers/deep/notes", "readme"]
    assert [n for n, _ in found.items] == [1, 2, 3, 4]  # lines of the inferred manifest
    assert all(e.license == "unknown" and e.source == "unspecified" for e in entries.values())
    assert all(e.base == root for e in entries.values())  # source_path shown relative to the folder


def test_glob_selects_files_in_folders_and_is_reported(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    found = discover([root], globs=["*.pdf"])
    assert sorted(by_id(found)) == ["papers/bales"]
    assert [why for _, why in found.skipped].count("does not match --glob") == 3
    found = discover([root], globs=["papers/*", "*.txt"])  # relative paths too, several patterns
    assert sorted(by_id(found)) == ["papers/bales", "papers/deep/notes", "readme"]
    with pytest.raises(DiscoverError, match=r"nothing to ingest.*--glob \*\.docx"):
        discover([root], globs=["*.docx"])


def test_command_line_errors_name_the_path_or_option(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    with pytest.raises(DiscoverError, match=r"photo\.png: not a manifest"):
        discover([root / "photo.png"])
    with pytest.raises(DiscoverError, match=r"nowhere: does not exist"):
        discover([tmp_path / "nowhere"])
    with pytest.raises(DiscoverError, match=r"--license 'free' is not one of"):
        discover([root], license="free")


def test_same_stem_keeps_suffix_in_id(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\ntext a\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("text a as plain text\n", encoding="utf-8")
    ids = sorted(by_id(discover([tmp_path])))
    assert ids == ["a", "a.txt"]


def test_link_out_of_the_folder_is_refused_unless_allowed(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nserver file\n", encoding="utf-8")
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "inside.md").write_text("# Inside\n\nfine\n", encoding="utf-8")
    os.symlink(outside, root / "link.md")
    items = [item for _, item in discover([root]).items]
    errors = [i for i in items if isinstance(i, ManifestError)]
    assert [e.id for e in items if isinstance(e, Entry)] == ["inside"]
    assert len(errors) == 1 and "outside" in str(errors[0])
    assert sorted(by_id(discover([root], allow_outside=True))) == ["inside", "link"]


def test_manifest_states_rights_and_flags_apply_to_the_other_files(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    manifest = write_jsonl(
        root,
        [
            {
                "id": "bales-paper",
                "path": "papers/bales.pdf",
                "license": "public",
                "source": "lab",
                "title": "Stated Title",
                "arxiv_id": "2112.99999",
            },
            {"id": "notes", "path": "papers/deep/notes.md"},  # no license: unknown, whatever the flags say
        ],
        name="rights.jsonl",
    )
    found = discover([manifest, root], license="open_commercial", source="upload")
    entries = by_id(found)
    assert sorted(entries) == ["bales-paper", "notes", "page", "readme"]  # no file twice
    assert (entries["bales-paper"].license, entries["bales-paper"].source) == ("public", "lab")
    assert (entries["notes"].license, entries["notes"].source) == ("unknown", "unspecified")
    assert {(entries[i].license, entries[i].source) for i in ("page", "readme")} == {("open_commercial", "upload")}
    # the manifest's stated title stays; what it left out is read from the PDF and marked
    bales = entries["bales-paper"]
    assert bales.title == "Stated Title" and "title" not in bales.inferred
    assert bales.authors == ["Ada Lovelace", "Grace Hopper"] and "authors" in bales.inferred
    assert (bales.arxiv_id, bales.year) == ("2112.99999", 2022)  # stated id kept, year read from the stamp
    assert bales.inferred == ["authors", "year", "doi"] and bales.doi == "10.48550/arXiv.2112.99999"


def test_metadata_inferred_for_discovered_files(tmp_path):
    entries = by_id(discover([mixed_folder(tmp_path / "corpus")]))
    pdf = entries["papers/bales"]
    assert pdf.title == "Baling Straw at Night"
    assert pdf.inferred == ["title", "authors", "year", "doi", "arxiv_id"]
    assert pdf.doi == "10.48550/arXiv.2201.00001"
    assert (entries["page"].title, entries["page"].inferred) == ("Straw prices", ["title"])
    assert (entries["papers/deep/notes"].title, entries["papers/deep/notes"].inferred) == ("Depot notes", ["title"])
    assert (entries["readme"].title, entries["readme"].inferred) == ("readme", ["title"])  # the file name


def test_manifest_out_round_trip(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    first = discover([root], license="open_commercial", source="upload")
    out = root / "inferred.jsonl"
    assert write_manifest(first, out) == []  # every path relative to the manifest
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]  # pure JSONL (issue 25)
    pdf_line = next(x for x in lines if x["id"] == "papers/bales")
    assert pdf_line["license"] == "open_commercial" and pdf_line["path"] == "papers/bales.pdf"
    assert "title" not in pdf_line and pdf_line["inferred"]["title"] == "Baling Straw at Night"
    again = discover([out])  # the manifest alone repeats the run
    key = lambda e: (
        e.id,
        e.path.resolve(),
        e.license,
        e.source,
        e.title,
        e.authors,
        e.year,
        e.doi,
        e.arxiv_id,
        e.inferred,
    )
    assert sorted(map(key, again.entries)) == sorted(map(key, first.entries))
    # a corrected value copied to a top-level key is stated from then on
    lines = out.read_text(encoding="utf-8").splitlines()
    fixed = [json.dumps({**json.loads(x), "title": "Corrected"}) if '"papers/bales"' in x else x for x in lines]
    out.write_text("\n".join(fixed) + "\n", encoding="utf-8")
    bales = by_id(discover([out]))["papers/bales"]
    assert bales.title == "Corrected" and "title" not in bales.inferred and "authors" in bales.inferred


def test_manifest_out_outside_its_folder_uses_absolute_paths(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    out = tmp_path / "elsewhere" / "m.jsonl"
    outside = write_manifest(discover([root]), out)
    assert len(outside) == 4 and all(Path(p).is_absolute() for p in outside)


# ---------------------------------------------------------------------------
# The command, end to end, against a database of its own (a new user's first run)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh_dsn(base_dsn):
    """An empty, deployed database: the first-run path starts from nothing."""
    from scirag import db

    name = f"{PYTEST_DB}_folder"
    target = db.with_dbname(base_dsn, name)
    db.drop_db(target)
    db.init_db(target)
    yield target
    db.drop_db(target)


@pytest.fixture(scope="module")
def reader_login(fresh_dsn):
    """A login that is only a reader (not the loader, not a superuser)."""
    from scirag import db

    name = f"iux_reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(fresh_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{name}" LOGIN IN ROLE scirag_reader')
    yield db.make_conninfo(fresh_dsn, user=name)
    with psycopg.connect(fresh_dsn, autocommit=True) as admin:
        admin.execute(f'DROP ROLE "{name}"')


def cli(dsn, *args, env_extra=None, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update({"SCIRAG_DSN": dsn, "COLUMNS": "400", **(env_extra or {})})
    return subprocess.run(
        [str(SCIRAG), *[str(a) for a in args]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


QUESTION = "What was the straw moisture with night baling?"


def test_first_run_unknown_warning_hints_then_license_makes_it_visible(tmp_path, fresh_dsn, reader_login):
    from scirag.hints import no_evidence_hint

    folder = tmp_path / "my-papers"
    folder.mkdir()
    straw_pdf(
        folder / "night_baling.pdf",
        ["Baling Straw at Night"],
        ["Ada Lovelace, Grace Hopper"],
        "With night baling the straw moisture was 14 percent, the depot reported.",
        stamp="arXiv:2201.00001v1 [cs.LG] 3 Jan 2022",
    )
    (folder / "depot.md").write_text("# Depot notes\n\nThe depot stores 300 bales of straw.\n", encoding="utf-8")

    reader_hint_empty = no_evidence_hint(reader_login, None, "retrieve", QUESTION)

    # 1. no license stated: stored, and the run says so once, with both ways out
    proc = cli(fresh_dsn, "ingest", folder)
    assert proc.returncode == 0, proc.stderr
    assert len(re.findall(r"^warning:", proc.stderr, flags=re.M)) == 1
    assert "warning: 2 document(s) of this run are stored with license 'unknown'" in proc.stderr
    assert "--license" in proc.stderr and "SET scirag.licenses = 'public,open_commercial,unknown'" in proc.stderr

    # 2. the reader finds nothing; the CLI's own (superuser) login is told what and how
    proc = cli(fresh_dsn, "retrieve", QUESTION)
    assert proc.returncode == 0, proc.stderr
    assert "(no evidence in your scope)" in proc.stdout
    assert "hint (administrator): 2 stored document(s) lie outside this scope: unknown (2)." in proc.stdout
    command = re.search(r"To search them: (SCIRAG_ROLE=\S+) scirag retrieve --licenses (\S+) ", proc.stdout)
    assert command and command.group(2) == "open_commercial,public,unknown"
    role = command.group(1).split("=", 1)[1]
    found = cli(
        fresh_dsn, "retrieve", QUESTION, "--licenses", command.group(2), "-k", "3", env_extra={"SCIRAG_ROLE": role}
    )
    assert "Baling Straw at Night" in found.stdout and "(no evidence" not in found.stdout

    # 3. a reader login gets no count, and the same words whether or not hidden documents exist
    reader_hint = no_evidence_hint(reader_login, None, "retrieve", QUESTION)
    assert reader_hint == reader_hint_empty
    assert "administrator):" not in reader_hint and not re.search(r"\d", reader_hint)
    assert "--licenses open_commercial,open_noncommercial,public" in reader_hint
    assert "beyond your ceiling (restricted, unknown) need a role whose ceiling includes them" in reader_hint

    # 4. re-running with a license states the rights of the stored documents: visible now
    proc = cli(fresh_dsn, "ingest", folder, "--license", "open_commercial")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("license unknown -> open_commercial") == 2 and "warning:" not in proc.stderr
    proc = cli(fresh_dsn, "ask", QUESTION)
    assert proc.returncode == 0, proc.stderr
    cited = re.findall(r"^\*\[\d+\] (.+)$", proc.stdout, flags=re.M)
    assert any(c.startswith("Ada Lovelace & Grace Hopper (2022), Baling Straw at Night") for c in cited), proc.stdout
    with psycopg.connect(fresh_dsn) as conn:
        row = conn.execute(
            "SELECT title, authors, arxiv_id, metadata_inferred, license, source_path "
            "FROM scirag.documents WHERE external_id = 'night_baling'"
        ).fetchone()
    assert row == (
        "Baling Straw at Night",
        ["Ada Lovelace", "Grace Hopper"],
        "2201.00001",
        ["title", "authors", "year", "doi", "arxiv_id"],
        "open_commercial",
        "night_baling.pdf",
    )


def test_stated_license_is_never_overwritten_and_hint_on_empty_ask(tmp_path, fresh_dsn, reader_login):
    doc = tmp_path / "kept.md"
    doc.write_text(f"# Kept rights\n\nToken {uuid.uuid4().hex} marks this restricted note.\n", encoding="utf-8")
    assert cli(fresh_dsn, "ingest", doc, "--license", "restricted").returncode == 0
    proc = cli(fresh_dsn, "ingest", doc, "--license", "public")
    assert "stored license restricted kept; this run says public" in proc.stderr
    with psycopg.connect(fresh_dsn) as conn:
        assert conn.execute("SELECT license::text FROM scirag.documents WHERE external_id = 'kept'").fetchone() == (
            "restricted",
        )
    # the warning counts this run's unknown documents, not the database's
    first, second = tmp_path / "u1.md", tmp_path / "u2.md"
    first.write_text(f"# One\n\nToken {uuid.uuid4().hex} one.\n", encoding="utf-8")
    second.write_text(f"# Two\n\nToken {uuid.uuid4().hex} two.\n", encoding="utf-8")
    assert "warning: 1 document(s)" in cli(fresh_dsn, "ingest", first).stderr
    assert "warning: 1 document(s)" in cli(fresh_dsn, "ingest", second).stderr
    again = cli(fresh_dsn, "ingest", first, second).stderr  # found again, still invisible: still said
    # unchanged files are skipped without parsing (issue 25), and still counted as this run's
    assert "2 skipped" in again and "warning: 2 document(s)" in again
    # an empty scope: the answer has no sources and the hint follows it
    proc = cli(reader_login, "ask", "What marks this restricted note?", "--licenses", "")
    assert proc.returncode == 0, proc.stderr
    assert "Sources: none in your scope" in proc.stdout and "hint: nothing was found in your scope" in proc.stdout
    assert "hint (administrator)" not in proc.stdout and not re.search(r"\d+ stored document", proc.stdout)


def readme_first_run_commands() -> list[list[str]]:
    """The command lines of the README's "Ask your own papers" block."""
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Ask your own papers", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("  #", 1)[0]) for line in block.strip().splitlines()]


def test_readme_first_run_path_as_written(tmp_path, fresh_dsn):
    commands = readme_first_run_commands()
    assert [c[:2] for c in commands] == [
        [".venv/bin/scirag", "ingest"],
        [".venv/bin/scirag", "ask"],
        [".venv/bin/scirag", "retrieve"],
    ]
    folder = tmp_path / "papers"
    (folder / "2023").mkdir(parents=True)
    straw_pdf(
        folder / "2023" / "chaff.pdf",
        ["Chaff Separation in Windy Barns"],
        ["Mary Somerville and Ada Byron"],
        "In windy barns chaff separation removed 87 percent of the husks before baling.",
        stamp="arXiv:2305.00077v1 [cs.LG] 2 May 2023",
    )
    question = "How much of the husks did chaff separation in windy barns remove?"
    outputs = []
    for cmd in commands:
        args = [str(folder) if a == "~/papers" else a for a in cmd[1:]]
        if cmd[1] in ("ask", "retrieve"):
            args[1] = question  # the README's question is about its own paper
        proc = cli(fresh_dsn, *args)
        assert proc.returncode == 0, (cmd, proc.stderr)
        outputs.append(proc)
    assert "1 added" in outputs[0].stderr and "warning:" not in outputs[0].stderr
    with psycopg.connect(fresh_dsn) as conn:  # the run compacted its fresh BM25 postings into blocks
        assert conn.execute("SELECT count(*) FROM scirag.kw_postings").fetchone() == (0,)
    cite = "Mary Somerville & Ada Byron (2023), Chaff Separation in Windy Barns"
    assert re.search(r"^\*\[\d+\] " + re.escape(cite), outputs[1].stdout, flags=re.M), outputs[1].stdout
    assert f"cite: {cite}, p. 1, doi:10.48550/arXiv.2305.00077" in outputs[2].stdout


def test_dry_run_writes_manifest_and_stores_nothing(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    out = tmp_path / "m.jsonl"
    # no database is reachable at this DSN: a dry run never connects
    proc = cli(
        "host=/nonexistent port=1 dbname=none",
        "ingest",
        root,
        "--glob",
        "*.pdf",
        "--license",
        "public",
        "--manifest-out",
        out,
        "--dry-run",
    )
    assert proc.returncode == 0, proc.stderr
    assert "skipped 3 file(s) that do not match --glob" in proc.stderr
    # the folder's photo.png is named among the types scirag does not read (issue 25)
    assert "skipped 1 file of unsupported type: .png (scirag reads .htm, .html" in proc.stderr
    assert re.findall(r"^\d+: (\S+):", proc.stdout, flags=re.M) == ["papers/bales"]
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["id"], x["license"]) for x in lines] == [("papers/bales", "public")]
    bad = cli("host=/nonexistent port=1 dbname=none", "ingest", root, "--license", "free", "--dry-run")
    assert bad.returncode == 2 and "--license 'free' is not one of" in bad.stderr


def test_file_name_that_is_not_utf8_is_a_failed_line_not_a_crash(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nfine\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(root), b"bad-\xff.md"), "wb") as fh:
        fh.write(b"# Bad name\n\ntext\n")
    found = discover([root])
    errors = [i for _, i in found.items if isinstance(i, ManifestError)]
    assert [e.id for e in found.entries] == ["good"]
    assert len(errors) == 1 and "not valid Unicode" in str(errors[0])
    out = tmp_path / "m.jsonl"
    write_manifest(found, out)  # still writable: the bad name is left out, the file is pure JSONL
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["good"]
