"""`scirag enrich`: Crossref metadata, retraction status and citation links for
documents that carry a DOI.

Enrichment never blocks ingestion: it is its own command, it fetches outside any
transaction, and it writes each document in a transaction of its own, so one bad
answer (a 404, malformed JSON, a rate limit that outlasts the retries) costs that
document only and leaves its previous record in place.

What a document gets: ``documents.crossref`` (the sparse record of
scirag.crossref.sparse_record, with ``status`` and ``fetched_at``), ``journal`` from
the record's container title, ``retracted`` from its update relations (the scope
triggers copy it to chunks, postings and graph rows, so the next answer leaves the
document out without any re-ingest), and one ``document_citations`` row per
referenced DOI (origin ``crossref``), resolved to a corpus document when one has
that DOI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

import psycopg

from scirag.crossref import CrossrefClient, CrossrefError, normalize_doi, sparse_record

# Keys that change on every fetch and so never count as "what changed".
VOLATILE = ("fetched_at",)


@dataclass
class EnrichResult:
    document_id: int
    external_id: str
    doi: str | None
    status: str  # enriched | unchanged | not_found | error | skipped
    changes: list[str] = field(default_factory=list)
    retracted: bool | None = None
    error: str | None = None
    cached: bool = False

    def line(self) -> str:
        what = self.status
        if self.changes:
            what += f" ({', '.join(self.changes)})"
        if self.error:
            what += f": {self.error}"
        if self.retracted:
            what += " [RETRACTED]"
        return f"{self.external_id} doi:{self.doi}: {what}{' (cache)' if self.cached else ''}"


def _stable(record: dict | None) -> dict:
    return {k: v for k, v in (record or {}).items() if k not in VOLATILE}


def describe_changes(old: dict | None, new: dict) -> list[str]:
    """Human-readable list of what differs between two stored records."""
    old, new = _stable(old), _stable(new)
    if not old:
        return ["new record"]
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "references":
            added, removed = len(set(b or []) - set(a or [])), len(set(a or []) - set(b or []))
            out.append(f"references +{added}/-{removed}")
        elif key in ("updated_by", "update_to", "licenses"):
            out.append(key)
        else:
            out.append(f"{key}: {a!r} -> {b!r}")
    return out


def select_documents(
    conn: psycopg.Connection,
    external_ids: list[str] | None = None,
    missing_only: bool = False,
    limit: int | None = None,
    by_title: bool = False,
) -> list[tuple]:
    """(id, external_id, doi, crossref, title, first author, year, metadata_inferred) of the documents to
    enrich: those with a DOI, and with by_title those without one too. Unknown external
    ids raise."""
    cols = "id, external_id, doi, crossref, title, authors[1], year, metadata_inferred"
    if external_ids:
        rows = conn.execute(
            f"SELECT {cols} FROM scirag.documents WHERE external_id = ANY (%s) ORDER BY id", (external_ids,)
        ).fetchall()
        unknown = sorted(set(external_ids) - {r[1] for r in rows})
        if unknown:
            raise ValueError(f"no document with external id {', '.join(map(repr, unknown))}")
    else:
        rows = conn.execute(
            f"""SELECT {cols} FROM scirag.documents
                WHERE (doi IS NOT NULL OR %s) AND (NOT %s OR crossref IS NULL) ORDER BY id LIMIT %s""",
            (by_title, missing_only, limit),
        ).fetchall()
    conn.commit()
    return rows


def trusted(record: dict) -> bool:
    """A record that may set retraction, journal and citations: found, and not the
    record of a guessed DOI that names another paper."""
    return record.get("status") == "ok" and not record.get("doi_doubtful")


def store(conn: psycopg.Connection, document_id: int, record: dict, references: list[str] | None) -> None:
    """Writes one document's record, retraction status, journal and Crossref citations,
    in the current transaction (the caller commits)."""
    conn.execute(
        """UPDATE scirag.documents
           SET crossref = %s::jsonb,
               retracted = coalesce((%s::jsonb ->> 'retracted')::boolean, retracted),
               journal = coalesce(%s, journal)
           WHERE id = %s""",
        (
            json.dumps(record),
            json.dumps(record) if trusted(record) else "{}",
            record.get("journal") if trusted(record) else None,
            document_id,
        ),
    )
    if references is None or not trusted(record):
        return
    # The reference list is the record's: what Crossref no longer lists goes, text-found
    # citations (origin text, graph extraction) stay as they are.
    conn.execute(
        """DELETE FROM scirag.document_citations
           WHERE document_id = %s AND origin = 'crossref' AND cited_doi <> ALL (%s::text[])""",
        (document_id, references),
    )
    conn.execute(
        """INSERT INTO scirag.document_citations (document_id, cited_doi, origin)
           SELECT %s, doi, 'crossref' FROM unnest(%s::text[]) AS doi
           ON CONFLICT (document_id, cited_doi) DO NOTHING""",
        (document_id, references),
    )
    # Resolve against the corpus now; the lowest id wins when a DOI is duplicated
    # (doctor reports duplicates).
    conn.execute(
        """UPDATE scirag.document_citations c SET cited_document_id = r.id
           FROM (SELECT DISTINCT ON (lower(doi)) lower(doi) AS doi, id FROM scirag.documents
                 WHERE doi IS NOT NULL ORDER BY lower(doi), id) r
           WHERE c.document_id = %s AND r.doi = c.cited_doi AND r.id <> c.document_id
             AND c.cited_document_id IS DISTINCT FROM r.id""",
        (document_id,),
    )


def corrections(record: dict, title: str, inferred: list[str], matched: bool) -> dict:
    """What Crossref may correct: citation fields that ingestion guessed from the file
    (documents.metadata_inferred) and that the record states; a manifest-stated field is
    never touched. A guessed DOI is trusted only when the record's title matches the
    document's: otherwise it is flagged (doi_doubtful) and nothing is overwritten."""
    import difflib
    from scirag.crossref import title_key

    if not inferred and not matched:
        return {}
    fixes: dict = {"inferred": list(inferred)}
    if "doi" in inferred and record.get("title"):
        similar = difflib.SequenceMatcher(None, title_key(title or ""), title_key(record["title"])).ratio()
        if similar < 0.8:  # a wrong guess would overwrite this paper with another one
            return {"doi_doubtful": True}
        fixes["inferred"].remove("doi")
    for key, value in (
        ("title", record.get("title")),
        ("authors", record.get("authors")),
        ("year", int(record["published"][:4]) if record.get("published") else None),
    ):
        if key in inferred and value:
            fixes[key] = value
            fixes["inferred"].remove(key)
    return fixes if fixes["inferred"] != list(inferred) else {}


