"""What `scirag ingest PATH...` loads: manifests, document files and folders, as manifest entries.

The result has the shape read_manifest yields, ``(line_no, Entry | ManifestError)``, so
ingestion has one loop whatever the input. Rights and identity follow one rule:

- a manifest line states the rights (license, source) of its document; the command's
  --license/--source apply only to files that no manifest line names;
- citation fields a manifest line leaves out (title, authors, year, doi, arxiv_id) are
  read from the file (PDF: pdf/meta.py; Markdown/HTML: the parser's title) and listed in
  ``Entry.inferred`` so the database marks them as guesses (documents.metadata_inferred);
  with ``infer_at_parse`` by the file's one parse at ingest (pipeline.parse_and_chunk).

Line numbers are positions in the inferred manifest (what --manifest-out writes), so a
report row points at the line that produced it.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from scirag.ingest.licenses import LICENSES
from scirag.ingest.manifest import (
    Entry,
    ManifestError,
    _bad_text,
    _clean_id,
    _control_chars,
    confine,
    read_manifest,
)

DOCUMENT_SUFFIXES = {
    ".pdf": "pdf",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
}
MANIFEST_SUFFIXES = (".jsonl",)
METADATA_FIELDS = ("title", "authors", "year", "doi", "arxiv_id")


class DiscoverError(ValueError):
    """A command-line path or option that cannot be used; the message names it."""


@dataclass
class Discovery:
    items: list = field(default_factory=list)  # (line_no, Entry | ManifestError)
    skipped: list = field(default_factory=list)  # (path, why) for files a folder walk left out
    manifests: list = field(default_factory=list)  # manifest files read

    @property
    def entries(self) -> list[Entry]:
        return [e for _, e in self.items if isinstance(e, Entry)]


def discover(
    paths: list[Path],
    globs: list[str] | None = None,
    license: str | None = None,
    source: str | None = None,
    allow_outside: bool = False,
    infer: bool = True,
    reader=None,
    infer_at_parse: bool = False,
) -> Discovery:
    """Entries for every manifest line and every document file under paths (see module doc).
    infer_at_parse: the citation fields of a file are read by its parse at ingest
    (parse_and_chunk), not now: the file is read once. Without it they are read now,
    for --dry-run and --manifest-out, which show them before anything is parsed."""
    if license is not None and license not in LICENSES:
        raise DiscoverError(f"--license '{license}' is not one of {', '.join(LICENSES)}")
    if source is not None and not source.strip():
        raise DiscoverError("--source must not be empty")
    if not paths:
        raise DiscoverError("give at least one manifest (.jsonl), document file or folder")
    manifests, files = [], []  # files: (path, root the id is relative to, given explicitly)
    unsupported: list = []  # (path, why): files in folders that are no document type scirag reads
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise DiscoverError(f"{p}: does not exist (no such file or folder)")
        if p.is_dir():
            for f, supported in _walk(p):
                if supported:
                    files.append((f, p, False))
                else:
                    unsupported.append((f, "unsupported type"))
        elif p.suffix.lower() in MANIFEST_SUFFIXES:
            manifests.append(p)
        elif p.suffix.lower() in DOCUMENT_SUFFIXES:
            files.append((p, p.parent, True))
        else:
            raise DiscoverError(f"{p}: not a manifest (.jsonl) or a document ({', '.join(sorted(DOCUMENT_SUFFIXES))})")

    found = Discovery(manifests=manifests, skipped=unsupported)
    stated_by_manifest: set[Path] = set()
    for manifest in manifests:
        for _, item in read_manifest(manifest, allow_outside=allow_outside):
            if isinstance(item, Entry):
                item = replace(item, base=manifest.parent)
                if item.path is not None:
                    stated_by_manifest.add(item.path.resolve())
            found.items.append(item)

    seen: set[Path] = set()
    for path, root, explicit in files:
        rel = path.relative_to(root).as_posix()
        if _bad_text(rel):  # e.g. a file name in bytes that are not UTF-8: no id, no report text
            shown = rel.encode("utf-8", "replace").decode("utf-8")
            found.items.append(ManifestError(f"{shown}: the file name {_bad_text(rel)}", shown))
            continue
        if not explicit and globs and not any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(path.name, g) for g in globs):
            found.skipped.append((path, "does not match --glob"))
            continue
        try:
            resolved = confine(root, rel, allow_outside) if not explicit else path.resolve()
        except ValueError as exc:  # a symbolic link out of the folder
            found.items.append(ManifestError(f"{path}: {exc}", rel))
            continue
        resolved = resolved.resolve()
        if resolved in stated_by_manifest or resolved in seen:
            continue  # the manifest line states this file's rights
        seen.add(resolved)
        bad_name = _control_chars(rel)
        if bad_name:  # a newline in a file name would become a newline in the id
            found.items.append(ManifestError(f"{rel!r}: the file name {bad_name}; rename the file", _clean_id(rel)))
            continue
        ident = rel.rsplit(".", 1)[0] if "." in Path(rel).name else rel
        # rights the command line stated count as stated (a stored 'unknown' may take them)
        stated = frozenset(k for k, v in (("license", license), ("source", source)) if v is not None)
        found.items.append(
            Entry(
                line_no=0,
                id=ident,
                title="",
                path=path,
                license=license or "unknown",
                source=source or "unspecified",
                base=root,
                stated=stated,
            )
        )

    _unique_ids(found.items)
    for i, item in enumerate(found.items, 1):
        if isinstance(item, Entry):
            item.line_no = i
            if infer and infer_at_parse and item.path is not None:
                item.infer_at_parse = True
            elif infer:
                fill_from_file(item, reader)
    if not found.items:
        raise DiscoverError(
            "nothing to ingest: no manifest line and no document file"
            + (f" matching --glob {' '.join(globs)}" if globs else "")
            + f" under {', '.join(str(p) for p in paths)}"
        )
    return Discovery(
        items=[(i, item) for i, item in enumerate(found.items, 1)], skipped=found.skipped, manifests=manifests
    )


def _walk(root: Path):
    """(file, supported) for the files under root, sorted: supported when its suffix is
    a document type. Hidden files and folders are left out and symbolic links to
    folders are not followed (a loop or an escape)."""
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            yield Path(folder) / name, Path(name).suffix.lower() in DOCUMENT_SUFFIXES


def skipped_summary(skipped: list) -> list[str]:
    """What a folder walk left out, one line per reason, e.g. "skipped 3 files of
    unsupported types: .docx, .png, .json"."""
    lines = []
    globbed = [p for p, why in skipped if why == "does not match --glob"]
    if globbed:
        lines.append(f"skipped {len(globbed)} file(s) that do not match --glob")
    other = [Path(p) for p, why in skipped if why == "unsupported type"]
    manifests = [p for p in other if p.suffix.lower() in MANIFEST_SUFFIXES]
    types = sorted({p.suffix.lower() or "(no suffix)" for p in other if p not in manifests})
    if types:
        n = len(other) - len(manifests)
        lines.append(
            f"skipped {n} file{'s' if n != 1 else ''} of unsupported type{'s' if len(types) != 1 else ''}: "
            + ", ".join(types)
            + f" (scirag reads {', '.join(sorted(DOCUMENT_SUFFIXES))})"
        )
    if manifests:
        lines.append(
            f"skipped {len(manifests)} manifest(s) inside folders (name a manifest on the command line to read it): "
            + ", ".join(p.name for p in manifests[:5])
        )
    return lines


