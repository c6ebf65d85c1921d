"""Recorded API responses for the campaign tests, shaped like the real APIs.

OpenAlex ``GET /works?search=...&page=N&per-page=M`` answers ``{"meta": {"count",
"db_response_time_ms", "page", "per_page"}, "results": [Work...], "group_by": []}``; a
Work has ``id`` (https://openalex.org/W...), ``doi`` (https://doi.org/...), ``title``,
``display_name``, ``publication_year``, ``abstract_inverted_index`` ({word: [positions]}),
``authorships[].author.display_name``, ``primary_location.source.display_name``,
``best_oa_location`` / ``locations[]`` with ``is_oa``, ``landing_page_url``, ``pdf_url``,
``license`` (cc-by, cc-by-nc, ...), ``version``. Crossref ``GET /works?query=...&cursor=*``
answers ``{"status": "ok", "message-type": "work-list", "message": {"items": [...],
"total-results", "items-per-page", "next-cursor"}}`` with ``DOI``, ``title`` [..],
``author[].given/family``, ``issued.date-parts``, ``container-title`` [..], ``abstract``
(JATS), ``license[].URL``, ``link[].URL/content-type``. arXiv ``GET /api/query`` answers
an Atom feed with ``opensearch:totalResults`` and ``entry`` elements (``id``
http://arxiv.org/abs/ID, ``title``, ``summary``, ``published``, ``author/name``,
``link[@title=pdf]``, ``arxiv:doi``).
"""

from __future__ import annotations

import io


def inverted(text: str) -> dict:
    index: dict[str, list[int]] = {}
    for i, w in enumerate(text.split()):
        index.setdefault(w, []).append(i)
    return index


def oa_work(n: int, title: str, year: int, doi: str | None = None, abstract: str = "", pdf: str | None = None,
            license: str | None = "cc-by") -> dict:  # fmt: skip
    loc = {
        "is_oa": bool(pdf),
        "landing_page_url": f"https://example.org/landing/{n}",
        "pdf_url": pdf,
        "source": {"id": "https://openalex.org/S1", "display_name": "Fuel"},
        "license": license,
        "license_id": f"https://openalex.org/licenses/{license}" if license else None,
        "version": "publishedVersion",
    }
    return {
        "id": f"https://openalex.org/W{n}",
        "doi": f"https://doi.org/{doi}" if doi else None,
        "title": title,
        "display_name": title,
        "publication_year": year,
        "publication_date": f"{year}-03-01",
        "type": "article",
        "abstract_inverted_index": inverted(abstract) if abstract else None,
        "authorships": [
            {"author_position": "first", "author": {"id": "https://openalex.org/A1", "display_name": "Ada Lovelace"}},
            {"author_position": "last", "author": {"id": "https://openalex.org/A2", "display_name": "Alan Turing"}},
        ],
        "primary_location": loc,
        "best_oa_location": loc if pdf else None,
        "locations": [loc],
        "open_access": {"is_oa": bool(pdf), "oa_status": "gold" if pdf else "closed", "oa_url": pdf},
        "cited_by_count": 3,
    }


def oa_page(works: list[dict], count: int, page: int, per_page: int = 200) -> dict:
    return {
        "meta": {"count": count, "db_response_time_ms": 31, "page": page, "per_page": per_page, "groups_count": None},
        "results": works,
        "group_by": [],
    }


def crossref_item(doi: str, title: str, year: int, abstract: str | None = None, pdf: str | None = None) -> dict:
    item = {
        "DOI": doi,
        "title": [title],
        "author": [{"given": "Grace", "family": "Hopper", "sequence": "first", "affiliation": []}],
        "issued": {"date-parts": [[year, 5]]},
        "container-title": ["Biomass and Bioenergy"],
        "type": "journal-article",
        "license": [
            {
                "URL": "http://creativecommons.org/licenses/by-nc/4.0/",
                "start": {"date-parts": [[year, 1, 1]]},
                "content-version": "vor",
                "delay-in-days": 0,
            }
        ],
        "link": [
            {
                "URL": pdf,
                "content-type": "application/pdf",
                "content-version": "vor",
                "intended-application": "text-mining",
            }
        ]
        if pdf
        else [],
    }
    if abstract:
        item["abstract"] = f"<jats:p>{abstract}</jats:p>"
    return item


