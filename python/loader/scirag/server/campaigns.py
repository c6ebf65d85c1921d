"""Campaign steps behind the HTTP and MCP doors (issue 24): the next records to
screen, a decision, the PRISMA counts. Each call opens its own connection, acts as
the API key's role (SET ROLE) so the campaign tables' row-level security decides
what it sees: a role that is not a member of a campaign's owner role finds no such
campaign, a reader role holds no privilege on campaigns at all (403)."""

from typing import Annotated, Any, Literal

import psycopg
from psycopg import sql
from pydantic import BaseModel, ConfigDict, Field

from scirag import campaign
from scirag.server.service import Problem

STATEMENT_TIMEOUT_MS = 60_000


def _conn(dsn: str, role: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn)
    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(STATEMENT_TIMEOUT_MS),))
    conn.commit()
    return conn


def _get(conn, name: str) -> campaign.Campaign:
    try:
        return campaign.get(conn, name)
    except campaign.CampaignError as exc:
        raise Problem(404, "not_found", "No such campaign for your role", str(exc)) from None


def next_records(dsn: str, role: str, name: str, n: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        rows, stop, model, training = campaign.next_to_screen(conn, c, n)
        return {
            "campaign": c.name,
            "records": rows,
            "stopping": stop,
            "model": model,
            "training_size": training,
            "exclusion_reasons": c.exclusion_reasons,
        }


def decide(dsn: str, role: str, name: str, record_id: int, decision: str, reason: str | None) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        try:
            did = campaign.decide(conn, c, record_id, decision, reason)
        except campaign.CampaignError as exc:
            raise Problem(400, "invalid_argument", "Invalid argument", str(exc)) from None
        return {"decision_id": did, "record_id": record_id, "decision": decision, "reason": reason}


def prisma(dsn: str, role: str, name: str) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        counts = campaign.prisma_counts(conn, c)
        return {"campaign": c.name, "counts": counts, "violations": campaign.prisma_violations(counts)}


# -- the steps before and after screening: a campaign from a topic to verified PDFs -----
# Each call does a bounded amount of work (pages, records) and says whether more waits:
# the steps resume from what the database holds, so a client calls again until done.
# Outbound requests go to the base URLs of the server's environment (SCIRAG_OPENALEX_URL,
# ...); files go under the server's SCIRAG_CAMPAIGNS_DIR only, never a caller's path.


def create(dsn: str, role: str, spec: dict) -> dict:
    with _conn(dsn, role) as conn:
        try:
            c = campaign.create(
                conn,
                spec["name"],
                spec["query"],
                spec.get("years"),
                spec.get("max_records") or 2000,
                spec.get("mailto"),
                spec.get("sources") or ("openalex", "crossref", "arxiv"),
                spec.get("reasons"),
                spec.get("criteria"),
                minilm=spec.get("minilm") or 0.0,
            )
        except campaign.CampaignError as exc:
            code = 409 if "exists already" in str(exc) else 400
            raise Problem(
                code, "conflict" if code == 409 else "invalid_argument", "Invalid campaign", str(exc)
            ) from None
        return _describe(c)


def _describe(c: campaign.Campaign) -> dict:
    return {
        "campaign": c.name,
        "id": c.id,
        "owner_role": c.owner_role,
        "query": c.query,
        "years": [c.year_from, c.year_to],
        "max_records": c.max_records,
        "sources": c.sources,
        "exclusion_reasons": c.exclusion_reasons,
        "criteria": c.criteria,
        "screen_minilm": c.screen_minilm,
    }


def discover(dsn: str, role: str, name: str, max_pages: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        said: list[str] = []
        summary = campaign.discover(conn, c, echo=said.append, max_pages=max_pages)
        return {
            "campaign": c.name,
            "sources": summary,
            "done": all(s["done"] for s in summary.values()),
            "messages": said,
            "counts": campaign.prisma_counts(conn, c),
        }


def resolve(dsn: str, role: str, name: str, max_records: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        counts = campaign.resolve(conn, c, echo=lambda m: None, limit=max_records)
        return {"campaign": c.name, **counts, "done": counts["remaining"] == 0}


def fetch(dsn: str, role: str, name: str, max_records: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        counts = campaign.fetch(conn, c, campaign.folder_for(c), echo=lambda m: None, limit=max_records)
        return {"campaign": c.name, **counts, "done": counts["remaining"] == 0}


def reports(dsn: str, role: str, name: str, n: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        return {"campaign": c.name, "reports": campaign.reports_to_assess(conn, c, n), "reasons": c.exclusion_reasons}


def assess(dsn: str, role: str, name: str, record_id: int, decision: str, reason: str | None) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        try:
            eid = campaign.assess(conn, c, record_id, decision, reason)
        except campaign.CampaignError as exc:
            raise Problem(400, "invalid_argument", "Invalid argument", str(exc)) from None
        return {"eligibility_id": eid, "record_id": record_id, "decision": decision, "reason": reason}


def prisma_svg(dsn: str, role: str, name: str) -> str:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        return campaign.prisma_svg(campaign.prisma_counts(conn, c), c.name)


Source = Literal["openalex", "crossref", "arxiv"]


class CampaignIn(BaseModel):
    """A new campaign, owned by your key's role (only members of that role see it)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    query: str = Field(min_length=1, max_length=2000, description="words, AND, OR, NOT, parentheses, quoted phrases")
    years: str | None = Field(None, max_length=20, description="FROM-TO, FROM-, -TO or one year")
    max_records: int = Field(2000, ge=1, le=100_000, description="records kept per source")
    mailto: str | None = Field(None, max_length=200, description="contact e-mail for the APIs' polite pools")
    sources: list[Source] = Field(["openalex", "crossref", "arxiv"], min_length=1, max_length=3)
    reasons: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(None, max_length=30)
    criteria: str | None = Field(None, max_length=5000, description="eligibility criteria in words")
    minilm: float = Field(0.0, ge=0.0, le=4.0, description="weight of MiniLM embeddings beside TF-IDF in screening")


class AssessIn(BaseModel):
    """A full-text eligibility decision on a retrieved report (supersedes any earlier one)."""

    model_config = ConfigDict(extra="forbid")
    record_id: int = Field(ge=1)
    decision: Literal["eligible", "exclude"]
    reason: str | None = Field(None, max_length=500, description="required for exclude: one of the campaign's reasons")


class DiscoverIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_pages: int = Field(5, ge=1, le=50, description="result pages fetched by this call, over all sources")


class StepIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_records: int = Field(20, ge=1, le=500, description="records handled by this call")


def add_step_routes(app, caller, json_response) -> None:
    """REST: create a campaign, discover, resolve, fetch (bounded steps), the PRISMA SVG."""
    from fastapi import Path as PathParam, Query
    from fastapi.responses import Response
    from starlette.concurrency import run_in_threadpool

    dsn = app.state.service.dsn
    Name = Annotated[str, PathParam(min_length=1, max_length=200)]

    @app.post("/v1/campaigns", tags=["campaigns"], summary="Create a literature campaign owned by your role")
    async def campaign_new(body: CampaignIn, ident: caller):
        return json_response(await run_in_threadpool(create, dsn, ident.role, body.model_dump()), status_code=201)

    @app.post("/v1/campaigns/{name}/discover", tags=["campaigns"], summary="Search the sources (a bounded step)")
    async def campaign_discover(name: Name, ident: caller, body: DiscoverIn | None = None):
        body = body or DiscoverIn()
        return json_response(await run_in_threadpool(discover, dsn, ident.role, name, body.max_pages))

    @app.post("/v1/campaigns/{name}/resolve", tags=["campaigns"], summary="Open-access locations of included records")
    async def campaign_resolve(name: Name, ident: caller, body: StepIn | None = None):
        body = body or StepIn()
        return json_response(await run_in_threadpool(resolve, dsn, ident.role, name, body.max_records))

    @app.post("/v1/campaigns/{name}/fetch", tags=["campaigns"], summary="Download and verify PDFs (a bounded step)")
    async def campaign_fetch(name: Name, ident: caller, body: StepIn | None = None):
        body = body or StepIn()
        return json_response(await run_in_threadpool(fetch, dsn, ident.role, name, body.max_records))

    @app.get(
        "/v1/campaigns/{name}/reports", tags=["campaigns"], summary="Retrieved reports awaiting full-text assessment"
    )
    async def campaign_reports(name: Name, ident: caller, n: Annotated[int, Query(ge=1, le=100)] = 10):
        return json_response(await run_in_threadpool(reports, dsn, ident.role, name, n))

    @app.post("/v1/campaigns/{name}/eligibility", tags=["campaigns"], summary="Record a full-text eligibility decision")
    async def campaign_assess(name: Name, body: AssessIn, ident: caller):
        args = (dsn, ident.role, name, body.record_id, body.decision, body.reason)
        return json_response(await run_in_threadpool(assess, *args))

    @app.get("/v1/campaigns/{name}/prisma.svg", tags=["campaigns"], summary="PRISMA 2020 flow diagram")
    async def campaign_prisma_svg(name: Name, ident: caller):
        svg = await run_in_threadpool(prisma_svg, dsn, ident.role, name)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


def add_step_tools(mcp, campaign_call, campaign_name) -> None:
    """MCP: the same steps as tools (an agent can run a campaign from topic to PDFs)."""
    from mcp.server.mcpserver import Context

    @mcp.tool(
        description="Create a literature campaign owned by your key's role: a search query (words, AND, OR, "
        "NOT, parentheses, quoted phrases), optional years FROM-TO, max records per source, sources, "
        "exclusion reasons and eligibility criteria.",
        structured_output=True,
    )
    async def campaign_new(
        name: campaign_name,
        query: Annotated[str, Field(description="search query", min_length=1, max_length=2000)],
        ctx: Context,
        years: Annotated[str | None, Field(description="FROM-TO", max_length=20)] = None,
        max_records: Annotated[int, Field(description="records kept per source", ge=1, le=100_000)] = 2000,
        mailto: Annotated[str | None, Field(description="contact e-mail for the APIs", max_length=200)] = None,
        sources: Annotated[list[Source] | None, Field(description="discovery sources", max_length=3)] = None,
        reasons: Annotated[list[str] | None, Field(description="exclusion reasons", max_length=30)] = None,
        criteria: Annotated[str | None, Field(description="eligibility criteria", max_length=5000)] = None,
        minilm: Annotated[float, Field(description="weight of MiniLM embeddings in screening", ge=0, le=4)] = 0.0,
    ) -> dict[str, Any]:
        if reasons and any(not r.strip() or len(r) > 200 for r in reasons):
            raise ValueError("reasons: each 1 to 200 characters")
        spec = dict(name=name, query=query, years=years, max_records=max_records, mailto=mailto)
        spec.update(sources=sources, reasons=reasons, criteria=criteria, minilm=minilm)
        return await campaign_call(lambda d, r: create(d, r, spec), ctx, "campaign_new")

    @mcp.tool(
        description="Search the campaign's sources (OpenAlex, Crossref, arXiv) for up to max_pages result "
        "pages; records are deduplicated. Call again until done is true.",
        structured_output=True,
    )
    async def campaign_discover(
        campaign: campaign_name,
        ctx: Context,
        max_pages: Annotated[int, Field(description="pages in this call", ge=1, le=50)] = 5,
    ) -> dict[str, Any]:
        return await campaign_call(discover, ctx, "campaign_discover", campaign, max_pages)

    @mcp.tool(
        description="Find open-access locations (with their stated licenses) for up to max_records included "
        "records. Call again until done is true.",
        structured_output=True,
    )
    async def campaign_resolve(
        campaign: campaign_name,
        ctx: Context,
        max_records: Annotated[int, Field(description="records in this call", ge=1, le=500)] = 20,
    ) -> dict[str, Any]:
        return await campaign_call(resolve, ctx, "campaign_resolve", campaign, max_records)

    @mcp.tool(
        description="Download and verify PDFs of up to max_records included records into the server's "
        "campaign folder and rewrite its manifest. Call again until done is true.",
        structured_output=True,
    )
    async def campaign_fetch(
        campaign: campaign_name,
        ctx: Context,
        max_records: Annotated[int, Field(description="records in this call", ge=1, le=500)] = 20,
    ) -> dict[str, Any]:
        return await campaign_call(fetch, ctx, "campaign_fetch", campaign, max_records)

    @mcp.tool(
        description="Full-text eligibility: the retrieved reports of a campaign that wait for a decision "
        "(record id, title, PDF path in the campaign folder, pages, license).",
        structured_output=True,
    )
    async def campaign_reports(
        campaign: campaign_name,
        ctx: Context,
        n: Annotated[int, Field(description="reports", ge=1, le=100)] = 10,
    ) -> dict[str, Any]:
        return await campaign_call(reports, ctx, "campaign_reports", campaign, n)

    @mcp.tool(
        description="Record a full-text eligibility decision on a retrieved report: eligible, or exclude with "
        "one of the campaign's reasons; it supersedes any earlier one.",
        structured_output=True,
    )
    async def campaign_assess(
        campaign: campaign_name,
        record_id: Annotated[int, Field(description="record id (from campaign_reports)", ge=1)],
        decision: Literal["eligible", "exclude"],
        ctx: Context,
        reason: Annotated[str | None, Field(description="exclusion reason", max_length=500)] = None,
    ) -> dict[str, Any]:
        return await campaign_call(assess, ctx, "campaign_assess", campaign, record_id, decision, reason)
