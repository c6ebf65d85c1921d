"""Citation metadata read from generated PDFs (scirag.ingest.pdf.meta): title from the largest text,
authors under it, DOI and arXiv id patterns, year; nothing invented when nothing is there."""

from __future__ import annotations

from pathlib import Path

from make_pdfs import Page, write_pdf
from scirag.ingest.pdf.meta import PdfMeta, read_pdf_meta


def make_pdf(path: Path, pages: list[list[tuple]], info: dict | None = None) -> Path:
    """pages: per page, items (text, size, x, y[, rotated]) in PDF points (y from the bottom),
    written by tests/data/make_pdfs.py. A text may be a list of (text, size, rise) runs, for
    superscript marks inside a line."""
    drawn = []
    for items in pages:
        page = Page()
        for text, size, x, y, *rotated in items:
            page.text_at(x, y, text, size, rotated=bool(rotated and rotated[0]))
        drawn.append(page)
    return write_pdf(path, drawn, info)


BODY = [
    (f"Body text line {i} says that the measured straw yield was within the expected range.", 10, 72, 560 - 12 * i)
    for i in range(12)
]


def paper_page(title_lines, author_lines, extra=(), stamp=None, title_size=17, author_size=11):
    items = []
    y = 720
    for line in title_lines:
        items.append((line, title_size, 90, y))
        y -= title_size * 1.25
    y -= 12
    for line in author_lines:
        items.append((line, author_size, 110, y))
        y -= author_size * 1.3
    items.append(("Abstract", 11, 280, y - 16))
    items.extend(BODY)
    items.extend(extra)
    if stamp:
        items.append((stamp, 20, 30, 250, True))
    return items


def test_title_authors_arxiv_doi_and_year(tmp_path):
    pdf = make_pdf(
        tmp_path / "a.pdf",
        [
            paper_page(
                ["Learning to Bale Straw with", "Recurrent Harvest Models"],
                [
                    [
                        ("Ada Lovelace", 11, 0),
                        ("1,2", 7, 4),
                        (", Grace Hopper", 11, 0),
                        ("2", 7, 4),
                        (" and Alan Turing", 11, 0),
                    ],
                    "1 University of Somewhere, 2 Harvest Research Lab",
                    "{ada, grace}@example.org",
                ],
                extra=[("Published version: https://doi.org/10.1234/straw.2019.042.", 9, 72, 60)],
                stamp="arXiv:2101.01234v2 [cs.LG] 5 Jan 2021",
            )
        ],
    )
    meta = read_pdf_meta(pdf)
    assert meta.title == "Learning to Bale Straw with Recurrent Harvest Models"
    assert meta.authors == ["Ada Lovelace", "Grace Hopper", "Alan Turing"]
    assert meta.arxiv_id == "2101.01234"
    assert meta.doi == "10.1234/straw.2019.042"  # printed DOI wins; trailing full stop dropped
    assert meta.year == 2021  # from the stamp's date
    assert meta.found() == ["title", "authors", "year", "doi", "arxiv_id"]


def test_subtitle_joins_title_but_author_line_does_not(tmp_path):
    # title 17 pt, subtitle 14 pt (>= 1.25 x body), authors 12 pt: only the first two are the title
    items = [
        ("STaR: Self-Taught Reasoner", 17, 150, 720),
        ("Bootstrapping Reasoning With Reasoning", 14, 130, 698),
        ("Eric Zelikman, Yuhuai Wu", 12, 160, 660),
        ("Abstract", 11, 280, 630),
    ] + BODY
    meta = read_pdf_meta(make_pdf(tmp_path / "s.pdf", [items]))
    assert meta.title == "STaR: Self-Taught Reasoner Bootstrapping Reasoning With Reasoning"
    assert meta.authors == ["Eric Zelikman", "Yuhuai Wu"]


def test_hyphen_at_line_end_joins_word(tmp_path):
    meta = read_pdf_meta(
        make_pdf(
            tmp_path / "h.pdf", [paper_page(["Self-Supervised Straw Classi-", "fication at Scale"], ["Ada Lovelace"])]
        )
    )
    assert meta.title == "Self-Supervised Straw Classification at Scale"


def test_names_in_pairs_without_separators_and_affiliations_skipped(tmp_path):
    meta = read_pdf_meta(
        make_pdf(
            tmp_path / "p.pdf",
            [
                paper_page(
                    ["Scaling Straw Models"],
                    [
                        "Maarten Bosma Gaurav Mishra Adam Roberts Paul Barham",
                        "Google Research, Brain Team",
                        "University of California, Santa Barbara",
                    ],
                )
            ],
        )
    )
    assert meta.authors == ["Maarten Bosma", "Gaurav Mishra", "Adam Roberts", "Paul Barham"]


def test_old_style_arxiv_id_copyright_year_and_arxiv_doi(tmp_path):
    meta = read_pdf_meta(
        make_pdf(
            tmp_path / "o.pdf",
            [
                paper_page(
                    ["A Classic Result on Straw"],
                    ["Ada Lovelace"],
                    extra=[("Preprint arXiv:hep-th/9901001. Copyright 1999 the authors.", 9, 72, 60)],
                )
            ],
        )
    )
    assert meta.arxiv_id == "hep-th/9901001"
    assert meta.year == 1999
    assert meta.doi == "10.48550/arXiv.hep-th/9901001"  # no printed DOI: the arXiv DOI of the id


def test_no_larger_text_means_no_title_from_layout_but_info_title_is_used(tmp_path):
    flat = make_pdf(tmp_path / "flat.pdf", [BODY])
    assert read_pdf_meta(flat).title is None
    assert read_pdf_meta(flat).authors == []
    with_info = make_pdf(
        tmp_path / "info.pdf", [BODY], info={"Title": "Straw Yield Report 2020", "Author": "Ada Lovelace"}
    )
    meta = read_pdf_meta(with_info)
    assert meta.title == "Straw Yield Report 2020"
    assert meta.authors == ["Ada Lovelace"]
    # a file name in /Title is not a title
    named = make_pdf(tmp_path / "named.pdf", [BODY], info={"Title": "Microsoft Word - yield report.docx"})
    assert read_pdf_meta(named).title is None


def test_nothing_invented_for_unreadable_files(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    assert read_pdf_meta(bad) == PdfMeta()
    assert read_pdf_meta(tmp_path / "missing.pdf") == PdfMeta()
