"""The one service contract behind REST, MCP and the web page.

Every call borrows a connection from its role's pool, opens a transaction and, in one statement,
switches to the caller's database role and narrows its scope with transaction-local
settings (set_config(..., true): SET LOCAL ROLE and SET LOCAL scirag.*). Then it calls
the SQL API: scirag.retrieve, scirag.answer, scirag.last_trace, scirag.current_scope,
and chunks/documents through row-level security. When the connection goes back to the
pool it has run RESET ALL (the session-level trace) inside its transaction, pipelined
with the call itself, and then ended the transaction (COMMIT or ROLLBACK revert the
role and scope). Nothing here filters, ranks or decides scope: the database does,
exactly as it does for psql.

Errors: ``problem_for(exc)`` maps any exception to one Problem (HTTP status, stable
code, title, detail) shared by REST and MCP; database messages are passed on only for
the caller's own bad input (SQLSTATE 22023 / P0001 and scirag.* argument errors).
"""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from scirag import routing
from scirag.server.keys import Identity

# Request -> transaction-local setting. The database intersects each with the role's
# ceiling (scirag.scope_*), so a request can narrow its scope and never widen it.
SCOPE_SETTINGS = {
    "licenses": "scirag.licenses",
    "sources": "scirag.sources",
    "exclude_documents": "scirag.exclude_documents",
    "exclude_retracted": "scirag.exclude_retracted",
    # positive filters ("ask this paper"): they, too, only narrow
    "documents": "scirag.documents",
    "years": "scirag.years",
    "authors": "scirag.authors",
    "journals": "scirag.journals",
    "dois": "scirag.dois",
}
# Names hold commas ("Lovelace, Ada"): those two settings are lists separated by semicolons.
NAME_LISTS = {"authors", "journals"}
# A caller's own model key for one answer (see README "BYO model keys"): a
# transaction-local setting of the caller's own session, sent as a bind parameter.
LLM_KEY_SETTING = "scirag.llm_api_key"
STATEMENT_TIMEOUT_MS = 120_000
MAX_LIST_ITEMS = 1000
# Request bounds of the REST and MCP front ends (one place for both): the question as
# scirag.check_question bounds it in the database, and at most 100 chunks a call.
MAX_QUESTION_CHARS = 4000
MAX_K = 100  # the one bound of k at the REST and MCP doors (SQL callers: 1000, scirag.check_limit)
# A retrieval profile name: its shape and length are checked at the REST and MCP doors;
# which names exist is the database's (the rows of scirag.retrieval_profiles):
# scirag.retrieve refuses any other with 'unknown profile "NAME"' (SQLSTATE 22023, a 400).
PROFILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
PROFILE_DESCRIPTION = (
    "retrieval profile: a name in scirag.retrieval_profiles (interactive, deep, interactive-rrf, deep-rrf as shipped)"
)
# What an agent needs of an answer (issue 25): the compact form, MCP's default and
# REST's "detail": "compact"; "full" adds the evidence, sources, checks and trace.
COMPACT_ANSWER_KEYS = ("answer", "abstained", "citations")


def compact_answer(result: dict) -> dict:
    """The compact form of a scirag.answer result: answer, abstained, citations."""
    return {k: result.get(k) for k in COMPACT_ANSWER_KEYS}


_ITEM = re.compile(r"^[^,\x00-\x1f]{1,256}$")
_NAME_ITEM = re.compile(r"^[^;\x00-\x1f]{1,256}$")

# The evidence as one JSON text built by the database: the REST door passes it on as
# bytes (no parsing and re-encoding in Python), MCP parses it.
RETRIEVE_SQL = """SELECT coalesce(json_agg(r ORDER BY r.rank), '[]')::text AS j
                  FROM (SELECT rank, chunk_id, document_id, external_id, score, layers, title, section_path,
                               content, is_table, citation
                        FROM scirag.retrieve(%s, %s, %s, %s)) AS r"""
# Readers hold no privilege on evidence tables (policies/reader_wall): a chunk, its
# neighbours and a document are read through the reader API, under the caller's scope.
CHUNK_SQL = """SELECT chunk_id, document_id, external_id, title, ordinal, kind, section_path, heading, is_table,
                      content, line_start, line_end, page_start, page_end, license, source, retracted
               FROM scirag.chunk_get(%s)"""
# The nearest n text chunks before and after (section chunks are parents, not neighbours).
NEIGHBOURS_SQL = """SELECT chunk_id, ordinal, kind, section_path, is_table, content,
                           line_start, line_end, page_start, page_end
                    FROM scirag.chunk_neighbours(%(chunk)s, %(n)s)"""
DOCUMENT_SQL = """SELECT document_id, external_id, title, authors, year, journal, doi,
                         license, source, retracted, parser, pages, ingested_at::text AS ingested_at
                  FROM scirag.documents_visible(%s)"""
