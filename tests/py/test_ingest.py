"""Ingestion into PostgreSQL: parse -> chunk -> license -> deduplicate -> embed -> store
(one transaction per document), against the scirag_pytest database."""

from __future__ import annotations

import json
import shutil
import uuid

import numpy as np
import pytest

from scirag.ingest.pipeline import Ingester, ingest_manifest
from scirag.ingest.manifest import read_manifest
from scirag_helpers.embedder import DIM, VERSION

from conftest import DEMO_MANIFEST, ROOT

DEMO = ROOT / "domain" / "demo"
DEMO_IDS = {e.id for _, e in read_manifest(DEMO_MANIFEST)}


def unique_doc(tag: str) -> str:
    """A small Markdown document whose content no other test stores."""
    u = uuid.uuid4().hex
    return (
        f"# Field note {tag} {u}\n\n"
        f"## Observations\n\n"
        f"Straw bales in plot {u[:8]} were weighed after baling; the mean bale mass was "
        f"412 kg at 14 % moisture, and the crew recorded token {tag}{u}.\n\n"
        f"## Conclusions\n\n"
        f"The plot {u[:8]} supplied 3.1 dry tonnes of straw per hectare to the depot.\n"
    )


def reports(conn, run_id):
    return conn.execute(
        "SELECT line_no, external_id, path, status, reason, document_id, chunks FROM scirag.ingest_reports "
        "WHERE run_id = %s ORDER BY line_no",
        (run_id,),
    ).fetchall()


def doc_count(conn):
    return conn.execute("SELECT count(*) FROM scirag.documents").fetchone()[0]


def chunk_count(conn):
    return conn.execute("SELECT count(*) FROM scirag.chunks").fetchone()[0]


# ---------------------------------------------------------------------------
# The demo corpus
# ---------------------------------------------------------------------------


def test_demo_manifest_all_added(demo_corpus, admin_conn):
    assert {k: demo_corpus[k] for k in ("added", "duplicate", "failed")} == {"added": 10, "duplicate": 0, "failed": 0}
    stored = {r[0] for r in admin_conn.execute("SELECT external_id FROM scirag.documents")}
    assert DEMO_IDS <= stored
    run = admin_conn.execute(
        "SELECT added, duplicate, failed, finished_at IS NOT NULL, embedding_version FROM scirag.ingest_runs "
        "WHERE id = %s",
        (demo_corpus["run_id"],),
    ).fetchone()
    assert run == (10, 0, 0, True, VERSION)
    rows = reports(admin_conn, demo_corpus["run_id"])
    assert len(rows) == 10
    assert all(r[3] == "added" and r[5] is not None and r[6] > 0 for r in rows)
    # the report's chunk count is what was stored
    for _line_no, ext_id, _, _, _, doc_id, n in rows:
        assert (
            admin_conn.execute("SELECT count(*) FROM scirag.chunks WHERE document_id = %s", (doc_id,)).fetchone()[0]
            == n
        ), ext_id


def test_metadata_from_the_manifest_is_stored(demo_corpus, admin_conn):
    row = admin_conn.execute(
        "SELECT title, authors, year, doi, license, source, parser, source_path FROM scirag.documents "
        "WHERE external_id = 'county-straw-2022'"
    ).fetchone()
    assert row[0] == "Crop Residue Availability in Four Calder Basin Counties, 2022 Assessment"
    assert row[1] == ["Marguerite L. Ostrander", "Tomasz Keel", "Priya Vadlamudi"]
    assert row[2:6] == (2022, "10.5555/scirag.demo.001", "public", "county-extension")
    assert row[6] == "markdown"
    assert row[7].endswith("county-straw-assessment.md")
    inline = admin_conn.execute(
        "SELECT source_path FROM scirag.documents WHERE external_id = 'baling-moisture-note'"
    ).fetchone()
    assert inline == (None,)


