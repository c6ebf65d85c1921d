"""A polite Crossref REST API client and the sparse record scirag keeps.

The HTTP layer is a ``session`` object with a requests-compatible ``get(url, params=,
headers=, timeout=)`` returning something with ``status_code``, ``headers`` and
``text``: a ``requests.Session`` in production, a replay of recorded responses in
tests (``RecordedSession``), so no test touches the network.

Politeness (https://api.crossref.org, "etiquette"): a ``mailto`` from
SCIRAG_CROSSREF_MAILTO (query parameter and User-Agent, which puts the client in the
polite pool), a minimum interval between requests, retries with exponential backoff
on 429 and 5xx that honour ``Retry-After``, timeouts on every request, and a local
response cache so a re-run asks again only for what is stale.

Record shape (api_format.md of CrossRef/rest-api-doc): ``{"status": "ok",
"message-type": "work", "message": {...}}`` with ``title`` and ``container-title``
as string arrays, ``published``/``issued`` as partial dates (``date-parts``),
``is-referenced-by-count``, ``reference[].DOI``, ``license[].URL``, and update
relations: ``update-to`` on a notice (it updates the listed DOI) and ``updated-by``
on the updated work (Crossmark updates and, since 2025, Retraction Watch records,
each with ``type``, ``DOI``, ``source``, ``label`` and ``updated``).
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

BASE_URL = "https://api.crossref.org"
# Update types after which the work no longer stands (Crossref's update-type list);
# corrections and expressions of concern are recorded but do not retract.
RETRACTING_TYPES = {"retraction", "withdrawal", "removal"}
NOTICE_TYPES = RETRACTING_TYPES | {
    "partial_retraction",
    "expression_of_concern",
    "correction",
    "erratum",
    "corrigendum",
    "addendum",
    "clarification",
    "new_version",
    "new_edition",
}
DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
USER_AGENT = "scirag/1.0 (https://example.invalid/scirag"


class CrossrefError(RuntimeError):
    """A Crossref request that did not produce a usable answer (after retries)."""


def normalize_doi(value: str | None) -> str | None:
    """DOI in lower case without resolver prefix; None when value is not a DOI."""
    if not value:
        return None
    doi = value.strip()
    doi = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", "", doi, flags=re.IGNORECASE).strip().lower()
    return doi if DOI_RE.match(doi) else None


@dataclass
class Fetch:
    """Outcome of one lookup: status ok (message set), not_found, or error (error set)."""

    doi: str
    status: str
    message: dict | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0


@dataclass
class CrossrefClient:
    session: Any = None
    mailto: str | None = None
    base_url: str = BASE_URL
    min_interval: float = 0.2  # seconds between requests (5/s, under the polite-pool limit)
    timeout: tuple[float, float] = (5.0, 30.0)  # connect, read
    max_retries: int = 4
    backoff: float = 1.0  # first backoff; doubles per retry
    max_wait: float = 60.0  # never sleep longer than this for one retry
    cache_dir: Path | None = None
    cache_ttl: float = 7 * 86400.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _last: float | None = field(default=None, repr=False)
    requests_made: int = 0

    @classmethod
    def from_env(cls, session: Any = None, **overrides) -> "CrossrefClient":
        """Configuration from SCIRAG_CROSSREF_* (mailto, rate per second, cache folder, TTL days, timeout)."""
        env = os.environ
        kw: dict[str, Any] = {"mailto": env.get("SCIRAG_CROSSREF_MAILTO") or None}
        if env.get("SCIRAG_CROSSREF_RATE"):
            rate = float(env["SCIRAG_CROSSREF_RATE"])
            if rate <= 0:
                raise ValueError(f"SCIRAG_CROSSREF_RATE must be > 0 requests per second, got {rate}")
            kw["min_interval"] = 1.0 / rate
        cache = env.get("SCIRAG_CROSSREF_CACHE", str(Path.home() / ".cache" / "scirag" / "crossref"))
        kw["cache_dir"] = Path(cache) if cache else None
        if env.get("SCIRAG_CROSSREF_CACHE_DAYS"):
            kw["cache_ttl"] = float(env["SCIRAG_CROSSREF_CACHE_DAYS"]) * 86400.0
        if env.get("SCIRAG_CROSSREF_TIMEOUT"):
            kw["timeout"] = (5.0, float(env["SCIRAG_CROSSREF_TIMEOUT"]))
        kw.update(overrides)
        return cls(session=session, **kw)

    # -- HTTP --------------------------------------------------------------------------
    def _session(self):
        if self.session is None:
            import requests

            self.session = requests.Session()
        return self.session

    def _headers(self) -> dict[str, str]:
        ua = USER_AGENT + (f"; mailto:{self.mailto})" if self.mailto else ")")
        return {"User-Agent": ua, "Accept": "application/json"}

    def _throttle(self) -> None:
        now = self.clock()
        if self._last is not None:
            wait = self.min_interval - (now - self._last)
            if wait > 0:
                self.sleep(wait)
        self._last = self.clock()

    def _retry_after(self, value: str | None, attempt: int) -> float:
        """Seconds to wait: Retry-After (seconds or an HTTP date) when given, else backoff."""
        wait = self.backoff * (2**attempt)
        if value:
            value = value.strip()
            if value.isdigit():
                wait = float(value)
            else:
                try:
                    when = email.utils.parsedate_to_datetime(value)
                    wait = max(0.0, when.timestamp() - time.time())
                except (TypeError, ValueError):
                    pass
        return min(wait, self.max_wait)

    def _follow_rate_headers(self, headers) -> None:
        """Crossref states its limit per response (x-rate-limit-limit requests per
        x-rate-limit-interval, e.g. 50 per "1s"): never go faster than that."""
        try:
            limit = float(headers.get("x-rate-limit-limit") or headers.get("X-Rate-Limit-Limit"))
            interval = str(headers.get("x-rate-limit-interval") or headers.get("X-Rate-Limit-Interval")).strip()
            seconds = float(interval[:-1]) * {"s": 1, "m": 60, "h": 3600}[interval[-1]]
        except (TypeError, ValueError, KeyError, IndexError):
            return
        if limit > 0 and seconds > 0:
            self.min_interval = max(self.min_interval, seconds / limit)

    def get_json(self, path: str, params: dict | None = None, parse: bool = True) -> tuple[int, Any, int]:
        """GET base_url + path: (HTTP status, parsed JSON body or None, attempts).
        Retries 429/5xx and transport errors; raises CrossrefError when retries run out
        or a 200 body is not JSON. With ``parse=False`` the body comes back as text
        (arXiv's Atom feed goes through the same politeness and retries)."""
        params = dict(params or {})
        if self.mailto:
            params["mailto"] = self.mailto
        url = self.base_url + path
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            self._throttle()
            self.requests_made += 1
            try:
                resp = self._session().get(url, params=params, headers=self._headers(), timeout=self.timeout)
            except Exception as exc:  # requests.ConnectionError, Timeout, ...: retried like a 5xx
                last = f"{type(exc).__name__}: {exc}"
                if attempt < self.max_retries:
                    self.sleep(self._retry_after(None, attempt))
                continue
            status = int(resp.status_code)
            self._follow_rate_headers(resp.headers or {})
            if status == 429 or status >= 500:
                last = f"HTTP {status}"
                if attempt < self.max_retries:
                    self.sleep(self._retry_after((resp.headers or {}).get("Retry-After"), attempt))
                continue
            if status == 404:
                return 404, None, attempt + 1
            if status != 200:
                raise CrossrefError(f"{url}: HTTP {status}: {resp.text[:200]!r}")
            if not parse:
                return 200, resp.text, attempt + 1
            try:
                return 200, json.loads(resp.text), attempt + 1
            except ValueError as exc:
                raise CrossrefError(f"{url}: response is not JSON ({exc})") from None
        raise CrossrefError(f"{url}: gave up after {self.max_retries + 1} attempts (last: {last})")

    # -- cache -------------------------------------------------------------------------
    def _cache_path(self, key: str) -> Path | None:
        if not self.cache_dir:
            return None
        return self.cache_dir / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def _cache_get(self, key: str) -> dict | None:
        p = self._cache_path(key)
        if p is None or not p.is_file():
            return None
        try:
            entry = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if time.time() - float(entry.get("stored_at", 0)) > self.cache_ttl:
            return None
        return entry

    def _cache_put(self, key: str, status: int, body: Any) -> None:
        p = self._cache_path(key)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({"key": key, "status": status, "body": body, "stored_at": time.time()}), encoding="utf-8"
        )
        tmp.replace(p)  # atomic: a crash never leaves half an entry

    def _cached_get(self, key: str, path: str, params: dict | None = None, use_cache: bool = True):
        entry = self._cache_get(key) if use_cache else None
        if entry is not None:
            return entry["status"], entry["body"], 0, True
        status, body, attempts = self.get_json(path, params)
        self._cache_put(key, status, body)  # 404s too: a missing DOI is an answer
        return status, body, attempts, False

    # -- API ---------------------------------------------------------------------------
    def work(self, doi: str, use_cache: bool = True) -> Fetch:
        """The /works/{doi} record."""
        norm = normalize_doi(doi)
        if norm is None:
            return Fetch(doi=str(doi), status="error", error=f"not a DOI: {doi!r}")
        try:
            status, body, attempts, cached = self._cached_get(
                f"works/{norm}", "/works/" + quote(norm, safe="/"), None, use_cache
            )
        except CrossrefError as exc:
            return Fetch(doi=norm, status="error", error=str(exc))
        if status == 404:
            return Fetch(doi=norm, status="not_found", cached=cached, attempts=attempts)
        msg = body.get("message") if isinstance(body, dict) else None
        if not isinstance(msg, dict) or body.get("message-type") not in (None, "work"):
            return Fetch(doi=norm, status="error", error="response is not a Crossref work message", attempts=attempts)
        return Fetch(doi=norm, status="ok", message=msg, cached=cached, attempts=attempts)

    def search(
        self,
        title: str,
        author: str | None = None,
        year: int | None = None,
        use_cache: bool = True,
        min_similarity: float = 0.92,
    ) -> Fetch:
        """The work a document without DOI most likely is: a bibliographic query on title
        (and first author's family name), accepted only when the best item's title matches
        after normalisation (similarity >= min_similarity) and, when both are known, the
        years agree. Anything less is not_found: a wrong DOI would be worse than none."""
        import difflib

        if not title or not title.strip():
            return Fetch(doi="", status="error", error="no title to search by")
        params = {
            "query.bibliographic": title.strip()[:300],
            "rows": 5,
            "select": "DOI,title,issued,published,author,type",
        }
        family = (author or "").replace(",", " ").split()[-1:] if author else []
        if family:
            params["query.author"] = family[0]
        key = "search/" + json.dumps(params, sort_keys=True)
        try:
            status, body, attempts, cached = self._cached_get(key, "/works", params, use_cache)
        except CrossrefError as exc:
            return Fetch(doi="", status="error", error=str(exc))
        items = (
            ((body or {}).get("message") or {}).get("items") or [] if status == 200 and isinstance(body, dict) else []
        )
        want = title_key(title)
        best, best_score = None, 0.0
        for item in items:
            if not isinstance(item, dict) or not normalize_doi(item.get("DOI")):
                continue
            score = difflib.SequenceMatcher(None, want, title_key(_first(item.get("title")) or "")).ratio()
            got_year = (partial_date(item.get("published")) or partial_date(item.get("issued")) or "")[:4]
            if year and got_year and int(got_year) != int(year):
                continue
            if score > best_score:
                best, best_score = item, score
        if best is None or best_score < min_similarity:
            return Fetch(doi="", status="not_found", cached=cached, attempts=attempts)
        return Fetch(doi=normalize_doi(best["DOI"]), status="ok", message=best, cached=cached, attempts=attempts)

    def notices(self, doi: str, use_cache: bool = True) -> list[dict]:
        """Works that update this DOI (filter=updates:DOI): retraction and correction
        notices whose own record carries update-to, for records without updated-by."""
        norm = normalize_doi(doi)
        if norm is None:
            return []
        status, body, _, _ = self._cached_get(
            f"updates/{norm}", "/works", {"filter": f"updates:{norm}", "rows": 20}, use_cache
        )
        if status != 200 or not isinstance(body, dict):
            return []
        items = (body.get("message") or {}).get("items") or []
        return [i for i in items if isinstance(i, dict)]


