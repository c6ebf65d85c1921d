"""Shared fixtures for the answer and evaluation tests: sources shaped like the
rows scirag.retrieve returns, built from small texts written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parent / "recordings"

COUNTY = (
    "Harlan County's principal residue is barley straw, which makes up 58 % of the 120,320 t that "
    "Harlan County could supply annually. Rice straw dominates in Lomax County."
)
COMPOSITION_TABLE = (
    "Residue | n | Cellulose (glucan) | Lignin | Ash\n"
    "Wheat straw | 24 | 36.8 | 18.9 | 6.3\n"
    "Barley straw | 18 | 35.2 | 17.1 | 5.4\n"
    "Rice straw | 15 | 33.5 | 14.2 | 15.8"
)
BEDDING = (
    "Barley straw is widely used for animal bedding and is valued by livestock farmers across the basin. "
    "Barley straw contains 5.4 % ash on a dry-matter basis, less than oat straw."
)
WEATHER = "Field crews reported mild weather during the whole harvest season, with little rain in August."


def row(
    rank: int,
    text: str,
    *,
    ext: str,
    title: str,
    section: str = "",
    is_table: bool = False,
    chunk_id: int | None = None,
    document_id: int | None = None,
    lines: str = "1-3",
) -> dict:
    """One retrieval row; content carries the title/section header the chunker prepends,
    body (chunks.body) the text without it."""
    head = "\n".join(x for x in (title, section) if x)
    return {
        "rank": rank,
        "chunk_id": chunk_id or 100 + rank,
        "document_id": document_id or 10 + rank,
        "external_id": ext,
        "score": 1.0 / (60 + rank),
        "layers": {"keyword": rank},
        "title": title,
        "section_path": f"{title} > {section}" if section else title,
        "is_table": is_table,
        "content": f"{head}\n\n{text}",
        "body": text,
        "citation": {"external_id": ext, "title": title, "lines": lines, "cite": f"{title}, lines {lines}"},
    }


def demo_rows() -> list[dict]:
    return [
        row(
            1,
            COUNTY,
            ext="county",
            title="Residue Availability in Four Counties",
            section="3 Results",
            chunk_id=201,
            document_id=1,
            lines="69-71",
        ),
        row(
            2,
            COMPOSITION_TABLE,
            ext="composition",
            title="Composition of Cereal Residues",
            section="3.1 Structural composition",
            is_table=True,
            chunk_id=202,
            document_id=2,
            lines="40-45",
        ),
        row(3, WEATHER, ext="logbook", title="Harvest Logbook", chunk_id=203, document_id=3),
    ]


def recording(name: str) -> dict:
    return json.loads((RECORDINGS / name).read_text(encoding="utf-8"))
