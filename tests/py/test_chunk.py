"""Tests for scirag.chunk: every rule of the structure-aware chunker."""

import re

import pytest

from scirag.ingest.chunk import Chunk, chunk_document, content_hash, count_tokens, normalize_text
from scirag_helpers.text import sentences as split_sentences
from scirag.ingest.parse import Block, ParsedDocument, parse_text

TITLE = "Straw Report"


def chunks_of(text: str, fmt: str = "text", **kw) -> list[Chunk]:
    return chunk_document(parse_text(text, fmt), TITLE, **kw)


def content_chunks(chunks):
    return [c for c in chunks if c.kind != "section"]


def sentences(prefix: str, n: int) -> str:
    """n distinct sentences of 10 tokens each (9 words and a full stop)."""
    return " ".join(f"{prefix} sentence number {i} reports one more fact here." for i in range(n))


def shared_overlap(prev: str, nxt: str) -> str:
    """The longest tail of prev that nxt starts with."""
    return next((prev[i:] for i in range(len(prev)) if nxt.startswith(prev[i:])), "")


# ---------------------------------------------------------------------------
# Rule 1: normalisation
# ---------------------------------------------------------------------------


def test_normalize_dehyphenates_line_ends_only():
    assert normalize_text("the ligno-\ncellulosic fraction") == "the lignocellulosic fraction"
    # A hyphen inside a line is a real one.
    assert normalize_text("a 1.1 straw-to-grain ratio") == "a 1.1 straw-to-grain ratio"
    # A hyphenated compound broken after one of its own hyphens keeps it.
    assert normalize_text("a straw-to-\ngrain ratio") == "a straw-to-grain ratio"
    # Not followed by a lower-case continuation: leave alone.
    assert normalize_text("COVID-\n19 cases") == "COVID-\n19 cases"


def test_normalize_cleans_page_artifacts():
    raw = "First page text.  \r\n\x0c\n12\nPage 3 of 9\n- 4 -\nSecond\x00 page text.\n\n\n\n\nEnd."
    assert normalize_text(raw) == "First page text.\n\nSecond page text.\n\nEnd."


def test_normalize_keeps_numbers_that_are_not_alone_on_a_line():
    assert normalize_text("Yield was\n12 t/ac in 2021.") == "Yield was\n12 t/ac in 2021."


def test_chunker_normalises_prose_and_splits_paragraphs():
    text = (
        "Straw supply depends on the ligno-\ncellulosic share of the crop.\n\f\n"
        "A second paragraph follows the page break here."
    )
    chunks = chunks_of(text)
    assert len(chunks) == 1
    assert chunks[0].body == (
        "Straw supply depends on the lignocellulosic share of the crop."
        "\n\nA second paragraph follows the page break here."
    )


# ---------------------------------------------------------------------------
# Rule 2: noise floor
# ---------------------------------------------------------------------------


def test_fragments_under_20_chars_are_dropped():
    chunks = chunks_of("x7 %%\n\nThis paragraph is long enough to keep.\n\nFig a b")
    assert [c.body for c in chunks] == ["This paragraph is long enough to keep."]


def test_noise_floor_never_drops_headings_or_table_rows():
    doc = ParsedDocument(
        blocks=[Block("heading", "Yield", level=2), Block("table", "A | 1\nB | 2"), Block("prose", "ok")],
        parser="markdown",
    )
    chunks = chunk_document(doc, TITLE)
    assert [(c.kind, c.body) for c in chunks] == [("section", "Yield\n\nA | 1\nB | 2"), ("table", "A | 1\nB | 2")]


def test_document_of_only_noise_is_empty():
    assert chunks_of("12\n\nab\n\n- 3 -\n") == []


# ---------------------------------------------------------------------------
# Rule 3: headings and the section path
# ---------------------------------------------------------------------------


def _sections(chunks):
    return [(c.heading, c.level) for c in chunks if c.kind == "section"]


def test_numbered_headings_level_by_depth():
    text = "3. Results\n\nSome result text that is long enough.\n\n2.1 Feedstock handling\n\nMore text about feedstock handling."
    assert _sections(chunks_of(text)) == [("3. Results", 1), ("2.1 Feedstock handling", 2)]