def test_leaf_chunks_are_embedded_and_sections_are_not(demo_corpus, admin_conn):
    rows = admin_conn.execute(
        "SELECT kind, embedding IS NOT NULL, embedding_version, vector_dims(embedding), vector_norm(embedding) "
        "FROM scirag.chunks"
    ).fetchall()
    assert {r[0] for r in rows} == {"section", "prose", "table"}
    for kind, has_emb, version, dims, norm in rows:
        if kind == "section":
            assert not has_emb and version is None
        else:
            assert has_emb and version == VERSION
            assert dims == DIM
            assert abs(norm - 1.0) < 1e-4


def test_stored_embedding_is_the_embedding_of_the_chunk_content(demo_corpus, admin_conn, embedder):
    rows = admin_conn.execute(
        "SELECT c.content, c.embedding::text FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id IN ('county-straw-2022', 'pellet-trial') AND c.kind <> 'section' "
        "ORDER BY c.document_id, c.ordinal"
    ).fetchall()
    assert len(rows) > 10
    fresh = embedder.embed([r[0] for r in rows])
    for (content, stored), vec in zip(rows, fresh):
        stored_vec = np.array([float(x) for x in stored.strip("[]").split(",")])
        assert float(stored_vec @ vec) >= 0.9999, content[:60]


def test_section_hierarchy_parent_links(demo_corpus, admin_conn):
    # every parent link points at a section chunk of the same document that precedes it
    bad = admin_conn.execute(
        """SELECT c.document_id, c.ordinal, p.kind, p.ordinal
           FROM scirag.chunks c LEFT JOIN scirag.chunks p
             ON p.document_id = c.document_id AND p.ordinal = c.parent_ordinal
           WHERE c.parent_ordinal IS NOT NULL
             AND (p.id IS NULL OR p.kind <> 'section' OR p.ordinal >= c.ordinal
                  OR NOT starts_with(c.section_path, p.section_path))"""
    ).fetchall()
    assert bad == []
    # documents with headings: every chunk under a heading has a parent
    per_doc = admin_conn.execute(
        """SELECT d.external_id,
                  count(*) FILTER (WHERE c.kind = 'section'),
                  count(*) FILTER (WHERE c.kind <> 'section' AND c.section_path <> ''),
                  count(*) FILTER (WHERE c.kind <> 'section' AND c.section_path <> '' AND c.parent_ordinal IS NOT NULL)
           FROM scirag.documents d JOIN scirag.chunks c ON c.document_id = d.id
           WHERE d.external_id = ANY (%s) GROUP BY 1""",
        (sorted(DEMO_IDS),),
    ).fetchall()
    with_headings = [r for r in per_doc if r[1] > 0]
    assert len(with_headings) >= 9
    for ext_id, _sections, under_heading, with_parent in with_headings:
        assert under_heading > 0, ext_id
        assert with_parent == under_heading, ext_id


def test_markdown_heading_levels_nest(demo_corpus, admin_conn):
    # county-straw-2022: "2.1 Acreage and yield" (###) sits under "2 Methods" (##)
    rows = dict(
        admin_conn.execute(
            """SELECT c.heading, p.heading FROM scirag.chunks c
           JOIN scirag.documents d ON d.id = c.document_id
           JOIN scirag.chunks p ON p.document_id = c.document_id AND p.ordinal = c.parent_ordinal
           WHERE d.external_id = 'county-straw-2022' AND c.kind = 'section'"""
        ).fetchall()
    )
    assert rows["2.1 Acreage and yield"] == "2 Methods"
    assert rows["2 Methods"] == "Crop Residue Availability in Four Calder Basin Counties, 2022 Assessment"


def test_bug_inline_markdown_demo_note_keeps_its_heading(demo_corpus, admin_conn):
    """BUG (reported, data): domain/demo/manifest.jsonl declares no "format" for the inline
    baling-moisture-note, whose text is Markdown ("# Baling Moisture ..."; the demo README says
    "Markdown (inline)"). It is parsed as plain text: no section chunk, a literal '#' in the text."""
    rows = admin_conn.execute(
        "SELECT c.kind, c.content FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id = 'baling-moisture-note'"
    ).fetchall()
    assert any(kind == "section" for kind, _ in rows)
    assert not any("\n# Baling" in content for _, content in rows)


