"""The block model every parser produces, shared by parse.py and the PDF engines.

A document is a list of Block objects (headings, tables, prose, bibliography
entries) with their page and 1-based line span, so the chunker never needs to know
which format or PDF engine a document came from. For PDFs, line numbers point into
the document's extracted text: all blocks' text joined with one blank line between
blocks ("\\n\\n".join), which DocLines numbers as blocks are added.

parse.py (formats), pdf/engines.py (engine choice, fallback) and pdf/layout.py
(the default PDF engine) all import from here; none imports another's private helpers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CELL_SEP = " | "


class ParseError(Exception):
    """A file could not be parsed; the message names the file and the reason."""


@dataclass
class Block:
    kind: str  # 'heading' | 'table' | 'prose' | 'reference' (a bibliography entry)
    text: str  # tables: one row per line, cells joined by ' | '
    level: int | None = None  # heading level 1..6
    page: int | None = None  # 1-based PDF page
    line_start: int | None = None  # 1-based line span (see the module docstring)
    line_end: int | None = None


@dataclass
class ParsedDocument:
    blocks: list[Block]
    parser: str  # 'docling' | 'pdfplumber' | 'pypdf' | 'markdown' | 'html' | 'text'
    title: str | None = None
    pages: int | None = None
    partial: str | None = None  # why some pages could not be read (None: the whole file was read)
    # citation fields (pdf/meta.FIELDS) the engine read in its own pass over the file
    # (the layout engine: page 1 and the information dictionary); None: not read
    meta: dict | None = None


class DocLines:
    """Assigns line numbers in the document's extracted text as blocks are added."""

    def __init__(self):
        self.blocks: list[Block] = []
        self.next_line = 1

    def add(self, kind: str, text: str, page: int | None, level: int | None = None):
        text = text.strip("\n")
        if not text.strip():
            return
        n = text.count("\n") + 1
        self.blocks.append(
            Block(kind, text, level=level, page=page, line_start=self.next_line, line_end=self.next_line + n - 1)
        )
        self.next_line += n + 1  # one blank line between blocks


def clean_pdf_title(value) -> str | None:
    """A PDF information dictionary's title, or None for a missing or junk one."""
    title = str(value or "").strip()
    # Producers often store junk like "Microsoft Word - draft3.docx" or "untitled".
    if not title or title.lower() in ("untitled", "title") or re.search(r"\.(docx?|tex|pdf|dvi)$", title, re.I):
        return None
    return title
