"""The corpus manifest: one JSON object per line declaring identity and rights."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

LICENSES = ("public", "open_commercial", "open_noncommercial", "restricted", "unknown")


class ManifestError(ValueError):
    """A manifest line that cannot be used; the message names the line and the field."""


@dataclass
class Entry:
    line_no: int
    id: str
    title: str
    path: Path | None = None
    text: str | None = None
    fmt: str = "text"
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    journal: str | None = None
    source: str = "unspecified"
    license: str = "unknown"


def parse_entry(raw: str, line_no: int, base: Path) -> Entry:
    where = f"manifest line {line_no}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ManifestError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    ident = obj.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise ManifestError(f"{where}: missing or empty 'id'")
    where = f"{where} ({ident})"
    for key in ("path", "text", "title", "format", "source", "doi", "journal", "license"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ManifestError(f"{where}: '{key}' must be a string, got {type(obj[key]).__name__}")
    if bool(obj.get("path")) == bool(obj.get("text")):
        raise ManifestError(f"{where}: give exactly one of 'path' or 'text'")
    license_ = obj.get("license") or "unknown"  # nobody said otherwise means unknown
    if license_ not in LICENSES:
        raise ManifestError(f"{where}: license '{license_}' is not one of {', '.join(LICENSES)}")
    fmt = obj.get("format") or "text"
    if fmt not in ("text", "markdown", "html"):
        raise ManifestError(f"{where}: format '{fmt}' is not one of text, markdown, html")
    year = obj.get("year")
    if isinstance(year, str) and year.isascii() and year.isdecimal():
        year = int(year)
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise ManifestError(f"{where}: year '{obj.get('year')}' is not an integer")
    authors = obj.get("authors") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in authors.split(";") if a.strip()]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise ManifestError(f"{where}: 'authors' must be a list of strings or a ';'-separated string")
    path = (base / obj["path"]) if obj.get("path") else None
    return Entry(
        line_no=line_no, id=ident.strip(), title=(obj.get("title") or ident).strip(),
        path=path, text=obj.get("text"), fmt=fmt, authors=authors, year=year,
        doi=obj.get("doi"), journal=obj.get("journal"),
        source=obj.get("source") or "unspecified", license=license_,
    )


def read_manifest(path: Path):
    """Yields (line_no, Entry | ManifestError) so one bad line never stops the run."""
    base = path.parent
    with open(path, encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, 1):
            if not raw.strip() or raw.lstrip().startswith("//"):
                continue
            try:
                yield line_no, parse_entry(raw, line_no, base)
            except ManifestError as exc:
                yield line_no, exc