def _source_table_rows(md_file):
    """Data rows of every pipe table in a Markdown file, as tuples of cells, with line numbers."""
    rows = []
    for no, line in enumerate((DEMO / md_file).read_text(encoding="utf-8").split("\n"), 1):
        s = line.strip()
        if s.startswith("|") and not set(s) <= set("|-: "):
            rows.append((no, tuple(c.strip() for c in s.strip("|").split("|"))))
    return rows


def test_tables_are_whole_chunks_with_intact_rows(demo_corpus, admin_conn):
    for ext_id, md_file in (
        ("county-straw-2022", "county-straw-assessment.md"),
        ("rpr-review", "rpr-methods-review.md"),
    ):
        tables = admin_conn.execute(
            "SELECT c.content, c.kind, c.embedding IS NOT NULL FROM scirag.chunks c "
            "JOIN scirag.documents d ON d.id = c.document_id WHERE d.external_id = %s AND c.is_table "
            "ORDER BY c.ordinal",
            (ext_id,),
        ).fetchall()
        assert tables, ext_id
        assert all(kind == "table" and embedded for _, kind, embedded in tables)
        table_rows = set()
        for content, _, _ in tables:
            for line in content.split("\n"):
                if " | " in line:
                    table_rows.add(tuple(c.strip() for c in line.split(" | ")))
        source_rows = _source_table_rows(md_file)
        # every source row is one intact row of some table chunk
        missing = [r for _, r in source_rows if r not in table_rows]
        assert missing == [], (ext_id, missing[:3])
    # a known table is a single chunk: header and every data row together
    county = admin_conn.execute(
        "SELECT c.content FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id = 'county-straw-2022' AND c.is_table AND c.content LIKE '%%Harvested acres%%'"
    ).fetchall()
    assert len(county) == 1
    body = county[0][0]
    assert "Harlan | Barley | 118,400 | 72 bu/ac | 1.34 | 1.1 | 174,522 | 0.40 | 69,809" in body
    assert "Lomax | Corn (grain) | 12,400 | 168 bu/ac | 3.61 | 1.0 | 44,764 | 0.30 | 13,429" in body
    assert body.count("\n") >= 12


def test_table_chunks_of_plain_text_and_html_are_tables(demo_corpus, admin_conn):
    per_doc = dict(
        admin_conn.execute(
            "SELECT d.external_id, count(*) FILTER (WHERE c.is_table) FROM scirag.documents d "
            "JOIN scirag.chunks c ON c.document_id = d.id GROUP BY 1"
        ).fetchall()
    )
    for ext_id in ("residue-composition", "biogas-bmp", "pellet-trial", "logistics-cost"):
        assert per_doc[ext_id] >= 1, ext_id
    ash = admin_conn.execute(
        "SELECT c.content FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id = 'residue-composition' AND c.is_table AND c.content LIKE '%%Lignin%%'"
    ).fetchall()
    assert len(ash) == 1
    assert "Barley straw | 18 | 35.2 | 25.6 | 17.1 | 5.4 | 11.5 | 94.8" in ash[0][0]


def test_bug_table_chunk_line_span_covers_the_whole_source_table(demo_corpus, admin_conn):
    """BUG (reported, chunk.py): a table chunk's line_end stops short of the table's last
    source line, because _block_units numbers the table's text rows line_start, line_start+1,
    ... while the Markdown separator row (and multi-line HTML rows) take source lines too.
    The county table occupies lines 45-57 of county-straw-assessment.md; its chunk (and so
    its citation) says 45-56."""
    last_row = max(
        no for no, r in _source_table_rows("county-straw-assessment.md") if r[0] == "Lomax" and r[1] == "Corn (grain)"
    )
    span = admin_conn.execute(
        "SELECT c.line_start, c.line_end FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id = 'county-straw-2022' AND c.is_table AND c.content LIKE '%%Harvested acres%%'"
    ).fetchone()
    assert span[0] <= 45 and span[1] >= last_row == 57