OUTLINE_SQL = """SELECT chunk_id, ordinal, kind, level, section_path, is_table,
                        line_start, line_end, page_start, page_end
                 FROM scirag.document_outline(%s)"""


@dataclass
class Scope:
    """What a request asks to narrow its scope to (None = leave the setting alone)."""

    licenses: list[str] | None = None
    sources: list[str] | None = None
    exclude_documents: list[str] | None = None
    exclude_retracted: bool | None = None
    documents: list[str] | None = None
    years: list[str] | None = None
    authors: list[str] | None = None
    journals: list[str] | None = None
    dois: list[str] | None = None

    def settings(self) -> list[tuple[str, str]]:
        out = []
        for attr, name in SCOPE_SETTINGS.items():
            value = getattr(self, attr)
            if value is None:
                continue
            if isinstance(value, bool):
                out.append((name, "on" if value else "off"))
                continue
            if len(value) > MAX_LIST_ITEMS:
                raise BadRequest(f"scope.{attr}: at most {MAX_LIST_ITEMS} items")
            names = attr in NAME_LISTS
            for item in value:
                if not isinstance(item, str) or not (_NAME_ITEM if names else _ITEM).match(item):
                    sep = "semicolons" if names else "commas"
                    raise BadRequest(f"scope.{attr}: items are 1-256 characters without {sep} or control characters")
            out.append((name, (";" if names else ",").join(value)))  # [] -> '' = nothing (fail closed)
        return out


class BadRequest(ValueError):
    """The caller's input is wrong before any SQL runs."""


@dataclass
class Problem(Exception):
    """RFC 9457 problem: HTTP status, stable machine code, title, optional detail."""

    status: int
    code: str
    title: str
    detail: str | None = None
    headers: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def body(self, instance: str | None = None, request_id: str | None = None) -> dict:
        out = {
            "type": f"https://scirag.invalid/problems/{self.code}",
            "title": self.title,
            "status": self.status,
            "code": self.code,
        }
        if self.detail:
            out["detail"] = self.detail
        if instance:
            out["instance"] = instance
        if request_id:
            out["request_id"] = request_id
        out.update(self.extra)
        return out


def _first_line(exc: psycopg.Error) -> str:
    msg = (exc.diag.message_primary or str(exc)).strip().splitlines()[0]
    return msg.removeprefix("plpy.Error: ")[:500]


