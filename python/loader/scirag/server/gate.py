"""The HTTP door's own defences, apart from the routes (issue 26):

- ``FailureLimiter``: failed authentications are limited per client address (a token
  bucket per address, bounded in memory). It is consulted only after the key was
  checked against the in-memory table of active keys, so a valid key is never refused
  because of anyone's failures, its own address's included.
- ``Gate``: ASGI middleware. On a server bound to the loopback it answers 421 to a
  request whose ``Host`` is not a loopback name (DNS rebinding: a page on another
  site whose name now resolves to 127.0.0.1) and 403 to a state-changing request
  whose ``Origin`` is not a loopback origin, on every route (REST, the page, /mcp).
  Every response gets ``X-Content-Type-Options: nosniff``, ``Referrer-Policy:
  no-referrer`` and ``X-Frame-Options: DENY``; an HTML response also gets a
  Content-Security-Policy that allows only the server's own scripts and no framing.
- ``printable`` / ``EscapingFormatter``: control characters (CR, LF, other C0/C1
  characters, Unicode line separators) in anything logged become ``\\xNN`` /
  ``\\uNNNN`` escapes, so a request path cannot forge a log line.
"""

from __future__ import annotations

import json
import logging
import re
import time
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(value: object, limit: int = 300) -> str:
    """``value`` as one log-safe line: control characters escaped, at most ``limit`` characters."""
    s = str(value)[:limit]
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", s
    )


class EscapingFormatter(logging.Formatter):
    """A formatter whose message part never spans lines (tracebacks, added after it, still do)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message, limit=10_000)
        return super().formatMessage(record)


def is_loopback_bind(host: str) -> bool:
    return host.strip("[]") in LOOPBACK_NAMES or host.startswith("127.")


def _hostname(authority: str) -> str | None:
    """The host name of a Host header value (``name``, ``name:port``, ``[v6]:port``); None if malformed."""
    try:
        parts = urlsplit("//" + authority)
        _ = parts.port  # raises on a bad port
        return (parts.hostname or "").lower() or None
    except ValueError:
        return None


class FailureLimiter:
    """Failed authentications per client address: ``per_minute`` tokens refilled
    continuously, at most ``max_addresses`` addresses remembered (the oldest go first)."""

    def __init__(self, per_minute: int = 60, max_addresses: int = 10_000):
        self.per_minute = per_minute
        self.max_addresses = max_addresses
        self._buckets: dict[str, tuple[float, float]] = {}

    def _tokens(self, address: str, now: float) -> float:
        tokens, last = self._buckets.get(address, (float(self.per_minute), now))
        return min(float(self.per_minute), tokens + (now - last) * self.per_minute / 60.0)

    def blocked(self, address: str) -> float:
        """Seconds until this address may fail again (0.0 = it may)."""
        tokens = self._tokens(address, time.monotonic())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) * 60.0 / self.per_minute

    def fail(self, address: str) -> None:
        now = time.monotonic()
        tokens = self._tokens(address, now)
        self._buckets.pop(address, None)  # re-insert: dict order is least recently failed first
        self._buckets[address] = (max(0.0, tokens - 1.0), now)
        while len(self._buckets) > self.max_addresses:
            self._buckets.pop(next(iter(self._buckets)))


class Gate:
    """ASGI middleware: Host/Origin checks on a loopback-bound server, security headers always."""

    def __init__(self, app, bind_host: str):
        self.app = app
        self.check_host = is_loopback_bind(bind_host)

    async def _refuse(self, send, status: int, code: str, title: str, detail: str) -> None:
        body = json.dumps({"type": "about:blank", "title": title, "status": status, "code": code, "detail": detail})
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/problem+json"), *COMMON_HEADERS],
            }
        )
        await send({"type": "http.response.body", "body": body.encode()})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.check_host:
            headers = {}
            for k, v in scope.get("headers", []):
                headers.setdefault(k, v.decode("latin-1"))
            host = _hostname(headers.get(b"host", ""))
            if host not in LOOPBACK_NAMES:
                return await self._refuse(
                    send,
                    421,
                    "misdirected_request",
                    "Misdirected request",
                    "this server is bound to the loopback and answers only Host 127.0.0.1, localhost or [::1]",
                )
            origin = headers.get(b"origin")
            if scope["method"] in STATE_CHANGING and origin is not None:
                parts = urlsplit(origin)
                if parts.scheme not in ("http", "https") or (parts.hostname or "").lower() not in LOOPBACK_NAMES:
                    return await self._refuse(
                        send, 403, "cross_origin", "Cross-origin request refused", "Origin must be a loopback origin"
                    )

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in dict(COMMON_HEADERS)]
                headers.extend(COMMON_HEADERS)
                ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if ctype.startswith(b"text/html"):
                    headers.append((b"content-security-policy", CSP.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