def test_license_and_source_are_copied_onto_chunks(demo_corpus, admin_conn):
    mismatched = admin_conn.execute(
        "SELECT count(*) FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE c.license IS DISTINCT FROM d.license OR c.source IS DISTINCT FROM d.source "
        "OR c.retracted IS DISTINCT FROM d.retracted"
    ).fetchone()[0]
    assert mismatched == 0
    lic = dict(
        admin_conn.execute(
            "SELECT d.external_id, array_agg(DISTINCT c.license::text) FROM scirag.documents d "
            "JOIN scirag.chunks c ON c.document_id = d.id GROUP BY 1"
        ).fetchall()
    )
    assert lic["soc-retention"] == ["unknown"]  # no license in the manifest
    assert lic["saccharification-memo"] == ["restricted"]
    assert lic["rpr-review"] == ["open_noncommercial"]
    src = dict(
        admin_conn.execute(
            "SELECT d.external_id, array_agg(DISTINCT c.source) FROM scirag.documents d "
            "JOIN scirag.chunks c ON c.document_id = d.id GROUP BY 1"
        ).fetchall()
    )
    assert src["pellet-trial"] == ["lab-notebook"]
    assert src["saccharification-memo"] == ["industry-report"]


def test_keyword_postings_exist_for_leaf_chunks_only(demo_corpus, admin_conn):
    rows = admin_conn.execute(
        """SELECT c.kind, count(p.chunk_id) AS postings, c.license::text, c.source,
                  bool_and(p.license::text = c.license::text AND p.source = c.source
                           AND p.document_id = c.document_id) AS scope_ok,
                  coalesce(sum(p.tf), 0) AS sum_tf, max(p.dl) AS dl, min(p.dl) AS dl_min
           FROM scirag.chunks c LEFT JOIN scirag.kw_all_postings p ON p.chunk_id = c.id
           GROUP BY c.id, c.kind, c.license, c.source"""
    ).fetchall()
    for kind, n, _, _, scope_ok, sum_tf, dl, dl_min in rows:
        if kind == "section":
            assert n == 0
        else:
            assert n > 0, kind
            assert scope_ok
            assert dl == dl_min == sum_tf  # dl is the chunk length in lexeme occurrences
    # postings are the chunk's lexemes
    diff = admin_conn.execute(
        """SELECT count(*) FROM scirag.chunks c, unnest(c.tsv) u
           WHERE c.kind <> 'section'
             AND NOT EXISTS (SELECT 1 FROM scirag.kw_all_postings p WHERE p.chunk_id = c.id AND p.lexeme = u.lexeme)"""
    ).fetchone()[0]
    assert diff == 0


def test_keyword_statistics_match_postings(demo_corpus, admin_conn):
    wrong_df = admin_conn.execute(
        """SELECT count(*) FROM (
             SELECT license, source, lexeme, count(*) AS df FROM scirag.kw_all_postings GROUP BY 1, 2, 3) p
           FULL JOIN scirag.kw_term_stats s USING (license, source, lexeme)
           WHERE p.df IS DISTINCT FROM s.df"""
    ).fetchone()[0]
    assert wrong_df == 0
    wrong_class = admin_conn.execute(
        """SELECT count(*) FROM (
             SELECT license, source, count(*) AS n, sum(dl) AS sdl
             FROM (SELECT DISTINCT chunk_id, license, source, dl FROM scirag.kw_all_postings) x GROUP BY 1, 2) p
           FULL JOIN scirag.kw_class_stats s USING (license, source)
           WHERE p.n IS DISTINCT FROM s.n_chunks OR p.sdl IS DISTINCT FROM s.sum_dl"""
    ).fetchone()[0]
    assert wrong_class == 0