def problem_for(exc: BaseException) -> Problem:
    """The one mapping from an exception to what a caller is told."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, BadRequest):
        return Problem(400, "invalid_request", "Invalid request", str(exc))
    if isinstance(exc, PoolTimeout):
        return Problem(503, "unavailable", "No database connection free; try again", headers={"Retry-After": "1"})
    if isinstance(exc, psycopg.DataError) and not exc.sqlstate and "NUL" in str(exc):
        # psycopg refuses a NUL character in a text parameter before sending it (issue 26)
        return Problem(400, "invalid_argument", "Invalid argument", "text must not contain NUL (U+0000) characters")
    if isinstance(exc, psycopg.Error):
        state = exc.sqlstate or ""
        msg = _first_line(exc)
        hint = exc.diag.message_hint
        extra = {"hint": hint} if hint else {}
        # 22P05 / 22021: a \u0000 escape in JSON options, bytes that are not UTF-8
        if state in ("22023", "P0001", "22P02", "22001", "22003", "22P05", "22021") or (
            state == "XX000" and msg.startswith("scirag.")
        ):
            # The caller's own argument was refused by the SQL API (it names what was wrong).
            return Problem(400, "invalid_argument", "Invalid argument", msg, extra=extra)
        if state == "42501":
            return Problem(403, "forbidden", "Not allowed for this role")
        if state == "57014":
            return Problem(504, "timeout", "The database call took too long")
        if isinstance(exc, psycopg.OperationalError):
            return Problem(503, "unavailable", "Database unavailable", headers={"Retry-After": "1"})
    return Problem(500, "internal", "Internal error")


def error_label(exc: BaseException) -> str:
    """Content-free description for logs: exception class and SQLSTATE, never a message."""
    state = getattr(exc, "sqlstate", None)
    return type(exc).__name__ + (f" sqlstate={state}" if state else "")


class Service:
    """The SQL API as the caller's role. One pool of connections (of the server's admin
    login) per database role: a backend only ever acts as one role, so nothing a backend
    keeps between calls (plan caches, the PL/Python query-embedding cache in GD) is shared
    across roles, and no caller can time another role's cache. ``admin`` serves key
    lookups and /healthz and never switches role.

    Routing (scirag.routing): ``dsn`` is the primary; ``read_dsn`` (default: SCIRAG_READ_DSN
    when ``dsn`` is the primary) names hot standbys. The role pools serve every reader call
    from a standby and fall back to the primary when none answers; the admin pool prefers
    the primary (key revocations are read there first) and falls back to a standby, so
    requests keep being answered while the primary is down. Nothing a request runs writes."""

    MAX_ROLES = 32  # bounded: pools are made on first use, one per role a key maps to

    def __init__(
        self,
        dsn: str,
        *,
        read_dsn: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        lazy: bool = False,
    ):
        """lazy: open pools without waiting for a first connection (`scirag mcp` starts,
        and answers each tool call with an error, while the database is down)."""
        self.dsn, self.min_size, self.max_size, self.timeout = dsn, min_size, max_size, timeout
        self.lazy = lazy
        self.read_dsn = read_dsn if read_dsn is not None else routing.read_dsn(dsn)
        self.read_order = [self.read_dsn, dsn] if self.read_dsn else [dsn]
        self.status = routing.StatusCache(dsn, read_dsn=self.read_dsn)
        self.admin = self._pool("admin", 1, 2, order=self.read_order[::-1])
        self.pools: dict[str, AsyncConnectionPool] = {}
        self._lock = asyncio.Lock()

    def _pool(self, name: str, min_size: int, max_size: int, order: list[str] | None = None) -> AsyncConnectionPool:
        # No reset callback: every call runs RESET ALL (the session-level trace) in the
        # same round trip as the call itself and ends with COMMIT or ROLLBACK (which
        # revert the role and the SET LOCAL scope). Not DISCARD ALL: it would throw away
        # every cached plan of the PL/pgSQL retrieval functions (measured: 24.5 instead
        # of 19.1 ms per retrieve).
        return AsyncConnectionPool(
            self.dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=self.timeout,
            open=False,
            name=f"scirag-{name}",
            # prepare_threshold None: no server-side prepared statements, so the pools
            # also work through pgbouncer in transaction pooling (1.18 cannot keep them).
            kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": None},
            connection_class=routing.fallback_connection_class(order or self.read_order),
        )

    @property
    def pool(self) -> AsyncConnectionPool:
        return self.admin

    async def open(self) -> None:
        await self.admin.open(wait=not self.lazy, timeout=30)

    async def unreachable(self) -> str | None:
        """Why the database cannot be reached right now (a fresh connection is tried), or None."""
        try:
            conn = await psycopg.AsyncConnection.connect(self.dsn, connect_timeout=3)
        except psycopg.Error as exc:
            return " ".join(str(exc).split())[:300] or type(exc).__name__
        await conn.close()
        return None

    async def close(self) -> None:
        for p in [self.admin, *self.pools.values()]:
            await p.close()

    async def _role_pool(self, role: str) -> AsyncConnectionPool:
        pool = self.pools.get(role)
        if pool is None:
            async with self._lock:
                pool = self.pools.get(role)
                if pool is None:
                    if len(self.pools) >= self.MAX_ROLES:
                        raise Problem(503, "unavailable", "Too many distinct roles in use on this server")
                    pool = self._pool(role, self.min_size, self.max_size)
                    await pool.open(wait=not self.lazy, timeout=30)
                    self.pools[role] = pool
        return pool

    @staticmethod
    def _setup(ident: Identity, scope: Scope | None, llm_key: str | None) -> tuple[str, list]:
        settings = [("role", ident.role), ("statement_timeout", str(STATEMENT_TIMEOUT_MS))]
        settings += scope.settings() if scope else []
        if llm_key:
            settings.append((LLM_KEY_SETTING, llm_key))
        return (
            "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in settings),
            [x for pair in settings for x in pair],
        )

    async def run(
        self,
        ident: Identity,
        statements: list[tuple[str, object]],
        *,
        scope: Scope | None = None,
        llm_key: str | None = None,
    ) -> list[list[dict]]:
        """Runs ``statements`` in one transaction as ``ident.role`` with ``scope`` applied,
        pipelined (BEGIN, settings, statements and RESET ALL in one round trip, then
        COMMIT on its own), and returns each statement's rows."""
        setup_sql, setup_params = self._setup(ident, scope, llm_key)
        pool = await self._role_pool(ident.role)
        async with pool.connection() as conn:
            try:
                async with conn.pipeline() as p:
                    await conn.execute("BEGIN")
                    await conn.execute(setup_sql, setup_params)
                    curs = [await conn.execute(sql, params) for sql, params in statements]
                    # RESET ALL before COMMIT: the session-level trace is dropped inside the
                    # transaction, so behind pgbouncer (transaction pooling) nothing of this
                    # call stays on a server connection another client gets next.
                    await conn.execute("RESET ALL")
                    await p.sync()
                    rows = [await c.fetchall() for c in curs]
                # COMMIT outside the pipeline, as the call's last message. Leaving the
                # pipeline sends one more Sync and a Flush; had the transaction ended
                # before them, pgbouncer (transaction pooling) would have released the
                # server connection at COMMIT's ReadyForQuery and handed the trailing
                # Flush one, which answers nothing, so that connection stayed tied to this
                # idle client and every other client waited until query_wait_timeout
                # dropped it (tests/py/test_pgbouncer.py, many calls in a row).
                await conn.execute("COMMIT")
                return rows
            except BaseException:
                await self._clean(conn)
                raise

    @staticmethod
    async def _clean(conn) -> None:
        """After a failed call: end the transaction and drop session settings, so the
        connection goes back to the pool as it came (the pool discards it if this fails)."""
        try:
            await conn.execute("ROLLBACK")
            await conn.execute("RESET ALL")
        except Exception:  # a broken connection is discarded by the pool
            pass

    @asynccontextmanager
    async def session(self, ident: Identity, scope: Scope | None = None, llm_key: str | None = None):
        """A connection inside a transaction, acting as ``ident.role`` with ``scope``
        applied, for calls whose second query depends on the first."""
        setup_sql, setup_params = self._setup(ident, scope, llm_key)
        pool = await self._role_pool(ident.role)
        async with pool.connection() as conn:
            try:
                await conn.execute("BEGIN")
                await conn.execute(setup_sql, setup_params)
                yield conn
                await conn.execute("RESET ALL")  # inside the transaction (see run())
                await conn.execute("COMMIT")
            except BaseException:
                await self._clean(conn)
                raise

    async def retrieve_json(
        self,
        ident: Identity,
        question: str,
        *,
        k: int = 10,
        profile: str = "interactive",
        options: dict | None = None,
        scope: Scope | None = None,
    ) -> bytes:
        """``{"results": [...], "trace": {...}}`` as JSON bytes, assembled from the
        database's own JSON texts."""
        rows, trace = await self.run(
            ident,
            [
                (RETRIEVE_SQL, (question, k, profile, Jsonb(options or {}))),
                ("SELECT scirag.last_trace()::text AS t", None),
            ],
            scope=scope,
        )
        return ('{"results":' + rows[0]["j"] + ',"trace":' + (trace[0]["t"] or "null") + "}").encode()

    async def retrieve(
        self,
        ident: Identity,
        question: str,
        *,
        k: int = 10,
        profile: str = "interactive",
        options: dict | None = None,
        scope: Scope | None = None,
    ) -> dict:
        return json.loads(await self.retrieve_json(ident, question, k=k, profile=profile, options=options, scope=scope))

    async def answer(
        self,
        ident: Identity,
        question: str,
        *,
        options: dict | None = None,
        scope: Scope | None = None,
        llm_key: str | None = None,
    ) -> dict:
        ((row,),) = await self.run(
            ident,
            [("SELECT scirag.answer(%s, %s) AS a", (question, Jsonb(options or {})))],
            scope=scope,
            llm_key=llm_key,
        )
        return row["a"]

    async def current_scope(self, ident: Identity, scope: Scope | None = None) -> dict:
        ((row,),) = await self.run(ident, [("SELECT scirag.current_scope() AS s", None)], scope=scope)
        return row["s"]

    async def chunk(
        self, ident: Identity, chunk_id: int, *, context: int = 1, scope: Scope | None = None
    ) -> dict | None:
        """A chunk with its document, location and up to ``context`` neighbours each side
        (all read through row-level security: an invisible chunk is simply not found)."""
        async with self.session(ident, scope) as conn:
            row = await (await conn.execute(CHUNK_SQL, (chunk_id,))).fetchone()
            if row is None:
                return None
            n = max(0, min(int(context), 5))
            row["context"] = await (await conn.execute(NEIGHBOURS_SQL, {"chunk": chunk_id, "n": n})).fetchall()
            return row

    async def document(self, ident: Identity, ref: str, *, scope: Scope | None = None) -> dict | None:
        """A document by numeric id or manifest id, with its chunk outline (no text)."""
        async with self.session(ident, scope) as conn:
            # by numeric id or manifest id (documents_visible resolves both)
            row = await (await conn.execute(DOCUMENT_SQL, (ref,))).fetchone()
            if row is None:
                return None
            row["chunks"] = await (await conn.execute(OUTLINE_SQL, (row["document_id"],))).fetchall()
            return row

    async def health(self) -> dict:
        """Liveness, plus each standby's replay lag as the primary sees it and each read
        node's own state (names only: application_name / cluster_name, never a host)."""
        async with self.admin.connection() as conn:
            await conn.execute("SELECT 1")
        nodes = await asyncio.to_thread(self.status.get)
        degraded = not nodes["primary"].get("reachable") or any(not n.get("reachable") for n in nodes["read_nodes"])
        return {"status": "degraded" if degraded else "ok", "database": "ok", **nodes}