# ---------------------------------------------------------------------------------------
# The sparse record kept in documents.crossref
# ---------------------------------------------------------------------------------------


def title_key(title: str) -> str:
    """Title compared for a bibliographic match: lower case, alphanumeric words only."""
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def _first(value) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    return value.strip() if isinstance(value, str) and value.strip() else None


def partial_date(value) -> str | None:
    """'YYYY', 'YYYY-MM' or 'YYYY-MM-DD' from a Crossref (partial) date; None if absent."""
    try:
        parts = value["date-parts"][0]
        nums = [int(p) for p in parts if p is not None][:3]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if not nums:
        return None
    return "-".join([f"{nums[0]:04d}"] + [f"{n:02d}" for n in nums[1:]])


def _update(u: dict, own_doi: str) -> dict | None:
    if not isinstance(u, dict):
        return None
    kind = str(u.get("type") or "").strip().lower().replace("-", "_").replace(" ", "_")
    if not kind:
        return None
    entry = {
        "type": kind,
        "doi": normalize_doi(u.get("DOI")),
        "source": u.get("source"),
        "label": u.get("label"),
        "date": partial_date(u.get("updated")),
    }
    return {k: v for k, v in entry.items() if v is not None}


def sparse_record(message: dict, notices: list[dict] | None = None) -> dict:
    """What scirag keeps of a Crossref work: venue, publisher, date, type, citation
    count, references with DOIs, license URLs and update notices, plus the verdict
    ``retracted`` (an updated-by relation, or a notice whose update-to names this
    DOI, of type retraction, withdrawal or removal)."""
    doi = normalize_doi(message.get("DOI")) or ""
    refs, seen, without_doi = [], set(), 0
    for r in message.get("reference") or []:
        d = normalize_doi(r.get("DOI")) if isinstance(r, dict) else None
        if d is None:
            without_doi += 1
        elif d not in seen and d != doi:
            seen.add(d)
            refs.append(d)
    updated_by = [u for u in (_update(x, doi) for x in message.get("updated-by") or []) if u]
    for n in notices or []:
        for u in n.get("update-to") or []:
            if normalize_doi(u.get("DOI") if isinstance(u, dict) else None) == doi:
                entry = _update({**u, "DOI": n.get("DOI")}, doi)
                if entry and not any(
                    e.get("doi") == entry.get("doi") and e["type"] == entry["type"] for e in updated_by
                ):
                    updated_by.append(entry)
    update_to = [u for u in (_update(x, doi) for x in message.get("update-to") or []) if u]
    retractions = [u for u in updated_by if u["type"] in RETRACTING_TYPES]
    authors = []
    for a in message.get("author") or []:
        if isinstance(a, dict):
            name = " ".join(x for x in (a.get("given"), a.get("family")) if isinstance(x, str) and x.strip()) or a.get(
                "name"
            )
            if isinstance(name, str) and name.strip():
                authors.append(name.strip())
    rec = {
        "doi": doi,
        "title": _first(message.get("title")),
        "authors": authors,
        "journal": _first(message.get("container-title")),
        "publisher": _first(message.get("publisher")),
        "type": message.get("type"),
        "published": partial_date(message.get("published"))
        or partial_date(message.get("published-print"))
        or partial_date(message.get("published-online"))
        or partial_date(message.get("issued")),
        "is_referenced_by_count": message.get("is-referenced-by-count"),
        "reference_count": message.get("reference-count"),
        "references": refs,
        "references_without_doi": without_doi,
        "licenses": sorted(
            {
                lic["URL"]
                for lic in message.get("license") or []
                if isinstance(lic, dict) and isinstance(lic.get("URL"), str)
            }
        ),
        "updated_by": updated_by,
        "update_to": update_to,
        "retracted": bool(retractions),
    }
    if retractions:
        rec["retraction"] = retractions[0]
    return {k: v for k, v in rec.items() if v not in (None, [], "")}