def test_all_caps_heading():
    chunks = chunks_of("RESULTS AND DISCUSSION\n\nThe results are discussed in this part.")
    assert _sections(chunks) == [("RESULTS AND DISCUSSION", 1)]


def test_title_case_heading():
    chunks = chunks_of("Sustainable Removal of Crop Residue\n\nPart of the straw must stay on the field.")
    assert _sections(chunks) == [("Sustainable Removal of Crop Residue", 1)]


@pytest.mark.parametrize(
    "line",
    [
        "The straw yield was measured in 2019 across all plots.",  # a sentence
        "1.1 Million tonnes of straw were harvested in the county last year.",  # numbered sentence
        "Harlan County barley straw is the main residue",  # sentence case
        "Table 2 Yields By Crop",  # a caption
        "J. P. Laskowski, Imani Greaves",  # a byline
    ],
)
def test_sentences_and_captions_are_not_headings(line):
    assert _sections(chunks_of(line + "\n\nAnother paragraph of ordinary text here.")) == []


def test_numbered_table_row_is_not_a_heading():
    chunks = chunks_of("2 141,000 1.1 155,100\n\nAnother paragraph of ordinary text here.")
    assert _sections(chunks) == []


def test_heading_on_first_line_of_a_paragraph_is_split_off():
    text = "2.1 Feedstock handling\nBales are stored under cover and ground before they reach the boiler line."
    chunks = chunks_of(text)
    assert _sections(chunks) == [("2.1 Feedstock handling", 2)]
    assert chunks[1].body.startswith("Bales are stored")


def test_wrapped_numbered_list_item_is_not_a_heading():
    text = (
        "1. In general, all open source models, including the\nlarger ones, fall short of the human performance level."
    )
    assert _sections(chunks_of(text)) == []


def test_section_path_is_a_stack():
    text = "\n\n".join(
        [
            "1 Introduction",
            "Introductory text long enough to keep.",
            "2 Methods",
            "Methods overview long enough to keep.",
            "2.1 Feedstock handling",
            "Feedstock text long enough to keep.",
            "2.2 Storage",
            "Storage text long enough to keep.",
            "3 Results",
            "Results text long enough to keep.",
        ]
    )
    paths = [c.section_path for c in chunks_of(text) if c.kind == "prose"]
    assert paths == [
        "1 Introduction",
        "2 Methods",
        "2 Methods > 2.1 Feedstock handling",
        "2 Methods > 2.2 Storage",
        "3 Results",
    ]


def test_parser_headings_keep_their_levels_and_are_not_guessed():
    md = "# Report\n\n### Deep Section\n\nSome Title Case Line\n\nBody text under the deep section."
    chunks = chunks_of(md, "markdown")
    assert _sections(chunks) == [("Report", 1), ("Deep Section", 3)]
    assert [c.level for c in chunks if c.kind == "prose"] == [4]  # markdown prose is not re-guessed


# ---------------------------------------------------------------------------
# Rule 4: tables
# ---------------------------------------------------------------------------

PIPE = "| County | Acres |\n|---|---|\n| Harlan | 118,400 |\n| Osgood | 188,300 |"
TABS = "County\tAcres\tYield\nHarlan\t118,400\t1.34\nOsgood\t188,300\t3.91"
GRID = "County      Acres     Yield\nHarlan      118,400   1.34\nOsgood      188,300   3.91"
NUMERIC = "Crop Acres Yield\nBarley 118,400 1.34\nWheat 64,200 1.37\nOats 9,800 0.87"


