"""scirag_helpers.text: the one sentence splitter, the units of a chunk body, and the
chunk prefix, and that every caller (chunker, answer checks, graph extractor,
scirag.text_units in SQL) uses them; chunks.body stored by the loader."""

from __future__ import annotations

import psycopg
import pytest

from scirag.ingest.chunk import chunk_document
from scirag.graph.text import split_units
from scirag.ingest.parse import parse_text
from scirag_helpers import checks
from scirag_helpers import text as T

# Abbreviations, initials, decimals, closing quotes and a lower-case continuation:
# the places where naive splitters disagree.
TRICKY = (
    'Smith et al. reported 1.5 t/ha for barley (Fig. 2). J. Doe disagreed. "Corn yields more." '
    "Wheat was sown e.g. in May. It rose to 3.2. Then it fell? yes, it fell. Yields rose (Jones et al. 2019). "
    "Done!"
)
EXPECTED = [
    "Smith et al. reported 1.5 t/ha for barley (Fig. 2).",
    "J. Doe disagreed.",
    '"Corn yields more."',
    "Wheat was sown e.g. in May.",
    "It rose to 3.2.",
    "Then it fell? yes, it fell.",
    "Yields rose (Jones et al. 2019).",
    "Done!",
]


def test_sentences_follow_the_rules():
    assert T.sentences(TRICKY) == EXPECTED


def test_sentence_spans_are_offsets_into_the_text():
    spans = T.sentence_spans(TRICKY)
    assert [TRICKY[a:b] for a, b in spans] == EXPECTED
    assert all(TRICKY[b : b + 1] in ("", " ") for _, b in spans)  # a span ends at the mark, not after


def test_every_python_caller_splits_the_same_way():
    """The chunker, the answer checks and the graph extractor give the same sentences."""
    assert checks.split_sentences(TRICKY) == EXPECTED
    graph = [u.text for u in split_units(TRICKY) if u.kind == "sentence"]
    assert graph == EXPECTED
    # the chunker cuts a paragraph over its target on the same boundaries
    doc = parse_text(" ".join([TRICKY] * 3), "text")
    bodies = [c.body for c in chunk_document(doc, "", target_tokens=20, overlap_tokens=0) if c.kind == "prose"]
    assert len(bodies) > 3
    assert all(s in EXPECTED for b in bodies for s in T.sentences(b)), bodies  # no cut inside a sentence


def test_units_of_a_body():
    body = "2 Methods\n\nBarley yields 3 tonnes. Wheat 4 tonnes.\n\nCrop | Yield\nBarley | 3\n\n# Notes"
    units = T.units(body, headings=["2 Methods"])
    got = [(body[u.start : u.end], u.para_no, u.is_heading, u.words) for u in units]
    assert got == [
        ("2 Methods", 1, True, 2),
        ("Barley yields 3 tonnes.", 2, False, 4),
        ("Wheat 4 tonnes.", 2, False, 3),
        ("Crop | Yield", 3, False, 2),
        ("Barley | 3", 3, False, 2),
        ("# Notes", 4, True, 1),
    ]
    assert [u.unit_no for u in units] == list(range(1, 7))


def test_units_refuse_a_huge_body():
    with pytest.raises(ValueError, match="at most 2000000"):
        T.units("x" * (T.MAX_UNITS_CHARS + 1))


def test_word_count_matches_the_sql_rule():
    assert T.word_count("Straw | 1.2 t/ha — yields") == 4


@pytest.mark.parametrize(
    "title,path,head",
    [
        ("Straw Report", "Straw Report > 2 Methods", "Straw Report\n2 Methods"),
        ("Straw Report", "Straw Report", "Straw Report"),
        ("Straw Report", "", "Straw Report"),
        ("", "1 Intro", "1 Intro"),
        ("", "", ""),
    ],
)
def test_chunk_head(title, path, head):
    assert T.chunk_head(title, path) == head
    content = T.chunk_content(title, path, "Body text.")
    assert content == (f"{head}\n\nBody text." if head else "Body text.")


# Chunks where the old guess (cut at the first blank line when what precedes it is
# short) takes the wrong prefix: no head at all, a head over 600 characters, a body
# whose first paragraph is short.
HEAD_CASES = [
    ("", "", "Barley straw was baled.\n\nIt was then stored.", ""),
    ("", "", "Short line.\n\nSecond paragraph here.", ""),
    ("T" * 400, "1 Intro > " + "S" * 300, "Barley straw was baled.\n\nIt was then stored.", None),
    ("Straw Report", "2 Methods", "A\nB\nC\n\nD.", "Straw Report\n2 Methods"),
]