# ---------------------------------------------------------------------------
# Deduplication
# ---------------------------------------------------------------------------


def test_reingesting_the_demo_manifest_is_a_no_op(demo_corpus, loader_conn, embedder, admin_conn):
    docs, chunks = doc_count(admin_conn), chunk_count(admin_conn)
    postings = admin_conn.execute("SELECT count(*) FROM scirag.kw_all_postings").fetchone()[0]
    counts = ingest_manifest(loader_conn, DEMO_MANIFEST, Ingester(loader_conn, embedder=embedder))
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (0, 10, 0)
    assert (doc_count(admin_conn), chunk_count(admin_conn)) == (docs, chunks)
    assert admin_conn.execute("SELECT count(*) FROM scirag.kw_all_postings").fetchone()[0] == postings
    rows = reports(admin_conn, counts["run_id"])
    assert [r[3] for r in rows] == ["duplicate"] * 10
    for _, ext_id, _, _, reason, doc_id, _ in rows:
        # the duplicate names the stored document it repeats: itself
        assert ext_id in reason
        assert admin_conn.execute("SELECT external_id FROM scirag.documents WHERE id = %s", (doc_id,)).fetchone() == (
            ext_id,
        )


def test_same_content_under_new_id_and_file_name_is_a_duplicate(
    demo_corpus, loader_conn, embedder, admin_conn, make_manifest, restore_corpus, tmp_path
):
    shutil.copy(DEMO / "county-straw-assessment.md", tmp_path / "renamed-assessment.md")
    manifest = make_manifest(
        [
            {
                "id": "county-straw-copy",
                "path": "renamed-assessment.md",
                "title": "Another title",
                "license": "restricted",
                "source": "somewhere-else",
            },
            {
                "id": "baling-copy",
                "title": "Copy",
                "license": "public",
                "format": "markdown",
                "text": next(e.text for _, e in read_manifest(DEMO_MANIFEST) if e.id == "baling-moisture-note"),
            },
        ]
    )
    docs, chunks = doc_count(admin_conn), chunk_count(admin_conn)
    counts = ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (0, 2, 0)
    assert (doc_count(admin_conn), chunk_count(admin_conn)) == (docs, chunks)
    rows = reports(admin_conn, counts["run_id"])
    assert "county-straw-2022" in rows[0][4]
    assert "baling-moisture-note" in rows[1][4]
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.documents WHERE external_id IN ('county-straw-copy', 'baling-copy')"
        ).fetchone()[0]
        == 0
    )
    # the stored document kept its own rights
    assert admin_conn.execute(
        "SELECT license::text FROM scirag.documents WHERE external_id = 'county-straw-2022'"
    ).fetchone() == ("public",)


def test_reused_id_with_different_content_fails(demo_corpus, loader_conn, embedder, admin_conn, make_manifest):
    manifest = make_manifest([{"id": "county-straw-2022", "text": unique_doc("reused"), "format": "markdown"}])
    docs = doc_count(admin_conn)
    counts = ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (0, 0, 1)
    assert doc_count(admin_conn) == docs
    (row,) = reports(admin_conn, counts["run_id"])
    assert "county-straw-2022" in row[4] and "already used" in row[4]


# ---------------------------------------------------------------------------
# Failures are per document
# ---------------------------------------------------------------------------