def _unique_ids(items: list) -> None:
    """A discovered file whose id is taken (a.pdf beside a.md, or a manifest id) keeps
    its suffix in the id; if that is taken too, it becomes a failed line naming both."""
    taken: dict[str, str] = {}
    for item in items:
        if isinstance(item, Entry) and "id" in item.stated:
            taken.setdefault(item.id, str(item.path or item.id))
    for k, item in enumerate(items):
        if not isinstance(item, Entry) or "id" in item.stated:
            continue
        ident = item.id
        if ident in taken:
            ident = Path(item.path).relative_to(item.base).as_posix()
        if ident in taken:
            items[k] = ManifestError(f"{item.path}: id '{ident}' is already used by {taken[ident]}", ident)
            continue
        item.id = ident
        taken[ident] = str(item.path)


def read_file_metadata(path: Path, doc=None) -> dict:
    """Citation fields a file states (a PDF's first page and info, a Markdown or HTML
    title); {} when it cannot be read (the parser reports that). doc: the file's
    ParsedDocument when it was parsed already, so the file is not read a second time
    (the layout engine read the PDF fields in its pass; Markdown and HTML state the title)."""
    suffix = path.suffix.lower()
    found: dict = {}
    if suffix == ".pdf" and doc is not None and doc.meta is not None:
        found = {f: doc.meta[f] for f in METADATA_FIELDS if doc.meta.get(f)}
    elif suffix == ".pdf":  # an engine that does not read them (pypdf, pdfplumber, docling)
        from scirag.ingest.pdf.meta import read_pdf_meta

        meta = read_pdf_meta(path)
        found = {f: getattr(meta, f) for f in METADATA_FIELDS if getattr(meta, f)}
    elif suffix in (".md", ".markdown", ".html", ".htm"):
        from scirag.ingest.parse import ParseError, parse_file

        try:
            title = (doc or parse_file(path)).title
        except (ParseError, OSError):
            title = None
        if title:
            found["title"] = title.strip()
    return found