def apply_corrections(conn: psycopg.Connection, document_id: int, fixes: dict) -> None:
    if "inferred" not in fixes:
        return
    conn.execute(
        """UPDATE scirag.documents
           SET title = coalesce(%s, title), authors = coalesce(%s, authors), year = coalesce(%s, year),
               metadata_inferred = %s
           WHERE id = %s""",
        (fixes.get("title"), fixes.get("authors"), fixes.get("year"), fixes["inferred"], document_id),
    )


def enrich_one(
    conn: psycopg.Connection,
    client: CrossrefClient,
    row: tuple,
    *,
    check_notices: bool = True,
    use_cache: bool = True,
    by_title: bool = False,
    now: Callable[[], datetime] | None = None,
) -> EnrichResult:
    doc_id, external_id, raw_doi, old, title, author, year, inferred = row
    doi = normalize_doi(raw_doi)
    matched = None
    if doi is None and by_title and raw_doi is None:
        # No DOI: a bibliographic search, accepted only on a close title (and year) match.
        found = client.search(title, author, year, use_cache=use_cache)
        if found.status == "error":
            return EnrichResult(doc_id, external_id, None, "error", error=found.error)
        if found.status == "not_found":
            return EnrichResult(
                doc_id, external_id, None, "skipped", error="no DOI, and no Crossref work with this title"
            )
        doi, matched = found.doi, "bibliographic"
    if doi is None:
        return EnrichResult(doc_id, external_id, raw_doi, "skipped", error="no valid DOI")
    fetched_at = (now or (lambda: datetime.now(timezone.utc)))().isoformat(timespec="seconds")
    # Network first, outside any transaction: a slow Crossref never holds locks.
    got = client.work(doi, use_cache=use_cache)
    if got.status == "error":
        return EnrichResult(doc_id, external_id, doi, "error", error=got.error)
    if got.status == "not_found":
        if (old or {}).get("status") == "ok":
            # Crossref knew it before: keep that record rather than forget it on one 404.
            return EnrichResult(
                doc_id,
                external_id,
                doi,
                "not_found",
                error="Crossref has no record now; kept the previous one",
                retracted=old.get("retracted"),
                cached=got.cached,
            )
        record = {"status": "not_found", "doi": doi, "fetched_at": fetched_at}
        refs = None
    else:
        record = sparse_record(got.message)
        if check_notices and not record.get("retracted"):
            # Older records carry no updated-by: ask which notices update this DOI.
            try:
                notices = client.notices(doi, use_cache=use_cache)
            except CrossrefError as exc:  # a failed notice lookup must not lose the work record
                notices, record["notices_error"] = [], str(exc)[:200]
            if notices:
                record = sparse_record(got.message, notices)
        record = {"status": "ok", **record, "fetched_at": fetched_at}
        if matched:
            record["matched_by"] = matched
        refs = record.get("references", [])
    changes = describe_changes(old, record)
    fixes = corrections(record, title, list(inferred or []), matched is not None) if record["status"] == "ok" else {}
    if fixes.get("doi_doubtful"):
        record["doi_doubtful"] = True
    changes += [f"{k} from Crossref" for k in fixes if k in ("title", "authors", "year")]
    try:
        if fixes:
            apply_corrections(conn, doc_id, fixes)
        if matched:
            # the matched DOI becomes the document's, so citations can resolve to it
            conn.execute("UPDATE scirag.documents SET doi = %s WHERE id = %s AND doi IS NULL", (doi, doc_id))
        store(conn, doc_id, record, refs)
        conn.commit()
    except psycopg.Error as exc:
        conn.rollback()
        return EnrichResult(doc_id, external_id, doi, "error", error=f"database: {str(exc).strip()}")
    status = "not_found" if record["status"] == "not_found" else ("enriched" if changes else "unchanged")
    if record.get("doi_doubtful"):
        changes.append("DOI doubtful: Crossref's title is another paper's; record kept, not applied")
    return EnrichResult(
        doc_id,
        external_id,
        doi,
        status,
        changes,
        record.get("retracted") if trusted(record) else None,
        cached=got.cached,
    )