@pytest.mark.parametrize(
    "table, first_row",
    [
        (PIPE, "County | Acres"),
        (TABS, "County | Acres | Yield"),
        (GRID, "County | Acres | Yield"),
        (NUMERIC, "Crop | Acres | Yield"),
    ],
)
def test_table_like_paragraphs_become_one_table_chunk(table, first_row):
    text = f"Some prose before the table goes here.\n\n{table}\n\nSome prose after the table goes here."
    chunks = chunks_of(text)
    tables = [c for c in chunks if c.is_table]
    assert len(tables) == 1
    assert tables[0].kind == "table"
    assert tables[0].body.split("\n")[0] == first_row
    assert "Osgood" in tables[0].body or "Oats" in tables[0].body
    # Prose is never merged into the table chunk.
    assert "prose" not in tables[0].body
    assert all("118,400" not in c.body.split("\n\n")[-1] for c in chunks if c.kind == "prose")


def test_double_spaced_sentences_are_not_a_grid():
    text = (
        "Straw is baled in July.  Bales dry in the field.  They are hauled in August.\n"
        "Storage is under cover.  Losses are small.  Grinding happens at the plant."
    )
    chunks = chunks_of(text)
    assert [c.kind for c in chunks] == ["prose"]


def test_table_inside_a_paragraph_is_cut_out_and_keeps_its_caption():
    text = "Table 1. Harvested area by county in the basin.\n" + GRID
    chunks = chunks_of(text)
    assert [c.kind for c in chunks] == ["table"]
    assert chunks[0].body.startswith("Table 1. Harvested area by county in the basin.\n\n")
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 4)


def test_large_table_is_never_split():
    rows = "\n".join(f"| County {i} | {1000 + i} | {i}.5 |" for i in range(200))
    chunks = chunks_of(rows, target_tokens=50, overlap_tokens=10)
    tables = [c for c in chunks if c.is_table]
    assert len(tables) == 1 and tables[0].body.count("\n") == 199
    assert tables[0].token_count > 50


def test_parser_table_blocks_are_kept_intact():
    chunks = chunks_of("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |", "markdown")
    assert [c.body for c in chunks if c.is_table] == ["a | b\n1 | 2\n3 | 4"]


# ---------------------------------------------------------------------------
# Rule 5: merging and sentence splitting
# ---------------------------------------------------------------------------


def test_small_paragraphs_merge_up_to_target():
    paras = [sentences(f"P{i}", 2) for i in range(6)]  # 20 tokens each
    chunks = chunks_of("\n\n".join(paras), target_tokens=60, overlap_tokens=0)
    bodies = [c.body for c in chunks]
    assert bodies == ["\n\n".join(paras[0:3]), "\n\n".join(paras[3:6])]
    assert all(count_tokens(b) <= 60 for b in bodies)


def test_defaults_are_800_token_chunks_with_150_token_overlap():
    paras = [sentences(f"P{i}", 2) for i in range(120)]  # 2,400 tokens of prose
    chunks = chunks_of("\n\n".join(paras))
    assert len(chunks) == 4
    sizes = [count_tokens(c.body) for c in chunks]
    assert all(700 < s <= 800 for s in sizes[:-1])
    for prev, nxt in zip(chunks, chunks[1:]):
        carried = shared_overlap(prev.body, nxt.body)
        assert carried.startswith("P") and 100 <= count_tokens(carried) <= 150


def test_oversized_paragraph_is_split_on_sentence_boundaries():
    para = sentences("Long", 12)  # 120 tokens, one paragraph
    chunks = chunks_of(para, target_tokens=35, overlap_tokens=0)
    assert len(chunks) == 4
    for c in chunks:
        assert c.body.endswith("here.") and count_tokens(c.body) <= 35
    assert " ".join(c.body for c in chunks) == para


def test_sentence_splitter_respects_abbreviations_and_decimals():
    text = (
        "Yields rose, e.g. in Harlan. Smith et al. (2019) found 1.1 t/ac. "
        "See Fig. 2 for the map. J. Smith agreed! Was it 3.5 t? Yes."
    )
    assert split_sentences(text) == [
        "Yields rose, e.g. in Harlan.",
        "Smith et al. (2019) found 1.1 t/ac.",
        "See Fig. 2 for the map.",
        "J. Smith agreed!",
        "Was it 3.5 t?",
        "Yes.",
    ]


