"""create_app(): one FastAPI process serving REST under /v1 (OpenAPI at /openapi.json), the MCP
server at /mcp (streamable HTTP, behind the same keys), the web page at / and /healthz.

Cross-cutting, for every response: an X-Request-ID (the caller's, if it sent a sane
one, else a new one), RFC 9457 application/problem+json errors with stable ``code``
values, and one content-free access-log line (request id, method, path, status,
milliseconds, key name; never a body, a query string, a question or a header value).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import psycopg
from fastapi import Depends, FastAPI, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from psycopg_pool import PoolTimeout
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from scirag.server import events as ev
from scirag.server.documents import add_document_routes
from scirag.server.gate import FailureLimiter, Gate, printable
from scirag.server.keys import Identity, KeyStore, RateLimiter
from scirag.server.mcp_tools import BYO_HEADER, IDENTITY_STATE, build_mcp
from scirag.server.service import (
    MAX_K,
    MAX_QUESTION_CHARS,
    PROFILE_DESCRIPTION,
    PROFILE_PATTERN,
    BadRequest,
    Problem,
    Scope,
    Service,
    compact_answer,
    error_label,
    problem_for,
)

access_log = logging.getLogger("scirag.server.access")
log = logging.getLogger("scirag.server")
STATIC = Path(__file__).parent / "static"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


# ---------------------------------------------------------------------------
# Request bodies (OpenAPI documents them)
# ---------------------------------------------------------------------------


CampaignName = Annotated[str, PathParam(min_length=1, max_length=200)]


class DecisionIn(BaseModel):
    """A screening decision on one record of a campaign (a new row; it supersedes any earlier one)."""

    model_config = ConfigDict(extra="forbid")
    record_id: int = Field(ge=1)
    decision: Literal["include", "exclude", "unsure"]
    reason: str | None = Field(None, max_length=500, description="required for exclude: one of the campaign's reasons")


class ScopeIn(BaseModel):
    """Narrowing only: the database intersects each list with your role's ceiling."""

    model_config = ConfigDict(extra="forbid")
    licenses: list[str] | None = Field(
        None, description="license classes; [] = nothing; omitted = default (public, open_commercial)"
    )
    sources: list[str] | None = Field(None, description="sources; omitted = any in your ceiling")
    exclude_documents: list[str] | None = Field(None, description="manifest ids or numeric document ids")
    exclude_retracted: bool | None = Field(None, description="drop retracted documents")
    documents: list[str] | None = Field(None, description="only these documents (manifest or numeric ids)")
    years: list[str] | None = Field(None, description="only these years or ranges: 2019, 2015-2018, -2010, 2020-")
    authors: list[str] | None = Field(
        None, description="only documents with an author whose name contains one of these"
    )
    journals: list[str] | None = Field(None, description="only documents whose venue contains one of these")
    dois: list[str] | None = Field(None, description="only the documents with these DOIs")

    def to_scope(self) -> Scope:
        return Scope(**self.model_dump())


class RetrieveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    k: int = Field(10, ge=1, le=MAX_K)
    profile: str = Field("interactive", pattern=PROFILE_PATTERN, description=PROFILE_DESCRIPTION)
    options: dict[str, Any] = Field(
        default_factory=dict, description="scirag.retrieve options (checked by the database)"
    )
    scope: ScopeIn | None = None


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    options: dict[str, Any] = Field(default_factory=dict, description="scirag.answer options (checked by the database)")
    scope: ScopeIn | None = None
    stream: bool = Field(False, description="Server-Sent Events instead of JSON (or send Accept: text/event-stream)")
    detail: Literal["full", "compact"] = Field(
        "full", description="compact: answer, abstained and citations only (what an agent needs)"
    )


async def scope_query(
    licenses: Annotated[str | None, Query(description="comma-separated; empty = nothing")] = None,
    sources: Annotated[str | None, Query(description="comma-separated")] = None,
    exclude_documents: Annotated[str | None, Query(description="comma-separated ids")] = None,
    exclude_retracted: Annotated[bool | None, Query()] = None,
    documents: Annotated[str | None, Query(description="only these documents, comma-separated ids")] = None,
    years: Annotated[str | None, Query(description="only these years or ranges, comma-separated")] = None,
    authors: Annotated[str | None, Query(description="only these author name parts, semicolon-separated")] = None,
    journals: Annotated[str | None, Query(description="only these venue name parts, semicolon-separated")] = None,
    dois: Annotated[str | None, Query(description="only these DOIs, comma-separated")] = None,
) -> Scope | None:
    """Scope narrowing for GET endpoints, from the query string."""

    def split(v, sep=","):
        return None if v is None else [x.strip() for x in v.split(sep) if x.strip()]

    lists = (licenses, sources, exclude_documents, documents, years, authors, journals, dois)
    if all(v is None for v in lists) and exclude_retracted is None:
        return None
    return Scope(
        split(licenses),
        split(sources),
        split(exclude_documents),
        exclude_retracted,
        split(documents),
        split(years),
        split(authors, ";"),
        split(journals, ";"),
        split(dois),
    )