def enrich_documents(
    conn: psycopg.Connection,
    client: CrossrefClient,
    *,
    external_ids: list[str] | None = None,
    missing_only: bool = False,
    limit: int | None = None,
    check_notices: bool = True,
    use_cache: bool = True,
    by_title: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[EnrichResult]:
    """Enriches every selected document, each in its own transaction; returns one result
    each. by_title: documents without a DOI are looked up by title, first author and year."""
    rows = select_documents(conn, external_ids, missing_only, limit, by_title)
    results = []
    for i, row in enumerate(rows, 1):
        res = enrich_one(conn, client, row, check_notices=check_notices, use_cache=use_cache, by_title=by_title)
        results.append(res)
        if progress:
            progress(f"[{i}/{len(rows)}] {res.line()}")
    # Documents ingested after an earlier enrichment resolve the citations that name them.
    from scirag.graph.extract import resolve_citations

    resolve_citations(conn)
    conn.commit()
    return results


def citation_counts(conn: psycopg.Connection) -> dict:
    row = conn.execute(
        """SELECT count(*) FILTER (WHERE cited_document_id IS NOT NULL),
                  count(*) FILTER (WHERE cited_document_id IS NULL)
           FROM scirag.document_citations"""
    ).fetchone()
    conn.commit()
    return {"resolved": row[0], "unresolved": row[1]}


def summary(results: list[EnrichResult]) -> dict:
    out = {s: 0 for s in ("enriched", "unchanged", "not_found", "error", "skipped")}
    for r in results:
        out[r.status] += 1
    out["retracted"] = sum(1 for r in results if r.retracted)
    return out