def test_no_merging_across_a_heading():
    text = "Results text that is long enough.\n\n2 Methods\n\nMethods text that is long enough."
    prose = [c.body for c in chunks_of(text) if c.kind == "prose"]
    assert prose == ["Results text that is long enough.", "Methods text that is long enough."]


# ---------------------------------------------------------------------------
# Rule 6: overlap
# ---------------------------------------------------------------------------


def test_overlap_carries_trailing_sentences_within_a_section():
    para = sentences("Body", 12)
    chunks = chunks_of(para, target_tokens=50, overlap_tokens=20)
    assert len(chunks) > 2
    for prev, nxt in zip(chunks, chunks[1:]):
        # The next chunk starts with the last two whole sentences of the previous one.
        tail = " ".join(split_sentences(prev.body)[-2:])
        assert nxt.body.startswith(tail)
        assert count_tokens(tail) <= 20


def test_overlap_is_never_carried_across_a_heading():
    text = sentences("Before", 8) + "\n\n2 Methods\n\n" + sentences("After", 3)
    chunks = chunks_of(text, target_tokens=40, overlap_tokens=20)
    after = [c for c in chunks if c.section_path == "2 Methods" and c.kind == "prose"]
    assert len(after) == 1
    assert after[0].body == sentences("After", 3)
    assert "Before" not in after[0].body


def test_table_hands_at_most_two_rows_to_the_next_prose_chunk():
    table = "\n".join(f"| County {i} | {1000 + i} |" for i in range(6))
    text = sentences("Intro", 2) + "\n\n" + table + "\n\n" + sentences("Next", 2)
    chunks = chunks_of(text, target_tokens=200, overlap_tokens=50)
    kinds = [c.kind for c in chunks]
    assert kinds == ["prose", "table", "prose"]
    after = chunks[2].body
    assert after.startswith("County 4 | 1004\nCounty 5 | 1005\n\n")
    assert "County 3" not in after
    assert after.endswith(sentences("Next", 2))


def test_overlap_does_not_leak_into_section_bodies():
    para = sentences("Body", 12)
    chunks = chunks_of("1 Scope\n\n" + para, target_tokens=50, overlap_tokens=20)
    section = chunks[0]
    assert section.kind == "section"
    assert section.body == "1 Scope\n\n" + para


# ---------------------------------------------------------------------------
# Rule 7: title and section path prefix
# ---------------------------------------------------------------------------


def test_content_is_title_path_then_body():
    text = "2 Methods\n\n2.1 Feedstock handling\n\nBales are ground before use in the boiler."
    chunks = chunks_of(text)
    prose = chunks[-1]
    assert prose.content == (
        "Straw Report\n2 Methods > 2.1 Feedstock handling\n\nBales are ground before use in the boiler."
    )
    assert prose.token_count == count_tokens(prose.content)


def test_content_without_section_has_title_only():
    chunks = chunks_of("Bales are ground before use in the boiler.")
    assert chunks[0].section_path == ""
    assert chunks[0].content == "Straw Report\n\nBales are ground before use in the boiler."


def test_title_h1_is_not_repeated_in_the_prefix():
    chunks = chunk_document(
        parse_text("# Straw Report\n\n## Methods\n\nBales are ground before use.", "markdown"), TITLE
    )
    prose = chunks[-1]
    assert prose.section_path == "Straw Report > Methods"
    assert prose.content == "Straw Report\nMethods\n\nBales are ground before use."


# ---------------------------------------------------------------------------
# Rule 8: hierarchy
# ---------------------------------------------------------------------------

HIERARCHY = "\n\n".join(
    [
        "Preface text that sits before any heading.",
        "2 Methods",
        "Methods overview paragraph text.",
        "2.1 Feedstock handling",
        "Feedstock paragraph text goes here.",
        "County      Acres     Yield\nHarlan      118,400   1.34\nOsgood      188,300   3.91",
        "3 Results",
        "Results paragraph text goes here.",
    ]
)


