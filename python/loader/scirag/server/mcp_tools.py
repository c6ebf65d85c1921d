"""The MCP tool set: retrieve, answer, get_chunk, get_document, current_scope.

Each tool calls the same Service as REST, as the caller's database role: over
streamable HTTP (/mcp) the role comes from the API key the ASGI guard in app.py
checked (it puts the Identity into the request scope); over stdio (`scirag mcp`) it is
the role given on the command line. Errors become tool errors carrying the same
stable codes as REST's problem+json.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from scirag.server.keys import Identity
from scirag.server.service import (
    MAX_K,
    MAX_QUESTION_CHARS,
    PROFILE_DESCRIPTION,
    PROFILE_PATTERN,
    Problem,
    Scope,
    Service,
    compact_answer,
    error_label,
    problem_for,
)

log = logging.getLogger("scirag.server.mcp")
BYO_HEADER = "x-llm-api-key"
IDENTITY_STATE = "scirag_identity"
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

INSTRUCTIONS = (
    "scirag answers questions from a corpus of scientific documents inside PostgreSQL. "
    "Use `retrieve` for ranked, cited evidence chunks; `answer` for a grounded answer with numbered "
    "citations (it abstains when the sources do not support an answer); `get_chunk` to read a cited chunk "
    "with its neighbours; `get_document` for a document's metadata and outline; `current_scope` to see "
    "which licenses and sources you may see. Scope parameters can only narrow what your role may see."
)

Licenses = Annotated[
    list[str] | None,
    Field(
        description="narrow to these license classes (subset of public, open_commercial, open_noncommercial, "
        "restricted, unknown); [] = nothing; omitted = the default public,open_commercial"
    ),
]
Sources = Annotated[list[str] | None, Field(description="narrow to these sources; omitted = any in your ceiling")]
Excluded = Annotated[list[str] | None, Field(description="documents to leave out (manifest ids or numeric ids)")]
CampaignName = Annotated[str, Field(description="campaign name", min_length=1, max_length=200)]
Retracted = Annotated[bool | None, Field(description="true drops retracted documents from every layer")]
Documents = Annotated[
    list[str] | None, Field(description="only these documents (manifest ids or numeric ids): ask one paper")
]
Years = Annotated[list[str] | None, Field(description="only these years or ranges, e.g. 2019, 2015-2018, 2020-")]
Detail = Annotated[
    Literal["compact", "full"],
    Field(
        description="compact (default): the results only; full: also the content-free trace (and, for "
        "answer, the evidence, sources and checks)"
    ),
]


def build_mcp(service: Service, default_identity: Identity | None = None) -> MCPServer:
    """The MCP server. ``default_identity`` serves stdio (no HTTP request); over HTTP the
    guard's Identity is required."""
    mcp = MCPServer("scirag", instructions=INSTRUCTIONS, log_level="WARNING")

    def identity(ctx: Context) -> Identity:
        request = ctx.request_context.request if ctx.request_context else None
        if request is not None:
            ident = request.scope.get("state", {}).get(IDENTITY_STATE)
            if ident is None:
                raise ToolError("unauthorized: no API key")
            return ident
        if default_identity is None:
            raise ToolError("unauthorized: no identity for this transport")
        return default_identity

    async def call(coro_fn, ctx: Context, tool: str):
        ident = identity(ctx)
        try:
            return await coro_fn(ident)
        except Exception as exc:  # every failure becomes one tool error with a stable code
            p = problem_for(exc)
            log.warning("mcp tool=%s key=%s error=%s code=%s", tool, ident.name, error_label(exc), p.code)
            if p.code == "unavailable" and await service.unreachable():
                # the database is down, not busy: say so, and how it is started (issue 25)
                raise ToolError(
                    "unavailable: the database is unreachable; its administrator starts it "
                    "(scirag's own cluster: scripts/db_start.sh); retry this call then"
                ) from None
            raise ToolError(f"{p.code}: {p.detail or p.title}") from None

    def tool(description: str):
        return mcp.tool(description=description, annotations=READ_ONLY, structured_output=True)

    def scope_of(licenses, sources, exclude_documents, exclude_retracted, documents=None, years=None) -> Scope | None:
        if all(v is None for v in (licenses, sources, exclude_documents, exclude_retracted, documents, years)):
            return None
        return Scope(licenses, sources, exclude_documents, exclude_retracted, documents, years)

    @tool(
        description="Ranked, cited evidence chunks for a question, from the documents your role may see "
        "(hybrid keyword + vector retrieval; `layers` gives each chunk's rank per layer). "
        "Returns results (rank, chunk_id, document_id, title, section_path, content, citation); "
        "with detail=full also a content-free trace. k is at most 100."
    )
    async def retrieve(
        question: Annotated[str, Field(description="the question", min_length=1, max_length=MAX_QUESTION_CHARS)],
        ctx: Context,
        k: Annotated[int, Field(description="number of chunks", ge=1, le=MAX_K)] = 10,
        profile: Annotated[str, Field(description=PROFILE_DESCRIPTION, pattern=PROFILE_PATTERN)] = "interactive",
        licenses: Licenses = None,
        sources: Sources = None,
        exclude_documents: Excluded = None,
        exclude_retracted: Retracted = None,
        documents: Documents = None,
        years: Years = None,
        detail: Detail = "compact",
    ) -> dict[str, Any]:
        scope = scope_of(licenses, sources, exclude_documents, exclude_retracted, documents, years)
        out = await call(lambda i: service.retrieve(i, question, k=k, profile=profile, scope=scope), ctx, "retrieve")
        return out if detail == "full" else {"results": out["results"]}

    @tool(
        description="A grounded answer with numbered citations [n] to the sources it used, or an "
        "abstention when the sources in your scope do not support one. Returns answer, "
        "abstained and citations (n -> chunk_id, title, section_path, lines/page); with "
        "detail=full also retrieval (the evidence), sources, checks and a content-free trace."
    )
    async def answer(
        question: Annotated[str, Field(description="the question", min_length=1, max_length=MAX_QUESTION_CHARS)],
        ctx: Context,
        k: Annotated[int | None, Field(description="evidence chunks to retrieve", ge=1, le=MAX_K)] = None,
        licenses: Licenses = None,
        sources: Sources = None,
        exclude_documents: Excluded = None,
        exclude_retracted: Retracted = None,
        documents: Documents = None,
        years: Years = None,
        detail: Detail = "compact",
    ) -> dict[str, Any]:
        scope = scope_of(licenses, sources, exclude_documents, exclude_retracted, documents, years)
        options = {"k": k} if k else {}
        llm_key = None
        headers = ctx.headers or {}
        if headers.get(BYO_HEADER):
            if not identity(ctx).byo_llm:
                raise ToolError("byo_llm_not_allowed: this API key may not bring its own model key")
            llm_key = headers.get(BYO_HEADER)
        out = await call(
            lambda i: service.answer(i, question, options=options, scope=scope, llm_key=llm_key), ctx, "answer"
        )
        return out if detail == "full" else compact_answer(out)

    @tool(
        description="One chunk by id, with its document title, section path, lines or pages, and up to "
        "`context` neighbouring chunks each side, so a citation can be read in context."
    )
    async def get_chunk(
        chunk_id: Annotated[int, Field(description="chunk id (from a citation)", ge=1)],
        ctx: Context,
        context: Annotated[int, Field(description="neighbours each side", ge=0, le=5)] = 1,
    ) -> dict[str, Any]:
        async def run(i):
            row = await service.chunk(i, chunk_id, context=context)
            if row is None:
                raise Problem(404, "not_found", "No such chunk in your scope")
            return row

        return await call(run, ctx, "get_chunk")

    @tool(
        description="A document's metadata (title, authors, year, doi, license, source, retracted) and its "
        "chunk outline (ids, section paths, lines/pages; no text), by numeric or manifest id."
    )
    async def get_document(
        document: Annotated[str, Field(description="numeric document id or manifest id", min_length=1, max_length=256)],
        ctx: Context,
    ) -> dict[str, Any]:
        async def run(i):
            row = await service.document(i, document)
            if row is None:
                raise Problem(404, "not_found", "No such document in your scope")
            return row

        return await call(run, ctx, "get_document")

    @tool(
        description="Your effective scope: role, license classes, sources, excluded-document count and "
        "whether retracted documents are excluded (your ceiling intersected with any narrowing)."
    )
    async def current_scope(
        ctx: Context,
        licenses: Licenses = None,
        sources: Sources = None,
        exclude_documents: Excluded = None,
        exclude_retracted: Retracted = None,
        documents: Documents = None,
        years: Years = None,
    ) -> dict[str, Any]:
        scope = scope_of(licenses, sources, exclude_documents, exclude_retracted, documents, years)
        return await call(lambda i: service.current_scope(i, scope), ctx, "current_scope")

    # -- campaigns (issue 24): an agent can screen a campaign its key's role owns --------
    async def campaign_call(fn, ctx: Context, tool_name: str, *args):
        from starlette.concurrency import run_in_threadpool

        return await call(lambda i: run_in_threadpool(fn, service.dsn, i.role, *args), ctx, tool_name)

    @tool(
        description="The next records of a literature campaign to screen (most likely relevant first, "
        "records a model handed to a person first), the stopping-rule figures and the exclusion reasons."
    )
    async def campaign_next(
        campaign: CampaignName,
        ctx: Context,
        n: Annotated[int, Field(description="records", ge=1, le=50)] = 1,
    ) -> dict[str, Any]:
        from scirag.server import campaigns

        return await campaign_call(campaigns.next_records, ctx, "campaign_next", campaign, n)

    @mcp.tool(
        description="Record a title/abstract screening decision (include, exclude with one of the "
        "campaign's reasons, unsure) on a campaign record; it supersedes any earlier decision.",
        structured_output=True,
    )
    async def campaign_decide(
        campaign: CampaignName,
        record_id: Annotated[int, Field(description="record id (from campaign_next)", ge=1)],
        decision: Literal["include", "exclude", "unsure"],
        ctx: Context,
        reason: Annotated[str | None, Field(description="exclusion reason", max_length=500)] = None,
    ) -> dict[str, Any]:
        from scirag.server import campaigns

        return await campaign_call(campaigns.decide, ctx, "campaign_decide", campaign, record_id, decision, reason)

    @tool(description="PRISMA 2020 counts of a literature campaign and any broken consistency rule.")
    async def campaign_prisma(campaign: CampaignName, ctx: Context) -> dict[str, Any]:
        from scirag.server import campaigns

        return await campaign_call(campaigns.prisma, ctx, "campaign_prisma", campaign)

    return mcp
