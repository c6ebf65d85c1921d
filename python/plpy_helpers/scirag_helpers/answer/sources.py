"""The numbered sources shown to the answerer: a chunk's text and the source list."""

from __future__ import annotations

import json

from scirag_helpers.answer.options import AnswerError


def body_of(row: dict) -> str:
    """The text a source shows: the row's ``body`` (chunks.body, stored by the loader
    without the title/section prefix that ``content`` carries for embedding and
    search; for a consolidated group or an enriched chunk, the stage's text)."""
    if row.get("body") is None:
        raise AnswerError(f"evidence row for chunk {row.get('chunk_id')} has no body (chunks.body)")
    return row["body"].strip()


def make_sources(rows: list[dict], max_sources: int) -> list[dict]:
    """Numbered sources [1..n] from retrieval rows (rank order)."""
    out = []
    for row in rows[:max_sources]:
        cit = row.get("citation") or {}
        if isinstance(cit, str):
            cit = json.loads(cit)
        text = body_of(row)
        out.append(
            {
                "n": len(out) + 1,
                "chunk_id": row["chunk_id"],
                "document_id": row["document_id"],
                "external_id": row.get("external_id"),
                "title": row.get("title"),
                "section_path": row.get("section_path"),
                "is_table": bool(row.get("is_table")),
                "citation": cit,
                "full_text": text,
                "text": text,
                "shown": "full",
            }
        )
    return out
