"""The corpus manifest: one JSON object per line declaring identity and rights."""

from __future__ import annotations

import unicodedata

import json
from dataclasses import dataclass, field
from pathlib import Path

from scirag.ingest.licenses import LICENSES, normalise_license


class ManifestError(ValueError):
    """A manifest line that cannot be used; the message names the line and the field.

    ``id`` is the line's id as far as it could be read (a number is kept as its text),
    so the report row names the document even when the line is refused."""

    def __init__(self, message: str, ident: str | None = None):
        super().__init__(message)
        self.id = ident


MAX_FIELD_CHARS = 4096  # ids, paths, titles: a report row and an index key, not a document


def _clean_id(value) -> str | None:
    """The id as report text, when it can be read at all (str or int), else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value)
    text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text)[:200]
    return text.strip() or None


def _bad_text(value: str) -> str | None:
    """Why a string cannot go into the database or a file name, or None when it can."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    if len(value) > MAX_FIELD_CHARS:
        return f"is {len(value)} characters long (at most {MAX_FIELD_CHARS})"
    return None


def _control_chars(value: str) -> str | None:
    """Why an id or a file name cannot be used (a newline or other control character
    would forge lines in reports, logs and --manifest-out), or None (issue 26)."""
    bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
    return None if bad is None else f"contains a control character (U+{ord(bad):04X})"


def confine(base: Path, relative: str, allow_outside: bool = False) -> Path:
    """The file a manifest path names, which must lie inside the manifest's folder
    (after resolving "..", symbolic links and absolute paths) unless allow_outside:
    a manifest must not make the loader read /etc/passwd or /proc into the corpus."""
    target = base / relative
    if allow_outside:
        return target
    root = base.resolve()
    resolved = target.resolve()
    if not resolved.is_relative_to(root):
        raise ValueError(
            f"path '{relative}' resolves outside the manifest's folder {root} (pass --allow-outside to permit it)"
        )
    return resolved


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
    arxiv_id: str | None = None
    # Issue 17: which citation fields the manifest line stated ("title" absent means the
    # title above is only the id), which were read from the file instead (stored in
    # documents.metadata_inferred), and the folder a discovered file was found under
    # (documents.source_path is shown relative to it).
    stated: frozenset = frozenset()
    inferred: list[str] = field(default_factory=list)
    base: Path | None = None
    # the fields above the file may state are still to be read, by its parse at ingest
    # (discover(infer_at_parse=True)): one pass over the file for content and metadata
    infer_at_parse: bool = False


def parse_entry(raw: str, line_no: int, base: Path, allow_outside: bool = False) -> Entry:
    where = f"manifest line {line_no}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ManifestError(f"{where}: not valid JSON (nested too deeply)") from None
    if not isinstance(obj, dict):
        raise ManifestError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    ident = obj.get("id")
    shown = _clean_id(ident)
    if not isinstance(ident, str):
        what = "missing" if ident is None else f"must be a string, got {type(ident).__name__}"
        raise ManifestError(f"{where}: 'id' {what}", shown)
    if not ident.strip():
        raise ManifestError(f"{where}: missing or empty 'id'")
    problem = _bad_text(ident) or _control_chars(ident)
    if problem:
        raise ManifestError(f"{where}: 'id' {problem}", shown)
    where = f"{where} ({ident})"
    for key in ("path", "text", "title", "format", "source", "doi", "journal", "license", "arxiv_id"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ManifestError(f"{where}: '{key}' must be a string, got {type(obj[key]).__name__}", shown)
        if isinstance(obj.get(key), str) and key != "text" and _bad_text(obj[key]):
            raise ManifestError(f"{where}: '{key}' {_bad_text(obj[key])}", shown)
        if key == "path" and isinstance(obj.get(key), str) and _control_chars(obj[key]):
            raise ManifestError(f"{where}: 'path' {_control_chars(obj[key])}", shown)
    if isinstance(obj.get("text"), str) and "\x00" in obj["text"]:
        obj["text"] = obj["text"].replace("\x00", "")  # as parsed files: NUL never reaches the database
    try:
        return _entry(obj, ident, line_no, where, base, allow_outside)
    except ManifestError as exc:
        exc.id = shown
        raise


def _entry(obj: dict, ident: str, line_no: int, where: str, base: Path, allow_outside: bool) -> Entry:
    if bool(obj.get("path")) == bool(obj.get("text")):
        raise ManifestError(f"{where}: give exactly one of 'path' or 'text'")
    license_ = obj.get("license") or "unknown"  # nobody said otherwise means unknown
    if license_ not in LICENSES:
        try:  # any case; CC names (issue 25)
            license_ = normalise_license(license_, "license")[0]
        except ValueError as exc:
            raise ManifestError(f"{where}: {exc}") from None
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
    bad_author = next((a for a in authors if _bad_text(a)), None)
    if bad_author is not None:
        raise ManifestError(f"{where}: an author {_bad_text(bad_author)}")
    try:
        path = confine(base, obj["path"], allow_outside) if obj.get("path") else None
    except (ValueError, OSError) as exc:
        raise ManifestError(f"{where}: {exc}") from None
    return Entry(
        line_no=line_no,
        id=ident.strip(),
        title=(obj.get("title") or ident).strip(),
        path=path,
        text=obj.get("text"),
        fmt=fmt,
        authors=authors,
        year=year,
        doi=obj.get("doi"),
        journal=obj.get("journal"),
        source=obj.get("source") or "unspecified",
        license=license_,
        arxiv_id=obj.get("arxiv_id"),
        stated=frozenset(k for k, v in obj.items() if v not in (None, "", [])),
    )


def read_manifest(path: Path, allow_outside: bool = False):
    """Yields (line_no, Entry | ManifestError) so one bad line never stops the run
    (bytes that are not UTF-8 make that line an error, not the file)."""
    base = path.parent
    with open(path, "rb") as fh:
        for line_no, data in enumerate(fh, 1):
            try:
                raw = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield line_no, ManifestError(f"manifest line {line_no}: not valid UTF-8 (byte {exc.start + 1})")
                continue
            if not raw.strip() or raw.lstrip().startswith("//"):
                continue
            try:
                yield line_no, parse_entry(raw, line_no, base, allow_outside)
            except ManifestError as exc:
                yield line_no, exc