# ---------------------------------------------------------------------------
# ASGI middleware: request id, timing, access log (also wraps /mcp)
# ---------------------------------------------------------------------------


class RequestContext:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        rid = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                v = value.decode("latin-1")
                rid = v if _REQUEST_ID.match(v) else None
                break
        rid = rid or uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        t0 = time.perf_counter()
        status, started = [500], [False]

        async def send_with_id(message):
            if message["type"] == "http.response.start":
                status[0], started[0] = message["status"], True
                message.setdefault("headers", [])
                message["headers"] = [(k, v) for k, v in message["headers"] if k.lower() != b"x-request-id"]
                message["headers"].append((b"x-request-id", rid.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:  # the 500 problem is sent already; log no message text
            log.error(
                "request %s failed: %s",
                rid,
                error_label(exc),
                exc_info=exc if os.environ.get("SCIRAG_SERVER_DEBUG") == "1" else None,
            )
            if status[0] == 500 and not started[0]:
                raise
        finally:
            ident = scope["state"].get(IDENTITY_STATE)
            access_log.info(
                "%s %s %s %d %.1fms key=%s",
                rid,
                printable(scope["method"], 16),
                printable(scope["path"], 200),
                status[0],
                (time.perf_counter() - t0) * 1000,
                printable(ident.name, 100) if ident else "-",
            )


class JSON(Response):
    """Plain json.dumps of what the SQL API returned (JSON types already). Endpoints
    return it directly, which skips FastAPI's recursive jsonable_encoder."""

    media_type = "application/json"

    def render(self, content) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def problem_response(p: Problem, request: Request | None = None) -> JSONResponse:
    rid = request.scope.get("state", {}).get("request_id") if request else None
    return JSONResponse(
        p.body(instance=request.url.path if request else None, request_id=rid),
        status_code=p.status,
        media_type="application/problem+json",
        headers=p.headers,
    )


# ---------------------------------------------------------------------------
# Authentication (one guard for REST and /mcp)
# ---------------------------------------------------------------------------


class Guard:
    """API key -> Identity. With no keys at start-up the server is local-only (bound to
    the loopback) and requests act as ``local_role``; as soon as it sees an active key
    every request needs one, for the rest of the process's life: revoking every key
    later does not reopen it (restart the server for local-only mode again).

    Failed authentications are limited per client address (gate.FailureLimiter), after
    the key was looked up in memory: a valid key is never refused because of anyone's
    failures. Requests of a valid key are limited per key (its rate per minute)."""

    def __init__(self, keys: KeyStore, local_role: str | None, failures_per_minute: int = 60):
        self.keys = keys
        self.local = Identity(name="local", role=local_role, byo_llm=True, rate_per_minute=None) if local_role else None
        self.limiter = RateLimiter()
        self.failures = FailureLimiter(failures_per_minute)
        self.closed = local_role is None  # latches: once keys exist, never open again

    def _failed(self, client: str, problem: Problem) -> Problem:
        wait = self.failures.blocked(client)
        if wait > 0:
            return Problem(
                429,
                "rate_limited",
                "Too many failed authentications from your address; wait a moment",
                headers={"Retry-After": str(max(1, int(wait + 0.999)))},
            )
        self.failures.fail(client)
        return problem

    async def identify(self, headers, client: str = "-") -> Identity:
        key = None
        auth = headers.get("authorization")
        if auth and auth[:7].lower() == "bearer ":
            key = auth[7:].strip()
        key = key or headers.get("x-api-key")
        if key:
            ident = await self.keys.lookup(key)
            if ident is None:
                raise self._failed(
                    client,
                    Problem(
                        401,
                        "invalid_key",
                        "Unknown or revoked API key",
                        headers={"WWW-Authenticate": 'Bearer realm="scirag"'},
                    ),
                )
        else:
            if not self.closed and await self.keys.active_count() > 0:
                self.closed = True
                log.warning("an API key exists: local-only mode is closed until the server restarts")
            if self.closed:
                raise Problem(
                    401,
                    "missing_key",
                    "An API key is required",
                    "send Authorization: Bearer <key> (an admin makes keys with `scirag keys add`)",
                    headers={"WWW-Authenticate": 'Bearer realm="scirag"'},
                )
            ident = self.local
        wait = self.limiter.take(ident)
        if wait > 0:
            raise Problem(
                429,
                "rate_limited",
                "Too many requests for this key",
                headers={"Retry-After": str(max(1, int(wait + 0.999)))},
            )
        return ident


def client_address(scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "-"


class MCPGuard:
    """ASGI wrapper: /mcp needs the same key as REST; the Identity travels in the scope."""

    def __init__(self, app, guard: Guard):
        self.app, self.guard = app, guard

    async def __call__(self, scope, receive, send):
        from starlette.datastructures import Headers

        try:
            ident = await self.guard.identify(Headers(scope=scope), client_address(scope))
        except Exception as exc:
            p = problem_for(exc)
            if p.status >= 500:
                log.error("mcp auth failed: %s", error_label(exc))
            await problem_response(p, Request(scope))(scope, receive, send)
            return
        scope.setdefault("state", {})[IDENTITY_STATE] = ident
        await self.app(scope, receive, send)


async def caller(request: Request) -> Identity:
    """FastAPI dependency: the request's Identity (401/429 as problem+json otherwise)."""
    ident = await request.app.state.guard.identify(request.headers, client_address(request.scope))
    request.scope["state"][IDENTITY_STATE] = ident
    return ident


Caller = Annotated[Identity, Depends(caller)]
NarrowScope = Annotated[Scope | None, Depends(scope_query)]


# ---------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------


def create_app(dsn: str, *, local_role: str | None = None, host: str = "127.0.0.1", pool_size: int = 10) -> FastAPI:
    """``local_role``: the role requests act as when no key exists (local-only mode;
    None = always require a key). ``host`` is what the server binds to (it decides the
    MCP transport's DNS-rebinding protection)."""
    service = Service(dsn, max_size=pool_size)
    keys = KeyStore(service.pool)
    guard = Guard(keys, local_role)
    mcp = build_mcp(service)
    mcp_asgi = mcp.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host)
    mcp_endpoint = next(r.endpoint for r in mcp_asgi.routes if getattr(r, "path", None) == "/mcp")

    @asynccontextmanager
    async def lifespan(app):
        await service.open()
        async with mcp.session_manager.run():
            yield
        await service.close()

    app = FastAPI(
        title="scirag",
        # no Swagger UI / ReDoc: they load scripts from a CDN on the page's origin (issue 26);
        # the OpenAPI document stays at /openapi.json
        docs_url=None,
        redoc_url=None,
        version="1",
        lifespan=lifespan,
        default_response_class=JSON,
        description="Retrieval-augmented QA over scientific documents, inside PostgreSQL. Every call runs "
        "as the database role of your API key; row-level security decides what you see.",
    )
    app.state.service, app.state.guard = service, guard

    # -- errors -------------------------------------------------------------
    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem):
        return problem_response(exc, request)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError):
        # field locations and messages only: never echo the input back into logs or bodies
        errors = [{"loc": [str(x) for x in e.get("loc", ())], "msg": e.get("msg", "")} for e in exc.errors()][:20]
        return problem_response(
            Problem(
                400,
                "invalid_request",
                "Invalid request",
                "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors)[:1000],
                extra={"errors": errors},
            ),
            request,
        )

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException):
        codes = {404: "not_found", 405: "method_not_allowed"}
        return problem_response(
            Problem(exc.status_code, codes.get(exc.status_code, f"http_{exc.status_code}"), str(exc.detail)), request
        )

    @app.exception_handler(psycopg.Error)
    @app.exception_handler(PoolTimeout)
    @app.exception_handler(BadRequest)
    async def on_expected(request: Request, exc: Exception):
        p = problem_for(exc)
        (log.error if p.status >= 500 else log.info)(
            "request %s: %s -> %s", request.scope["state"].get("request_id"), error_label(exc), p.code
        )
        return problem_response(p, request)

    @app.exception_handler(Exception)
    async def on_error(request: Request, exc: Exception):
        # logged once, content-free, by RequestContext (Starlette re-raises after this response)
        return problem_response(problem_for(exc), request)

    # -- endpoints ----------------------------------------------------------
    @app.get("/healthz", tags=["meta"], summary="Liveness and database reachability (no key needed)")
    async def healthz():
        return JSON(await service.health())

    @app.get("/v1/scope", tags=["v1"], summary="Your effective scope (role ceiling intersected with any narrowing)")
    async def get_scope(ident: Caller, scope: NarrowScope):
        return JSON(await service.current_scope(ident, scope))

    @app.post("/v1/retrieve", tags=["v1"], summary="Ranked, cited evidence (scirag.retrieve) and its trace")
    async def post_retrieve(body: RetrieveIn, ident: Caller):
        return Response(
            await service.retrieve_json(
                ident,
                body.question,
                k=body.k,
                profile=body.profile,
                options=body.options,
                scope=body.scope.to_scope() if body.scope else None,
            ),
            media_type="application/json",
        )

    @app.post(
        "/v1/answer",
        tags=["v1"],
        summary="Grounded answer with numbered citations (scirag.answer); JSON or Server-Sent Events",
        responses={200: {"content": {"application/json": {}, "text/event-stream": {}}}},
    )
    async def post_answer(body: AnswerIn, request: Request, ident: Caller):
        llm_key = request.headers.get(BYO_HEADER)
        if llm_key is not None:
            if not ident.byo_llm:
                raise Problem(403, "byo_llm_not_allowed", "This API key may not bring its own model key")
            if not 1 <= len(llm_key) <= 512:
                raise Problem(400, "invalid_request", "Invalid request", f"{BYO_HEADER}: 1-512 characters")
        result = await service.answer(
            ident,
            body.question,
            options=body.options,
            scope=body.scope.to_scope() if body.scope else None,
            llm_key=llm_key,
        )
        del llm_key
        if body.detail == "compact":
            result = compact_answer(result)
        events = list(ev.answer_events(result))
        rid = request.scope["state"].get("request_id")
        if body.stream or "text/event-stream" in request.headers.get("accept", ""):

            async def stream():
                for event, data in events:
                    yield ev.sse(event, data)
                yield ev.sse("done", {"request_id": rid})

            return StreamingResponse(
                stream(),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )
        return JSON(ev.aggregate(events))

    @app.get("/v1/chunks/{chunk_id}", tags=["v1"], summary="A chunk in context: location and neighbouring chunks")
    async def get_chunk(
        chunk_id: int, ident: Caller, scope: NarrowScope, context: Annotated[int, Query(ge=0, le=5)] = 1
    ):
        row = await service.chunk(ident, chunk_id, context=context, scope=scope)
        if row is None:
            raise Problem(404, "not_found", "No such chunk in your scope")
        return JSON(row)

    @app.get("/v1/documents/{ref}", tags=["v1"], summary="A document's metadata and chunk outline (id or manifest id)")
    async def get_document(ref: Annotated[str, PathParam(max_length=256)], ident: Caller, scope: NarrowScope):
        row = await service.document(ident, ref, scope=scope)
        if row is None:
            raise Problem(404, "not_found", "No such document in your scope")
        return JSON(row)

    # -- campaigns (issue 24): the caller's role owns them; run off the event loop --

    @app.get("/v1/campaigns/{name}/next", tags=["campaigns"], summary="Next records to screen and the stopping rule")
    async def campaign_next(name: CampaignName, ident: Caller, n: Annotated[int, Query(ge=1, le=50)] = 1):
        from starlette.concurrency import run_in_threadpool

        from scirag.server import campaigns

        return JSON(await run_in_threadpool(campaigns.next_records, service.dsn, ident.role, name, n))

    @app.post("/v1/campaigns/{name}/decisions", tags=["campaigns"], summary="Record a screening decision")
    async def campaign_decide(name: CampaignName, body: DecisionIn, ident: Caller):
        from starlette.concurrency import run_in_threadpool

        from scirag.server import campaigns

        return JSON(
            await run_in_threadpool(
                campaigns.decide, service.dsn, ident.role, name, body.record_id, body.decision, body.reason
            )
        )

    @app.get("/v1/campaigns/{name}/prisma", tags=["campaigns"], summary="PRISMA 2020 counts and their consistency")
    async def campaign_prisma(name: CampaignName, ident: Caller):
        from starlette.concurrency import run_in_threadpool

        from scirag.server import campaigns

        return JSON(await run_in_threadpool(campaigns.prisma, service.dsn, ident.role, name))

    @app.get("/screen", include_in_schema=False)
    async def screen_page():
        return FileResponse(STATIC / "screen.html", headers={"Cache-Control": "no-store"})

    # the library: list, delete, correct (issue 25)
    add_document_routes(app, Caller, NarrowScope, JSON)

    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.router.routes.append(Route("/mcp", endpoint=MCPGuard(mcp_endpoint, guard), methods=["GET", "POST", "DELETE"]))
    return RequestContext(Gate(app, host))