def crossref_page(items: list[dict], total: int, next_cursor: str) -> dict:
    return {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "facets": {},
            "next-cursor": next_cursor,
            "total-results": total,
            "items": items,
            "items-per-page": 100,
            "query": {"start-index": 0, "search-terms": "straw ash"},
        },
    }


def arxiv_feed(entries: list[tuple[str, str, str, int, str | None]], total: int) -> str:
    """entries: (arxiv id, title, summary, year, doi)."""
    body = []
    for aid, title, summary, year, doi in entries:
        doi_el = f'<arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">{doi}</arxiv:doi>' if doi else ""
        body.append(
            f"""<entry><id>http://arxiv.org/abs/{aid}</id><updated>{year}-01-02T00:00:00Z</updated>
<published>{year}-01-01T00:00:00Z</published><title>{title}</title><summary>{summary}</summary>
<author><name>Emmy Noether</name></author>{doi_el}
<link href="http://arxiv.org/abs/{aid}" rel="alternate" type="text/html"/>
<link title="pdf" href="http://arxiv.org/pdf/{aid}" rel="related" type="application/pdf"/>
<arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="physics.app-ph" scheme="http://arxiv.org/schemas/atom"/>
</entry>"""
        )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
<title type="html">ArXiv Query</title><id>http://arxiv.org/api/x</id><updated>2025-01-01T00:00:00-05:00</updated>
<opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{total}</opensearch:totalResults>
<opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
<opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">100</opensearch:itemsPerPage>
{"".join(body)}
</feed>"""


def tiny_pdf(pages: int = 2) -> bytes:
    from pypdf import PdfWriter

    w = PdfWriter()
    for _ in range(pages):
        w.add_blank_page(width=200, height=200)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def unpaywall_response(doi: str, pdf: str | None, license: str | None = "cc-by", landing: str | None = None) -> dict:
    """Unpaywall ``GET /v2/{doi}?email=...``: the DOI object with ``best_oa_location``
    and ``oa_locations`` (``url``, ``url_for_pdf``, ``url_for_landing_page``, ``license``,
    ``version``, ``host_type``, ...)."""
    landing = landing or f"https://example.org/landing/{doi}"
    loc = {
        "endpoint_id": None,
        "evidence": "open (via page says license)",
        "host_type": "publisher",
        "is_best": True,
        "license": license,
        "oa_date": "2020-05-01",
        "pmh_id": None,
        "repository_institution": None,
        "updated": "2024-01-01T00:00:00.000000",
        "url": pdf or landing,
        "url_for_landing_page": landing,
        "url_for_pdf": pdf,
        "version": "publishedVersion",
    }
    return {
        "doi": doi,
        "doi_url": f"https://doi.org/{doi}",
        "title": "A record",
        "genre": "journal-article",
        "is_paratext": False,
        "is_oa": bool(pdf),
        "oa_status": "gold" if pdf else "closed",
        "has_repository_copy": False,
        "journal_name": "Fuel",
        "publisher": "Elsevier BV",
        "year": 2020,
        "best_oa_location": loc if pdf else None,
        "first_oa_location": loc if pdf else None,
        "oa_locations": [loc] if pdf else [],
        "oa_locations_embargoed": [],
        "z_authors": [{"given": "Ada", "family": "Lovelace", "sequence": "first"}],
        "updated": "2024-01-01T00:00:00.000000",
        "data_standard": 2,
    }


def chat_completion(content: str) -> dict:
    """An OpenAI-compatible ``POST /chat/completions`` answer carrying ``content``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1735689600,
        "model": "llama3.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140},
    }