def fill_from_file(entry: Entry, reader=None, found: dict | None = None) -> Entry:
    """Citation fields the manifest did not state, read from the file; each one taken is
    listed in entry.inferred. A file that cannot be read is left for the parser to report.
    ``reader`` (a scirag.ingest.parse_guard.GuardedParser) reads the file within the parse
    budget, in its worker process; ``found``: the fields the file's parse read already
    (ParsedDocument.meta), so the file is not read again."""
    entry.infer_at_parse = False
    if entry.path is None:
        if "title" not in entry.stated and "title" not in entry.inferred:
            entry.inferred.append("title")  # the manifest's fallback: the id
        return entry
    if found is None:
        found = reader.metadata(entry.path) if reader is not None else read_file_metadata(entry.path)
    for name in METADATA_FIELDS:
        if name in entry.stated or name not in found:
            continue
        setattr(entry, name, found[name])
        entry.inferred.append(name)
    if "arxiv_id" in entry.stated and "doi" in entry.inferred and entry.doi.lower().startswith("10.48550/arxiv."):
        entry.doi = f"10.48550/arXiv.{entry.arxiv_id}"  # the arXiv DOI follows the stated id
    if "title" not in entry.stated and "title" not in entry.inferred:
        # nothing stated, nothing read: the file name (the same for a file found in a
        # folder and for a manifest line without a title, so --manifest-out repeats the run)
        entry.title = entry.path.stem.replace("_", " ")
        entry.inferred.append("title")
    return entry


def manifest_lines(found: Discovery, out: Path) -> list[str]:
    """The inferred manifest as pure JSONL (one JSON object a line, nothing else), paths
    relative to out's folder. A line that failed (an unreadable file name, an id taken
    twice) is left out: the command reports it.

    Stated fields are top-level keys; what was read from each file is under "inferred"
    for review only: it is read again on every run, and a value copied to a top-level
    key becomes stated (a correction)."""
    lines = []
    folder = out.resolve().parent
    for _line_no, item in found.items:
        if isinstance(item, ManifestError):
            continue
        obj: dict = {"id": item.id}
        if item.path is not None:
            p = item.path.resolve()
            obj["path"] = p.relative_to(folder).as_posix() if p.is_relative_to(folder) else str(p)
        else:
            obj["text"] = item.text
            obj["format"] = item.fmt
        for key in ("title", "authors", "year", "doi", "arxiv_id", "journal"):
            if key in item.stated:
                obj[key] = getattr(item, key)
        obj["license"] = item.license
        obj["source"] = item.source
        if item.inferred:
            obj["inferred"] = {f: getattr(item, f) for f in item.inferred}
        lines.append(json.dumps(obj, ensure_ascii=False))
    return lines


def write_manifest(found: Discovery, out: Path) -> list[str]:
    """Writes the inferred manifest to out; returns the paths it had to write absolute
    (outside out's folder: a re-run needs --allow-outside)."""
    lines = manifest_lines(found, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return [json.loads(x)["path"] for x in lines if Path(json.loads(x).get("path", "")).is_absolute()]