def test_section_chunks_parent_wiring_and_levels():
    chunks = chunks_of(HIERARCHY)
    summary = [(c.ordinal, c.kind, c.level, c.parent_ordinal, c.heading) for c in chunks]
    assert summary == [
        (0, "prose", 1, None, None),
        (1, "section", 1, None, "2 Methods"),
        (2, "prose", 2, 1, None),
        (3, "section", 2, 1, "2.1 Feedstock handling"),
        (4, "prose", 3, 3, None),
        (5, "table", 3, 3, None),
        (6, "section", 1, None, "3 Results"),
        (7, "prose", 2, 6, None),
    ]
    assert all(not c.is_table for c in chunks if c.kind == "section")
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_section_body_holds_the_whole_section_including_subsections():
    chunks = chunks_of(HIERARCHY)
    methods = chunks[1]
    assert methods.body == (
        "2 Methods\n\nMethods overview paragraph text.\n\n2.1 Feedstock handling\n\n"
        "Feedstock paragraph text goes here.\n\n"
        "County | Acres | Yield\nHarlan | 118,400 | 1.34\nOsgood | 188,300 | 3.91"
    )
    assert methods.section_path == "2 Methods"
    assert methods.content.startswith("Straw Report\n2 Methods\n\n2 Methods\n\n")


def test_line_spans_of_content_and_sections():
    chunks = chunks_of(HIERARCHY)
    spans = {c.ordinal: (c.line_start, c.line_end) for c in chunks}
    assert spans[0] == (1, 1)  # preface
    assert spans[1] == (3, 13)  # "2 Methods" up to the end of the table
    assert spans[3] == (7, 13)  # "2.1" section
    assert spans[5] == (11, 13)  # the table's three lines
    assert spans[6] == (15, 17)  # "3 Results" to the end
    assert all(c.page_start is None for c in chunks)


def test_pages_are_carried_from_blocks():
    doc = ParsedDocument(
        blocks=[
            Block("prose", "1 Introduction", page=1, line_start=1, line_end=1),
            Block("prose", "Text on the first page of the paper.", page=1, line_start=3, line_end=3),
            Block("prose", "Text on the second page of the paper.", page=2, line_start=5, line_end=5),
        ],
        parser="pdfplumber",
        pages=2,
    )
    chunks = chunk_document(doc, TITLE)
    assert (chunks[0].page_start, chunks[0].page_end) == (1, 2)
    assert (chunks[1].page_start, chunks[1].page_end) == (1, 2)
    assert (chunks[1].line_start, chunks[1].line_end) == (3, 5)


# ---------------------------------------------------------------------------
# Rule 9 and content hash
# ---------------------------------------------------------------------------


def test_empty_document_gives_no_chunks():
    assert chunk_document(ParsedDocument(blocks=[], parser="text"), TITLE) == []
    assert chunks_of("   \n\n\n") == []


def test_content_hash_ignores_name_and_title_but_not_content(tmp_path):
    from scirag.ingest.parse import parse_file

    a = tmp_path / "report.txt"
    b = tmp_path / "copy-of-report.txt"
    a.write_text(HIERARCHY)
    b.write_text(HIERARCHY)
    hash_a = content_hash(chunk_document(parse_file(a), "report"))
    hash_b = content_hash(chunk_document(parse_file(b), "copy-of-report"))
    assert hash_a == hash_b and re.fullmatch(r"[0-9a-f]{64}", hash_a)
    changed = content_hash(chunks_of(HIERARCHY.replace("118,400", "118,401")))
    assert changed != hash_a


def test_count_tokens_is_words_and_punctuation():
    assert count_tokens("Yield: 1.34 t/ac.") == 9
    assert count_tokens("") == 0


def test_table_caption_travels_inside_the_table_chunk():
    text = (
        "Results\n\n"
        "Table 2: Ash and lignin of cereal straws (dry basis).\n\n"
        "| Residue | Ash % | Lignin % |\n|---|---|---|\n| Barley straw | 5.4 | 17.1 |\n| Wheat straw | 6.8 | 18.9 |\n\n"
        "The barley straw had the lowest ash content of the cereal residues we measured."
    )
    chunks = chunk_document(parse_text(text, fmt="markdown"), "Doc")
    tables = [c for c in chunks if c.is_table]
    assert len(tables) == 1
    assert tables[0].body.startswith("Table 2: Ash and lignin")
    assert "Barley straw | 5.4 | 17.1" in tables[0].body
    prose = [c for c in chunks if c.kind == "prose"]
    assert not any("Table 2: Ash and lignin" in c.body for c in prose)


