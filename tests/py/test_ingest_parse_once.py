"""Each file is parsed once (issue 28): the citation fields `scirag ingest` reads from a
file (title, authors, year, DOI, arXiv id) come from the same parse as its content,
with the same values as reading them on their own."""

from __future__ import annotations

import pdfplumber

from scirag.ingest import pipeline
from scirag.ingest.discover import discover, read_file_metadata
from scirag.ingest.parse import parse_file
from scirag.ingest.parse_guard import GuardedParser

from test_ingest_folder import mixed_folder, straw_pdf

FIELDS = ("id", "title", "authors", "year", "doi", "arxiv_id", "inferred")


def fields(entry) -> tuple:
    return tuple(getattr(entry, f) for f in FIELDS)


def test_layout_engine_reads_content_and_metadata_in_one_open(tmp_path, monkeypatch):
    pdf = straw_pdf(
        tmp_path / "bales.pdf",
        ["Baling Straw at Night"],
        ["Ada Lovelace, Grace Hopper"],
        "Night baling kept straw moisture at 14 percent.",
        stamp="arXiv:2201.00001v1 [cs.LG] 3 Jan 2022",
    )
    alone = read_file_metadata(pdf)  # the metadata read on its own (its own open)
    assert alone["title"] == "Baling Straw at Night" and alone["arxiv_id"] == "2201.00001"
    opened = []
    real_open = pdfplumber.open
    monkeypatch.setattr(pdfplumber, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    doc = parse_file(pdf)
    assert len(opened) == 1, "the layout engine opens the PDF once for content and metadata"
    assert read_file_metadata(pdf, doc) == alone  # the same fields, from the parse's own pass
    assert len(opened) == 1, "metadata from a parsed document does not open the file again"
    md = tmp_path / "notes.md"
    md.write_text("# Depot notes\n\nThe depot stores 300 bales.\n", encoding="utf-8")
    assert read_file_metadata(md, parse_file(md)) == read_file_metadata(md) == {"title": "Depot notes"}


def test_ingest_parse_fills_the_metadata_discovery_left_to_it(tmp_path):
    root = mixed_folder(tmp_path / "corpus")
    with GuardedParser() as now_parser:
        now = {e.id: e for e in discover([root], reader=now_parser).entries}
        assert now_parser.requests["meta"] == 4  # read ahead: one extra request per file
    with GuardedParser() as parser:
        later = discover([root], reader=parser, infer_at_parse=True).entries
        assert parser.requests["meta"] == 0 and all(e.infer_at_parse for e in later)
        assert all(e.inferred == [] for e in later)  # nothing read yet
        for entry in later:
            doc, chunks, filled = pipeline.parse_and_chunk(entry, parser=parser)
            assert fields(filled) == fields(now[entry.id]), entry.id
            assert not filled.infer_at_parse
            # the chunks (headed by the title) are those of the two-pass way
            _, before, _ = pipeline.parse_and_chunk(now[entry.id], parser=parser)
            assert [c.content for c in chunks] == [c.content for c in before], entry.id
    # one request per file for content and metadata: no 'meta' request at all
    assert dict(parser.requests) == {"file": 4 + 4}  # the second 4: the comparison parses above