def test_broken_documents_become_report_rows_and_good_ones_are_added(
    demo_corpus, loader_conn, embedder, admin_conn, make_manifest, restore_corpus, tmp_path
):
    corrupt_pdf = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n\x01\x02 garbage\n%%EOF\n"
    manifest = make_manifest(
        [
            {
                "id": "good-inline",
                "text": unique_doc("inline"),
                "format": "markdown",
                "license": "public",
                "source": "test-suite",
            },
            {"id": "corrupt-pdf", "path": "corrupt.pdf", "license": "public"},
            {"id": "missing-file", "path": "no-such-file.md", "license": "public"},
            {"id": "empty-file", "path": "empty.txt", "license": "public"},
            '{"id": "bad-json", "path": "x.md", ',
            {"id": "good-file", "path": "good.md", "license": "open_commercial", "source": "test-suite"},
        ],
        files={"corrupt.pdf": corrupt_pdf, "empty.txt": b"", "good.md": unique_doc("file")},
    )
    docs = doc_count(admin_conn)
    counts = ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (2, 0, 4)
    assert doc_count(admin_conn) == docs + 2

    rows = {r[0]: r for r in reports(admin_conn, counts["run_id"])}
    assert sorted(rows) == [1, 2, 3, 4, 5, 6]
    status = {n: r[3] for n, r in rows.items()}
    assert status == {1: "added", 2: "failed", 3: "failed", 4: "failed", 5: "failed", 6: "added"}
    for n in (2, 3, 4, 5):
        assert rows[n][5] is None and rows[n][4], n  # no document, and a reason
    reason = {n: r[4] for n, r in rows.items()}
    assert "corrupt.pdf" in reason[2] and ("corrupt" in reason[2] or "unreadable" in reason[2])
    assert "no-such-file.md" in reason[3] and "not found" in reason[3]
    assert "no usable text" in reason[4] and rows[4][2].endswith("empty.txt")
    assert "line 5" in reason[5] and "JSON" in reason[5]
    assert rows[1][1] == "good-inline" and rows[6][1] == "good-file"
    assert rows[2][2].endswith("corrupt.pdf")

    stored = dict(
        admin_conn.execute(
            "SELECT external_id, license::text FROM scirag.documents WHERE external_id = ANY (%s)",
            (["good-inline", "good-file", "corrupt-pdf", "missing-file", "empty-file", "bad-json"],),
        ).fetchall()
    )
    assert stored == {"good-inline": "public", "good-file": "open_commercial"}
    run = admin_conn.execute(
        "SELECT added, duplicate, failed FROM scirag.ingest_runs WHERE id = %s", (counts["run_id"],)
    ).fetchone()
    assert run == (2, 0, 4)
    # the good ones are complete: headings became sections with children
    for ext_id in ("good-inline", "good-file"):
        kinds = [
            r[0]
            for r in admin_conn.execute(
                "SELECT c.kind FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
                "WHERE d.external_id = %s",
                (ext_id,),
            )
        ]
        assert "section" in kinds and "prose" in kinds


class PoisonedEmbedder:
    """Wraps the real embedder; the vector of any text containing the marker is corrupted."""

    def __init__(self, inner, marker, corrupt):
        self.inner, self.marker, self.corrupt = inner, marker, corrupt
        self.version = inner.version
        self.expected_dim = inner.expected_dim

    def embed(self, texts):
        vecs = list(self.inner.embed(texts))
        return [self.corrupt(v) if self.marker in t else v for t, v in zip(texts, vecs)]