# ---------------------------------------------------------------------------------------
# Replay of recorded responses (tests, offline demos)
# ---------------------------------------------------------------------------------------


class RecordedResponse:
    def __init__(self, status: int, headers: dict | None, text: str):
        self.status_code, self.headers, self.text = status, dict(headers or {}), text


class RecordedSession:
    """A requests-compatible session that answers from recordings.

    Each recording file holds ``{"interactions": [{"request": {"path": "/works/10.x/y",
    "params": {...}}, "responses": [{"status": 200, "headers": {...}, "body": ...}]}]}``;
    a request matches on path and on the listed params (mailto and other extra params
    are ignored). Several responses are served in order (the last repeats), so a 429
    followed by a 200 replays a rate-limited request. A request that matches nothing
    gets a 404, like a DOI Crossref does not know. ``calls`` records every request."""

    def __init__(self, recordings: list[dict], base_url: str = BASE_URL):
        self.base_url = base_url
        self.interactions = []
        for rec in recordings:
            for it in rec.get("interactions", []):
                self.interactions.append({"request": it["request"], "responses": list(it["responses"]), "served": 0})
        self.calls: list[dict] = []

    @classmethod
    def from_files(cls, paths) -> "RecordedSession":
        return cls([json.loads(Path(p).read_text(encoding="utf-8")) for p in paths])

    @classmethod
    def from_dir(cls, folder, pattern: str = "crossref_*.json") -> "RecordedSession":
        return cls.from_files(sorted(Path(folder).glob(pattern)))

    def get(self, url, params=None, headers=None, timeout=None):
        from urllib.parse import unquote

        path = unquote(url[len(self.base_url) :] if url.startswith(self.base_url) else url)
        self.calls.append(
            {"path": path, "params": dict(params or {}), "headers": dict(headers or {}), "timeout": timeout}
        )
        for it in self.interactions:
            req = it["request"]
            if req["path"].lower() == path.lower() and all(
                str((params or {}).get(k)) == str(v) for k, v in (req.get("params") or {}).items()
            ):
                resp = it["responses"][min(it["served"], len(it["responses"]) - 1)]
                it["served"] += 1
                if resp.get("raise"):
                    raise ConnectionError(resp["raise"])
                body = resp.get("body")
                text = body if isinstance(body, str) else json.dumps(body)
                return RecordedResponse(int(resp["status"]), resp.get("headers"), text)
        return RecordedResponse(404, {"Content-Type": "text/plain"}, "Resource not found.")
