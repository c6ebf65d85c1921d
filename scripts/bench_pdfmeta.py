#!/usr/bin/env python3
"""Metadata read from PDFs (scirag.ingest.pdf.meta) against a manifest's ground truth.

Usage: .venv/bin/python scripts/bench_pdfmeta.py [FOLDER]   (default ../shared/data/papers)

Prints per paper what was read and, over the folder: title exact match, first-author
match (both case- and whitespace-insensitive), year match, and the arXiv id / DOI
found among those printed on page 1 (the arXiv id the manifest's arXiv DOI names).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "loader"))
from scirag.ingest.pdf.meta import DOI_RE, read_pdf_meta


def norm(text) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(text or ""))).strip().casefold()


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared/data/papers")
    rows = [json.loads(x) for x in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    n = title_ok = author_ok = authors3_ok = year_ok = arxiv_ok = arxiv_n = doi_ok = doi_n = 0
    for row in rows:
        pdf = folder / row["path"]
        if pdf.suffix.lower() != ".pdf":
            continue
        n += 1
        meta = read_pdf_meta(pdf)
        t = norm(meta.title) == norm(row.get("title"))
        a = bool(meta.authors) and bool(row.get("authors")) and norm(meta.authors[0]) == norm(row["authors"][0])
        y = meta.year == row.get("year")
        truth3 = [norm(a) for a in (row.get("authors") or [])[:3]]
        authors3_ok += bool(truth3) and [norm(a) for a in meta.authors[: len(truth3)]] == truth3
        title_ok, author_ok, year_ok = title_ok + t, author_ok + a, year_ok + y
        truth_doi = row.get("doi") or ""
        m = re.match(r"10\.48550/arxiv\.(.+)$", truth_doi, re.I)
        if m:  # an arXiv DOI in the manifest: the id is printed in the arXiv stamp
            arxiv_n += 1
            arxiv_ok += (meta.arxiv_id or "").lower() == m.group(1).lower()
        else:  # a publisher DOI: counted only when page 1 prints it
            import pdfplumber

            with pdfplumber.open(str(pdf)) as doc:
                printed = DOI_RE.search(doc.pages[0].extract_text() or "")
            if printed:
                doi_n += 1
                doi_ok += norm(meta.doi) == norm(truth_doi)
        print(
            f"{row['id']:<12} title {'ok ' if t else 'BAD'} author {'ok ' if a else 'BAD'} year {'ok ' if y else 'BAD'}"
            f" | {meta.title!r} | {meta.authors[:3]} | {meta.year} | arXiv {meta.arxiv_id} | doi {meta.doi}"
        )
        if not t:
            print(f"{'':<12} expected title {row.get('title')!r}")
        if not a:
            print(f"{'':<12} expected first author {(row.get('authors') or [None])[0]!r}")
    print(f"\npapers {n}")
    print(f"title exact match      {title_ok / n:.3f} ({title_ok}/{n})")
    print(f"first author match     {author_ok / n:.3f} ({author_ok}/{n})")
    print(
        f"first 3 authors match  {authors3_ok / n:.3f} ({authors3_ok}/{n})   (the manifest's first three names, in order)"
    )
    print(f"year match             {year_ok / n:.3f} ({year_ok}/{n})")
    print(f"arXiv id (printed)     {arxiv_ok}/{arxiv_n}")
    print(f"publisher DOI printed  {doi_ok}/{doi_n}")


if __name__ == "__main__":
    main()