@pytest.mark.parametrize(
    "corrupt, expect",
    [
        (lambda v: v[:-1], "dimensions"),  # 383-d vector
        (lambda v: np.where(np.arange(len(v)) == 5, np.nan, v), "NaN"),  # a value pgvector refuses
    ],
    ids=["wrong-dimension", "nan"],
)
def test_failed_chunk_insert_leaves_nothing_of_the_document(
    demo_corpus, loader_conn, embedder, admin_conn, make_manifest, restore_corpus, corrupt, expect
):
    marker = "POISONMARK" + uuid.uuid4().hex[:6]
    rare = "zyxoquatl" + uuid.uuid4().hex[:6]
    sections = [
        f"## Part {i}\n\nPart {i} of the trial recorded {rare} yields of {i}.{i} t per hectare "
        f"across the basin's barley fields."
        for i in range(1, 6)
    ]
    bad_doc = (
        "# Atomicity probe\n\n"
        + "\n\n".join(sections)
        + f"\n\n## Last part\n\nThe final paragraph carries {marker} and nothing else of note.\n"
    )
    manifest = make_manifest(
        [
            {"id": "atomic-bad", "text": bad_doc, "format": "markdown", "license": "public", "source": "atomic"},
            {
                "id": "atomic-good",
                "text": unique_doc("after"),
                "format": "markdown",
                "license": "public",
                "source": "atomic",
            },
        ]
    )
    before = {
        "docs": doc_count(admin_conn),
        "chunks": chunk_count(admin_conn),
        "postings": admin_conn.execute("SELECT count(*) FROM scirag.kw_all_postings").fetchone()[0],
        "class": admin_conn.execute("SELECT coalesce(sum(n_chunks), 0) FROM scirag.kw_class_stats").fetchone()[0],
    }
    ingester = Ingester(loader_conn, embedder=PoisonedEmbedder(embedder, marker, corrupt))
    counts = ingest_manifest(loader_conn, manifest, ingester)
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (1, 0, 1)

    rows = reports(admin_conn, counts["run_id"])
    assert [r[3] for r in rows] == ["failed", "added"]
    assert expect in rows[0][4]
    assert rows[0][5] is None
    # nothing of the failed document: no row, no chunk, no posting, no statistics
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.documents WHERE external_id = 'atomic-bad'").fetchone()[0] == 0
    )
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.chunks WHERE content LIKE %s", (f"%{rare}%",)).fetchone()[0]
        == 0
    )
    assert admin_conn.execute("SELECT count(*) FROM scirag.kw_term_stats WHERE lexeme = %s", (rare,)).fetchone()[0] == 0
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.kw_all_postings WHERE lexeme = %s", (rare,)).fetchone()[0] == 0
    )
    # the document after it was stored whole, on the same connection
    good_chunks = admin_conn.execute(
        "SELECT count(*) FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
        "WHERE d.external_id = 'atomic-good'"
    ).fetchone()[0]
    assert good_chunks == rows[1][6] > 0
    good_postings = admin_conn.execute(
        "SELECT count(DISTINCT p.chunk_id) FROM scirag.kw_all_postings p JOIN scirag.documents d ON d.id = p.document_id "
        "WHERE d.external_id = 'atomic-good'"
    ).fetchone()[0]
    assert doc_count(admin_conn) == before["docs"] + 1
    assert chunk_count(admin_conn) == before["chunks"] + good_chunks
    assert (
        admin_conn.execute("SELECT coalesce(sum(n_chunks), 0) FROM scirag.kw_class_stats").fetchone()[0]
        == before["class"] + good_postings
    )


def test_loader_connection_obeys_its_role(loader_conn):
    user = loader_conn.execute("SELECT current_user").fetchone()[0]
    assert user == "scirag_loader"
    assert loader_conn.execute("SELECT scirag.scope_licenses()").fetchone()[0] == [
        "open_commercial",
        "public",
    ]  # default scope, even for the loader


def test_finish_load_compacts_postings_and_analyzes_what_the_load_wrote(demo_corpus, loader_conn, admin_conn):
    """A just-loaded corpus must not wait for autovacuum: the planner needs row counts of
    chunks and the keyword tables (keyword search over unanalysed tables took 1-1.4 s)."""
    from scirag import db

    def analyzed(table):
        return admin_conn.execute(
            "SELECT coalesce(last_analyze, 'epoch') FROM pg_stat_user_tables "
            "WHERE schemaname = 'scirag' AND relname = %s",
            (table,),
        ).fetchone()[0]

    before = {t: analyzed(t) for t in db.LOADED_TABLES}
    db.finish_load(loader_conn)
    for table in db.LOADED_TABLES:
        assert analyzed(table) > before[table], f"{table} was not analysed by finish_load"
    assert admin_conn.execute("SELECT count(*) FROM scirag.kw_postings").fetchone()[0] == 0, (
        "fresh postings were left outside the blocks"
    )
    # the loader keeps acting as the loader afterwards
    assert loader_conn.execute("SELECT current_user").fetchone()[0] == "scirag_loader"
