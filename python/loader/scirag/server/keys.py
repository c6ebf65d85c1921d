"""API keys: each maps to a database role (scirag.api_keys: forced row-level security,
readable by the owner role and superusers only). Only the SHA-256 of a key is stored; the key is shown once, when it
is made. The server reads the active keys through its own (admin) login at most every
CACHE_SECONDS and looks keys up in memory, so a revocation takes effect within
CACHE_SECONDS and an unknown key costs no database call.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

KEY_PREFIX = "scirag_"
CACHE_SECONDS = 5.0
MISS_REFRESH_SECONDS = 0.5  # an unknown key re-reads the active keys at most this often
MAX_KEY_LENGTH = 200  # a longer Authorization value is refused before hashing


class KeyError_(ValueError):
    """A key command got bad input; the message says which."""


@dataclass(frozen=True)
class Identity:
    """Who a request acts as. ``key_id`` None = local-only mode (no keys configured)."""

    name: str
    role: str
    byo_llm: bool
    rate_per_minute: int | None
    key_id: int | None = None


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


# ---------------------------------------------------------------------------
# Admin side (sync psycopg; `scirag keys ...`)
# ---------------------------------------------------------------------------


def add_key(
    conn, name: str, role: str, *, byo_llm: bool = False, rate_per_minute: int = 120, note: str | None = None
) -> str:
    """Creates a key for ``role`` and returns it (the only time it is visible).
    The table's trigger refuses superusers, BYPASSRLS roles and scirag_owner members."""
    if not 1 <= rate_per_minute <= 1_000_000:
        raise KeyError_(f"rate per minute must be between 1 and 1000000 (got {rate_per_minute})")
    if conn.execute("SELECT 1 FROM scirag.api_keys WHERE name = %s", (name,)).fetchone():
        raise KeyError_(f"a key named {name!r} exists already (revoked keys keep their name): pick another name")
    member = conn.execute(
        "SELECT pg_has_role(session_user, r.oid, 'MEMBER') FROM pg_roles r WHERE rolname = %s", (role,)
    ).fetchone()
    if member is None:
        raise KeyError_(f"role {role!r} does not exist")
    if not member[0]:
        raise KeyError_(f"the server login cannot act as {role!r}: GRANT {role} TO <server login> first")
    key = generate_key()
    conn.execute(
        """INSERT INTO scirag.api_keys (name, key_prefix, key_hash, role_name, byo_llm, rate_per_minute, note)
                    VALUES (%s, %s, %s, %s, %s, %s, %s)""",
        (name, key[: len(KEY_PREFIX) + 5], hash_key(key), role, byo_llm, rate_per_minute, note),
    )
    conn.commit()
    return key


def list_keys(conn) -> list[dict]:
    cur = conn.execute("""SELECT name, key_prefix, role_name, byo_llm, rate_per_minute, created_at, revoked_at, note
                          FROM scirag.api_keys ORDER BY id""")
    cols = [d.name for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def revoke_key(conn, name: str) -> None:
    row = conn.execute(
        "UPDATE scirag.api_keys SET revoked_at = now() WHERE name = %s AND revoked_at IS NULL RETURNING id", (name,)
    ).fetchone()
    conn.commit()
    if row is None:
        raise KeyError_(f"no active key named {name!r}")


# ---------------------------------------------------------------------------
# Server side (async pool)
# ---------------------------------------------------------------------------

ACTIVE_SQL = """
SELECT k.key_hash, k.id, k.name, k.role_name, k.byo_llm, k.rate_per_minute
FROM scirag.api_keys k
JOIN pg_roles r ON r.oid = k.role_oid AND r.rolname = k.role_name  -- a re-created role gets no old key
WHERE k.revoked_at IS NULL
"""


class KeyStore:
    """The active keys, read in one query at most every CACHE_SECONDS and kept in memory
    as hash -> Identity (issue 26). A lookup is a dictionary probe; a miss re-reads the
    table at most every MISS_REFRESH_SECONDS (so a new key works within half a second),
    so unknown keys cost at most two small queries a second however many are tried, and
    failures need no shared limit that could lock out a valid key (they are limited per
    client address, after this lookup: scirag.server.gate)."""

    def __init__(self, pool):
        self.pool = pool
        self._active: dict[bytes, Identity] = {}
        self._loaded_at: float | None = None
        self._lock = None

    async def _refresh(self, max_age: float = CACHE_SECONDS) -> None:
        import asyncio

        now = time.monotonic()
        if self._loaded_at is not None and now - self._loaded_at < max_age:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._loaded_at is not None and time.monotonic() - self._loaded_at < max_age:
                return  # another request refreshed it while this one waited
            async with self.pool.connection() as conn:
                cur = await conn.execute(ACTIVE_SQL)
                rows = await cur.fetchall()
            self._active = {
                bytes(r["key_hash"]): Identity(
                    name=r["name"],
                    role=r["role_name"],
                    byo_llm=r["byo_llm"],
                    rate_per_minute=r["rate_per_minute"],
                    key_id=r["id"],
                )
                for r in rows
            }
            self._loaded_at = time.monotonic()

    async def active_count(self) -> int:
        await self._refresh()
        return len(self._active)

    async def lookup(self, key: str) -> Identity | None:
        if not key or len(key) > MAX_KEY_LENGTH:
            return None
        await self._refresh()
        digest = hash_key(key)
        ident = self._active.get(digest)
        if ident is None:
            # a key made a moment ago works at once: a miss re-reads the table, but at
            # most every MISS_REFRESH_SECONDS whatever the number of unknown keys tried
            await self._refresh(MISS_REFRESH_SECONDS)
            ident = self._active.get(digest)
        return ident


class RateLimiter:
    """Token bucket per key: ``rate_per_minute`` tokens, refilled continuously."""

    def __init__(self):
        self._buckets: dict[int, tuple[float, float]] = {}

    def peek(self, ident: Identity) -> float:
        """Like take() without taking: seconds until a token is available (0.0 = now)."""
        cap = float(ident.rate_per_minute or 0)
        if not cap or ident.key_id is None:
            return 0.0
        now = time.monotonic()
        tokens, last = self._buckets.get(ident.key_id, (cap, now))
        tokens = min(cap, tokens + (now - last) * cap / 60.0)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) * 60.0 / cap

    def take(self, ident: Identity) -> float:
        """0.0 if the request may go on, else the seconds until a token is available."""
        if ident.rate_per_minute is None or ident.key_id is None:
            return 0.0
        cap = float(ident.rate_per_minute)
        now = time.monotonic()
        tokens, last = self._buckets.get(ident.key_id, (cap, now))
        tokens = min(cap, tokens + (now - last) * cap / 60.0)
        if tokens < 1.0:
            self._buckets[ident.key_id] = (tokens, now)
            return (1.0 - tokens) * 60.0 / cap
        self._buckets[ident.key_id] = (tokens - 1.0, now)
        return 0.0
