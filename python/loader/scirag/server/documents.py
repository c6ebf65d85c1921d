"""REST for the library (issue 25): list documents, delete one, correct its metadata.

GET /v1/documents lists what the caller's scope shows (the reader API,
scirag.documents_visible, so a reader never learns of a document outside it);
DELETE and PATCH call scirag.document_delete / scirag.document_set as the key's role:
the database grants them to scirag_loader only, so a reader key gets 403 forbidden
without a check here. GET /v1/documents/{ref} (metadata and outline) lives in app.py.
"""

from typing import Annotated, Any

from fastapi import FastAPI, Path as PathParam, Query
from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from scirag.server.service import Problem, Scope

MAX_PAGE = 1000  # documents per GET /v1/documents page
LIST_SQL = """SELECT document_id, external_id, title, authors, year, journal, doi, arxiv_id, license, source,
                     retracted, pages, ingested_at::text AS ingested_at, metadata_inferred
              FROM scirag.documents_visible(NULL) ORDER BY document_id LIMIT %s OFFSET %s"""
COUNTS_SQL = """SELECT license, source, count(*) AS documents FROM scirag.documents_visible(NULL)
                GROUP BY license, source ORDER BY license, source"""


class DocumentPatch(BaseModel):
    """Fields to correct; a field left out is unchanged, one set is stated (no longer inferred)."""

    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(None, min_length=1, max_length=4096)
    authors: list[Annotated[str, Field(min_length=1, max_length=4096)]] | None = Field(None, max_length=1000)
    year: int | None = Field(None, ge=0, le=9999)
    journal: str | None = Field(None, max_length=4096)
    doi: str | None = Field(None, max_length=4096)
    arxiv_id: str | None = Field(None, max_length=4096)
    license: str | None = Field(None, max_length=64, description="a license class, any case, or CC0 / CC-BY / CC-BY-NC")
    source: str | None = Field(None, min_length=1, max_length=4096)


def add_document_routes(app: FastAPI, caller, narrow_scope, json_response) -> None:
    """Registers the routes on app; caller / narrow_scope are app.py's dependencies."""
    service = app.state.service

    @app.get("/v1/documents", tags=["v1"], summary="The documents in your scope, with counts per license and source")
    async def list_documents(
        ident: caller,
        scope: narrow_scope,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    ):
        rows, counts = await service.run(ident, [(LIST_SQL, (limit, offset)), (COUNTS_SQL, None)], scope=scope)
        return json_response({"documents": rows, "counts": counts, "limit": limit, "offset": offset})

    @app.delete(
        "/v1/documents/{ref}",
        tags=["v1"],
        summary="Delete a document and everything derived from it, in one transaction (loader keys only)",
    )
    async def delete_document(ref: Annotated[str, PathParam(max_length=256)], ident: caller):
        ((row,),) = await service.run(ident, [("SELECT scirag.document_delete(%s) AS r", (ref,))], scope=Scope())
        if row["r"] is None:
            raise Problem(404, "not_found", "No such document")
        return json_response(row["r"])

    @app.patch("/v1/documents/{ref}", tags=["v1"], summary="Correct a document's metadata (loader keys only)")
    async def patch_document(ref: Annotated[str, PathParam(max_length=256)], body: DocumentPatch, ident: caller):
        changes: dict[str, Any] = body.model_dump(exclude_unset=True)
        if "license" in changes and changes["license"] is not None:
            from scirag.ingest.licenses import normalise_license

            try:
                changes["license"] = normalise_license(changes["license"], "license")[0]
            except ValueError as exc:
                raise Problem(400, "invalid_request", "Invalid request", str(exc)) from None
        if not changes:
            raise Problem(400, "invalid_request", "Invalid request", "give at least one field to set")
        ((row,),) = await service.run(
            ident, [("SELECT scirag.document_set(%s, %s) AS r", (ref, Jsonb(changes)))], scope=Scope()
        )
        if row["r"] is None:
            raise Problem(404, "not_found", "No such document")
        return json_response(row["r"])