@pytest.mark.parametrize("title,path,body,head", HEAD_CASES)
def test_chunk_head_of_inverts_chunk_content(title, path, body, head):
    """The head is what chunk_content put before the stored body, exactly."""
    content = T.chunk_content(title, path, body)
    want = T.chunk_head(title, path) if head is None else head
    assert T.chunk_head_of(content, body) == want
    assert content.startswith(want) and content.endswith(body)


def test_chunk_head_of_refuses_a_body_that_is_not_the_content_s_end():
    with pytest.raises(ValueError, match="must end with its body"):
        T.chunk_head_of("Title\n\nBody text.", "Other text.")


@pytest.mark.parametrize("title,path,body,head", HEAD_CASES)
def test_graph_units_take_the_head_from_the_stored_body(title, path, body, head):
    """The graph extractor's header units are the head's lines, its other units lie in the body."""
    content = T.chunk_content(title, path, body)
    want = T.chunk_head(title, path) if head is None else head
    units = split_units(content, body)
    assert [u.text for u in units if u.kind == "header"] == [x for x in want.split("\n") if x]
    body_start = len(content) - len(body)
    assert all(u.start >= body_start for u in units if u.kind != "header")
    assert all(content[u.start : u.start + len(u.text)] == u.text for u in units)


def test_chunker_builds_content_from_head_and_body():
    doc = parse_text(
        "# Straw Report\n\n## 2 Methods\n\nBarley straw was baled in August after the harvest.\n", "markdown"
    )
    chunks = chunk_document(doc, "Straw Report")
    assert chunks and all(c.content == T.chunk_content("Straw Report", c.section_path, c.body) for c in chunks)


# ---------------------------------------------------------------------------
# In the database
# ---------------------------------------------------------------------------


def test_sql_text_units_is_the_python_splitter(admin_conn, demo_corpus):
    """scirag.text_units (PL/Python) gives exactly text.units, 1-based, on every
    stored body of the demo corpus (real text: tables, headings, prose)."""
    rows = admin_conn.execute("SELECT id, body FROM scirag.chunks ORDER BY id").fetchall()
    assert len(rows) > 20
    for cid, body in rows:
        sql = admin_conn.execute(
            "SELECT unit_no, para_no, s, e, words, is_heading FROM scirag.text_units(%s) ORDER BY unit_no", (body,)
        ).fetchall()
        py = [(u.unit_no, u.para_no, u.start + 1, u.end + 1, u.words, u.is_heading) for u in T.units(body)]
        assert sql == py, cid


def test_sql_text_units_refuses_a_huge_body_before_python(admin_conn):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="at most 2000000"):
        admin_conn.execute("SELECT count(*) FROM scirag.text_units(repeat('x', 2000001))")


def test_loader_stores_the_body(admin_conn, demo_corpus):
    """content = head + blank line + body for every chunk; the backfill rule agrees."""
    rows = admin_conn.execute(
        """SELECT c.content, c.body, d.title, c.section_path,
                  scirag.chunk_body(c.content, d.title, c.section_path)
           FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id"""
    ).fetchall()
    assert rows
    for content, body, title, path, rule in rows:
        assert content == T.chunk_content(title, path, body)
        assert body == rule


def test_a_writer_without_body_gets_the_rule(admin_conn, demo_corpus):
    """A chunk inserted without body (a loader older than the column) is filled by the
    backfill rule; one inserted with a body keeps it."""
    with admin_conn.transaction(force_rollback=True):
        doc, title = admin_conn.execute("SELECT id, title FROM scirag.documents ORDER BY id LIMIT 1").fetchone()
        base = admin_conn.execute(
            "SELECT max(ordinal) + 1 FROM scirag.chunks WHERE document_id = %s", (doc,)
        ).fetchone()[0]
        ins = """INSERT INTO scirag.chunks (document_id, ordinal, kind, level, section_path, content, token_count,
                                            license, source {extra})
                 SELECT %s, %s, 'section', 1, 'Extra', %s, 3, license, source {val}
                 FROM scirag.documents WHERE id = %s RETURNING body"""
        got = admin_conn.execute(
            ins.format(extra="", val=""), (doc, base, f"{title}\nExtra\n\nThe text.", doc)
        ).fetchone()[0]
        assert got == "The text."
        kept = admin_conn.execute(
            ins.format(extra=", body", val=", 'Stored.'"), (doc, base + 1, f"{title}\nExtra\n\nThe text.", doc)
        ).fetchone()[0]
        assert kept == "Stored."
