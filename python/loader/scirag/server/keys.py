"""API keys: each maps to a database role (scirag.api_keys: forced row-level security,
readable by the owner role and superusers only). Only the SHA-256 of a key is stored; the key is shown once, when it
is made. The server looks keys up through its own (admin) login and caches hits for a
few seconds, so a revocation takes effect within CACHE_SECONDS.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

KEY_PREFIX = "scirag_"
CACHE_SECONDS = 5.0
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

LOOKUP_SQL = """
SELECT k.id, k.name, k.role_name, k.byo_llm, k.rate_per_minute
FROM scirag.api_keys k
JOIN pg_roles r ON r.oid = k.role_oid AND r.rolname = k.role_name  -- a re-created role gets no old key
WHERE k.key_hash = %s AND k.revoked_at IS NULL
"""


class KeyStore:
    """Looks keys up in scirag.api_keys, caching hits and the active-key count briefly."""

    FAILED_PER_MINUTE = 600  # unknown keys cost a database lookup each: bounded per process

    def __init__(self, pool):
        self.pool = pool
        self._hits: dict[bytes, tuple[float, Identity]] = {}
        self._count: tuple[float, int] | None = None
        self._failed = RateLimiter()
        self._failed_bucket = Identity(
            name="unknown keys", role="", byo_llm=False, rate_per_minute=self.FAILED_PER_MINUTE, key_id=-1
        )

    async def active_count(self) -> int:
        now = time.monotonic()
        if self._count and now - self._count[0] < CACHE_SECONDS:
            return self._count[1]
        async with self.pool.connection() as conn:
            cur = await conn.execute("SELECT count(*) AS n FROM scirag.api_keys WHERE revoked_at IS NULL")
            n = (await cur.fetchone())["n"]
        self._count = (now, n)
        return n

    async def lookup(self, key: str) -> Identity | None:
        if not key or len(key) > MAX_KEY_LENGTH:
            return None
        digest = hash_key(key)
        now = time.monotonic()
        hit = self._hits.get(digest)
        if hit and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        if self._failed.peek(self._failed_bucket) > 0:
            raise TooManyFailures()
        async with self.pool.connection() as conn:
            cur = await conn.execute(LOOKUP_SQL, (digest,))
            row = await cur.fetchone()
        if row is None:
            self._hits.pop(digest, None)
            self._failed.take(self._failed_bucket)
            return None
        ident = Identity(
            name=row["name"],
            role=row["role_name"],
            byo_llm=row["byo_llm"],
            rate_per_minute=row["rate_per_minute"],
            key_id=row["id"],
        )
        if len(self._hits) > 10_000:  # bounded: unknown keys are never cached, known ones are few
            self._hits.clear()
        self._hits[digest] = (now, ident)
        return ident


class TooManyFailures(Exception):
    """Too many unknown keys were tried in the last minute; lookups pause briefly."""


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