def test_table_caption_below_the_table_is_attached_too():
    text = (
        "| Residue | Ash % |\n|---|---|\n| Barley straw | 5.4 |\n| Wheat straw | 6.8 |\n\n"
        "Table 3. Ash content of two straws.\n\n"
        "A paragraph of ordinary prose that follows the caption and is long enough."
    )
    chunks = chunk_document(parse_text(text, fmt="markdown"), "Doc")
    table = next(c for c in chunks if c.is_table)
    assert table.body.endswith("Table 3. Ash content of two straws.")
    assert all("Table 3." not in c.body for c in chunks if c.kind == "prose")


# ---------------------------------------------------------------------------
# Complete tables and references (the PDF 'layout' engine, issue 10)
# ---------------------------------------------------------------------------


def _layout_doc(*blocks):
    return ParsedDocument(blocks=list(blocks), parser="layout", pages=1)


TABLE = "Table 2: Accuracy by model.\nModel | Acc\nBaseline | 71.2\nOurs | 75.3"


def test_complete_table_takes_no_caption_from_prose_and_leaks_no_rows():
    chunks = chunk_document(
        _layout_doc(
            Block("heading", "4 Results", level=1, page=1),
            Block("prose", "Table 2 shows that ours beats the baseline by four points on the benchmark.", page=1),
            Block("table", TABLE, page=1),
            Block("prose", "The gain holds on every split of the data we tried in the study.", page=1),
        ),
        TITLE,
    )
    tables = [c for c in chunks if c.is_table]
    assert [t.body for t in tables] == [TABLE]
    prose = [c.body for c in content_chunks(chunks) if not c.is_table]
    assert prose[0].startswith("Table 2 shows")
    assert not any("75.3" in p for p in prose)  # no table rows carried into prose


def test_complete_table_too_long_splits_by_rows_repeating_caption_and_header():
    rows = "\n".join(f"model-{i} | {i}.5" for i in range(120))
    chunks = chunk_document(
        _layout_doc(Block("table", "Table 9: Many rows.\nModel | Score\n" + rows, page=3)), TITLE, target_tokens=100
    )
    parts = [c.body.split("\n") for c in chunks if c.is_table]
    assert len(parts) > 1
    assert all(p[0] == "Table 9: Many rows." and p[1] == "Model | Score" for p in parts)
    assert [r for p in parts for r in p[2:]] == rows.split("\n")  # every row once, in order


def test_layout_short_paragraphs_are_kept_and_references_marked():
    chunks = chunk_document(
        _layout_doc(
            Block("heading", "2 Method", level=1, page=1),
            Block("prose", "y = f(x)", page=1),
            Block("heading", "References", level=1, page=2),
            Block("reference", "[1] A. Author. A paper. 2020.", page=2),
        ),
        TITLE,
    )
    body = {c.body: c for c in content_chunks(chunks)}
    assert "y = f(x)" in body and not body["y = f(x)"].is_reference
    assert body["[1] A. Author. A paper. 2020."].is_reference
    assert not any(c.is_reference for c in chunks if c.kind == "section")


def test_other_parsers_keep_noise_filter_and_caption_attachment():
    # Unchanged behaviour outside the layout engine: short fragments dropped,
    # a 'Table N' paragraph right before a table becomes its caption.
    doc = ParsedDocument(
        blocks=[
            Block("prose", "y = f(x)", page=1),
            Block("prose", "Table 2: Accuracy by model.", page=1),
            Block("table", "Model | Acc\nOurs | 75.3", page=1),
        ],
        parser="pdfplumber",
    )
    chunks = content_chunks(chunk_document(doc, TITLE))
    assert [c.body for c in chunks] == ["Table 2: Accuracy by model.\n\nModel | Acc\nOurs | 75.3"]
