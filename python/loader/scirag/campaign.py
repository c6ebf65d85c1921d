"""Literature campaigns: discover, screen, resolve open access, fetch PDFs, report.

Every step reads what the database holds and adds rows (schema/campaigns); nothing is
rewritten. A step killed at any moment continues on rerun from what was committed:

- discover commits each result page together with its records and the page's next
  cursor, so a rerun starts at the page after the last committed one; a record a
  source already gave (same source id) is never added twice;
- screen writes one decision row per decision, the latest row per record counting;
- resolve writes one row per location found (or a ``none`` row) per included record;
- fetch writes the PDF to a temporary name, verifies it, renames it into place, then
  writes the download row: a rerun skips records with an ``ok`` download.

The HTTP layer is ``scirag.crossref.CrossrefClient`` (polite: mailto, minimum interval
between requests, retries on 429/5xx honouring Retry-After, timeouts) pointed at each
API's base URL; the base URLs can be overridden (SCIRAG_OPENALEX_URL,
SCIRAG_CROSSREF_URL, SCIRAG_ARXIV_URL) so tests serve recorded responses locally.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import psycopg

from scirag import db
from scirag.crossref import CrossrefClient, CrossrefError, normalize_doi

OPENALEX_URL = "https://api.openalex.org"
CROSSREF_URL = "https://api.crossref.org"
ARXIV_URL = "https://export.arxiv.org"
PAGE_SIZE = {"openalex": 200, "crossref": 100, "arxiv": 100}
MIN_INTERVAL = {"openalex": 0.1, "crossref": 0.2, "arxiv": 3.0}  # arXiv asks for one request per 3 s
MAX_PAGES = 1000


class CampaignError(ValueError):
    """A campaign step that cannot go on; the message says why."""


_passes: dict[str, int] = {}


def failpoint(name: str) -> None:
    """Crash-test hook: with SCIRAG_CAMPAIGN_KILL_AT=NAME:N in the environment, the N-th
    time this process passes the point NAME it kills itself with SIGKILL (what a
    `kill -9` or a power cut does: no cleanup, no commit). Unset, it does nothing. The
    points: decide.before_commit, llm.before_commit, resolve.before_commit (a record's
    locations inserted, not committed), fetch.file_in_place (a verified PDF renamed into
    place, its download row not yet written), embed.before_commit (a batch of screening
    embeddings inserted, not committed)."""
    spec = os.environ.get("SCIRAG_CAMPAIGN_KILL_AT")
    if not spec:
        return
    point, _, nth = spec.rpartition(":")
    if point != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == int(nth or 1):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------------------------
# Connections and campaigns
# ---------------------------------------------------------------------------------------


def connect(dsn: str | None = None) -> psycopg.Connection:
    """A connection acting as the campaign's role: SCIRAG_CAMPAIGN_ROLE when set; else a
    superuser login acts as scirag_loader (row-level security binds it), any other
    login as itself (it must be a member of scirag_loader)."""
    role = os.environ.get("SCIRAG_CAMPAIGN_ROLE")
    conn = psycopg.connect(dsn or db.default_dsn())
    if not role:
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = session_user").fetchone()[0]
        role = db.LOADER_ROLE if superuser else None
    conn.close()
    return db.connect(dsn, role=role)


@dataclass
class Campaign:
    id: int
    name: str
    owner_role: str
    query: str
    year_from: int | None
    year_to: int | None
    max_records: int
    mailto: str | None
    sources: list[str]
    exclusion_reasons: list[str]
    criteria: str | None
    screen_minilm: float = 0.0  # weight of MiniLM embeddings beside TF-IDF in the screener (0: TF-IDF only)


COLUMNS = (
    "id, name, owner_role, query, year_from, year_to, max_records, mailto, sources, exclusion_reasons, criteria,"
    " screen_minilm"
)


def parse_years(value: str | None) -> tuple[int | None, int | None]:
    if not value:
        return None, None
    m = re.fullmatch(r"\s*(\d{4})?\s*-\s*(\d{4})?\s*|\s*(\d{4})\s*", value)
    if not m:
        raise CampaignError(f"--years {value!r}: expected FROM-TO, FROM-, -TO or one year (e.g. 2000-2025)")
    if m.group(3):
        return int(m.group(3)), int(m.group(3))
    lo, hi = (int(m.group(1)) if m.group(1) else None), (int(m.group(2)) if m.group(2) else None)
    if lo and hi and lo > hi:
        raise CampaignError(f"--years {value!r}: the first year is after the last")
    return lo, hi


def create(
    conn,
    name: str,
    query: str,
    years: str | None = None,
    max_records: int = 2000,
    mailto: str | None = None,
    sources: Iterable[str] = ("openalex", "crossref", "arxiv"),
    reasons: Iterable[str] | None = None,
    criteria: str | None = None,
    minilm: float = 0.0,
) -> Campaign:
    if not name.strip() or len(name) > 200:
        raise CampaignError("campaign name: 1 to 200 characters")
    if not query.strip() or len(query) > 2000:
        raise CampaignError("--query: 1 to 2000 characters")
    if not 1 <= max_records <= 100_000:
        raise CampaignError("--max: between 1 and 100000")
    if mailto and not re.fullmatch(r"[^@\s]+@[^@\s]+", mailto):
        raise CampaignError(f"--mailto {mailto!r} is not an e-mail address")
    srcs = list(dict.fromkeys(s.strip() for s in sources if s.strip()))
    bad = [s for s in srcs if s not in PAGE_SIZE]
    if bad or not srcs:
        raise CampaignError(f"--sources: {', '.join(bad) or 'none given'}; choose from openalex, crossref, arxiv")
    if not (isinstance(minilm, (int, float)) and 0 <= minilm <= 4):
        raise CampaignError(f"--minilm {minilm!r}: a weight from 0 (TF-IDF only) to 4")
    lo, hi = parse_years(years)
    cols = ["name", "query", "year_from", "year_to", "max_records", "mailto", "sources", "criteria", "screen_minilm"]
    vals = [name.strip(), query.strip(), lo, hi, max_records, mailto, srcs, criteria, float(minilm)]
    if reasons:
        cols.append("exclusion_reasons")
        vals.append([r.strip() for r in reasons if r.strip()])
    try:
        conn.execute(f"INSERT INTO scirag.campaigns ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(vals))})", vals)
        conn.commit()
    except psycopg.errors.UniqueViolation:
        conn.rollback()
        raise CampaignError(f"campaign {name!r} exists already (for role {current_role(conn)})") from None
    return get(conn, name)


def current_role(conn) -> str:
    return conn.execute("SELECT current_user").fetchone()[0]


def get(conn, name: str) -> Campaign:
    rows = conn.execute(f"SELECT {COLUMNS} FROM scirag.campaigns WHERE name = %s ORDER BY id", (name,)).fetchall()
    if not rows:
        raise CampaignError(f"no campaign named {name!r} visible to role {current_role(conn)}")
    if len(rows) > 1:
        raise CampaignError(f"several campaigns named {name!r} are visible (roles {', '.join(r[2] for r in rows)})")
    return Campaign(*rows[0])


def folder_for(campaign: Campaign, base: Path | None = None) -> Path:
    """The campaign's folder: BASE/<id>-<slug> (BASE: SCIRAG_CAMPAIGNS_DIR or ./campaigns)."""
    base = Path(base or os.environ.get("SCIRAG_CAMPAIGNS_DIR") or "campaigns")
    slug = re.sub(r"[^a-z0-9]+", "-", campaign.name.lower()).strip("-")[:60] or "campaign"
    return base / f"{campaign.id}-{slug}"


# ---------------------------------------------------------------------------------------
# Records from the sources' JSON
# ---------------------------------------------------------------------------------------


def norm_title(title: str) -> str:
    """Lower case, accents stripped, alphanumeric words only: the deduplication key."""
    t = unicodedata.normalize("NFKD", title or "")
    t = "".join(c for c in t if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0-9]+", t.lower()))


def _s(value, limit: int) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if not isinstance(value, str) or not value.strip():
        return None
    return re.sub(r"\s+", " ", value).strip()[:limit]


def _year(value) -> int | None:
    try:
        y = int(value)
    except (TypeError, ValueError):
        return None
    return y if 1000 <= y <= 3000 else None


def inverted_abstract(index) -> str | None:
    """OpenAlex's abstract_inverted_index ({word: [positions]}) back to text."""
    if not isinstance(index, dict) or not index:
        return None
    pos: dict[int, str] = {}
    for word, places in index.items():
        if isinstance(places, list):
            for p in places:
                if isinstance(p, int) and 0 <= p < 20000:
                    pos[p] = str(word)
    return " ".join(pos[i] for i in sorted(pos)) or None


def _oa_location(loc) -> dict | None:
    if not isinstance(loc, dict):
        return None
    out = {
        "pdf_url": _s(loc.get("pdf_url"), 2000),
        "url": _s(loc.get("landing_page_url"), 2000),
        "license": _s(loc.get("license"), 100),
        "version": _s(loc.get("version"), 100),
    }
    return out if out["pdf_url"] or out["url"] else None


def openalex_record(work: dict) -> dict | None:
    """A campaign record from an OpenAlex work object; None without id or title."""
    if not isinstance(work, dict):
        return None
    wid = _s(work.get("id"), 500)
    title = _s(work.get("title") or work.get("display_name"), 2000)
    if not wid or not title:
        return None
    authors = []
    for a in work.get("authorships") or []:
        name = _s(((a or {}).get("author") or {}).get("display_name"), 200) if isinstance(a, dict) else None
        if name:
            authors.append(name)
    primary = work.get("primary_location") if isinstance(work.get("primary_location"), dict) else {}
    locations = [work.get("best_oa_location")] + list(work.get("locations") or [])
    oa = [loc for loc in (_oa_location(x) for x in locations) if loc]
    return {
        "source_id": wid.rsplit("/", 1)[-1],
        "doi": normalize_doi(work.get("doi")),
        "title": title,
        "abstract": _s(inverted_abstract(work.get("abstract_inverted_index")), 50000),
        "authors": "; ".join(authors)[:10000] or None,
        "year": _year(work.get("publication_year")),
        "venue": _s(((primary or {}).get("source") or {}).get("display_name"), 1000) if primary else None,
        "oa": {"locations": oa[:10]},
    }


def crossref_record(item: dict) -> dict | None:
    if not isinstance(item, dict):
        return None
    doi = normalize_doi(item.get("DOI"))
    title = _s(item.get("title"), 2000)
    if not doi or not title:
        return None
    authors = []
    for a in item.get("author") or []:
        if isinstance(a, dict):
            name = " ".join(x for x in (_s(a.get("given"), 100), _s(a.get("family"), 100)) if x)
            if name:
                authors.append(name)
    year = None
    for key in ("published", "issued", "published-print", "published-online"):
        parts = (item.get(key) or {}).get("date-parts") if isinstance(item.get(key), dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = _year(parts[0][0])
            if year:
                break
    abstract = _s(item.get("abstract"), 50000)
    if abstract:
        abstract = re.sub(r"<[^>]+>", " ", abstract)
        abstract = re.sub(r"\s+", " ", abstract).strip()
    licenses = [_s(x.get("URL"), 300) for x in item.get("license") or [] if isinstance(x, dict)]
    links = [
        {"pdf_url": _s(x.get("URL"), 2000), "license": licenses[0] if licenses else None, "version": None, "url": None}
        for x in item.get("link") or []
        if isinstance(x, dict) and "pdf" in str(x.get("content-type", "")).lower() and _s(x.get("URL"), 2000)
    ]
    return {
        "source_id": doi,
        "doi": doi,
        "title": title,
        "abstract": abstract,
        "authors": "; ".join(authors)[:10000] or None,
        "year": year,
        "venue": _s(item.get("container-title"), 1000),
        "oa": {"locations": links[:5], "licenses": [x for x in licenses if x][:5]},
    }


ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV_NS = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


def arxiv_records(text: str) -> tuple[list[dict], int | None]:
    """Records and the total result count from an arXiv API Atom feed."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise CampaignError(f"arXiv: response is not an Atom feed ({exc})") from None
    total = root.findtext(f"{OPENSEARCH}totalResults")
    out = []
    for entry in root.findall(f"{ATOM}entry"):
        url = _s(entry.findtext(f"{ATOM}id"), 500)
        title = _s(entry.findtext(f"{ATOM}title"), 2000)
        if not url or not title or "/abs/" not in url:
            continue
        arxiv_id = url.split("/abs/", 1)[1]
        pdf = next(
            (lk.get("href") for lk in entry.findall(f"{ATOM}link") if lk.get("title") == "pdf" and lk.get("href")),
            None,
        )
        authors = [_s(a.findtext(f"{ATOM}name"), 200) for a in entry.findall(f"{ATOM}author")]
        out.append(
            {
                "source_id": arxiv_id,
                "doi": normalize_doi(entry.findtext(f"{ARXIV_NS}doi")),
                "title": title,
                "abstract": _s(entry.findtext(f"{ATOM}summary"), 50000),
                "authors": "; ".join(a for a in authors if a)[:10000] or None,
                "year": _year((entry.findtext(f"{ATOM}published") or "")[:4]),
                "venue": "arXiv",
                # arXiv's own license is per paper and not in the API feed: unknown unless stated
                "oa": {"locations": [{"pdf_url": pdf, "url": url, "license": None, "version": "submittedVersion"}]}
                if pdf
                else {},
            }
        )
    return out, int(total) if total and total.isdigit() else None


# ---------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------


def source_query(source: str, query: str) -> str:
    """The campaign query as each source takes it: OpenAlex and arXiv read AND/OR/NOT and
    quotes (arXiv's words go to all: fields); Crossref ranks words and ignores operators."""
    if source == "crossref":
        return " ".join(w for w in re.findall(r"[\w-]+", query) if w not in ("AND", "OR", "NOT"))
    if source == "arxiv":
        out = []
        for tok in re.findall(r'"[^"]+"|\(|\)|[^\s()]+', query):
            if tok in ("AND", "OR", "(", ")"):
                out.append(tok)
            elif tok == "NOT":
                out.append("ANDNOT")
            else:
                out.append("all:" + (tok if tok.startswith('"') else tok))
        return " ".join(out)
    return query


def client_for(source: str, campaign: Campaign, session: Any = None, sleep: Callable | None = None) -> CrossrefClient:
    base = {
        "openalex": os.environ.get("SCIRAG_OPENALEX_URL", OPENALEX_URL),
        "crossref": os.environ.get("SCIRAG_CROSSREF_URL", CROSSREF_URL),
        "arxiv": os.environ.get("SCIRAG_ARXIV_URL", ARXIV_URL),
    }[source]
    kw: dict[str, Any] = {"mailto": campaign.mailto, "session": session, "base_url": base.rstrip("/")}
    kw["min_interval"] = float(os.environ.get("SCIRAG_CAMPAIGN_MIN_INTERVAL", MIN_INTERVAL[source]))
    if sleep:
        kw["sleep"] = sleep
    return CrossrefClient(**kw)


def fetch_page(source: str, client: CrossrefClient, campaign: Campaign, query: str, cursor: str, size: int):
    """(records, next cursor or None). Cursors: OpenAlex page numbers, Crossref's
    next-cursor, arXiv start offsets."""
    lo, hi = campaign.year_from, campaign.year_to
    if source == "openalex":
        params: dict[str, Any] = {"search": query, "per-page": size, "page": int(cursor)}
        filters = []
        if lo:
            filters.append(f"from_publication_date:{lo}-01-01")
        if hi:
            filters.append(f"to_publication_date:{hi}-12-31")
        if filters:
            params["filter"] = ",".join(filters)
        if os.environ.get("SCIRAG_OPENALEX_API_KEY"):
            params["api_key"] = os.environ["SCIRAG_OPENALEX_API_KEY"]
        status, body, _ = client.get_json("/works", params)
        if status != 200 or not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise CampaignError(f"OpenAlex: unexpected response (HTTP {status}) for page {cursor}")
        recs = [r for r in (openalex_record(w) for w in body["results"]) if r]
        count = (body.get("meta") or {}).get("count")
        # a full page may have a successor; a short or empty one is the last
        more = len(body["results"]) >= size and (not isinstance(count, int) or int(cursor) * size < count)
        return recs, str(int(cursor) + 1) if more else None
    if source == "crossref":
        params = {"query": query, "rows": size, "cursor": cursor}
        filters = []
        if lo:
            filters.append(f"from-pub-date:{lo}")
        if hi:
            filters.append(f"until-pub-date:{hi}")
        if filters:
            params["filter"] = ",".join(filters)
        status, body, _ = client.get_json("/works", params)
        msg = body.get("message") if isinstance(body, dict) else None
        if status != 200 or not isinstance(msg, dict) or not isinstance(msg.get("items"), list):
            raise CampaignError(f"Crossref: unexpected response (HTTP {status})")
        recs = [r for r in (crossref_record(i) for i in msg["items"]) if r]
        nxt = msg.get("next-cursor")
        return recs, nxt if msg["items"] and isinstance(nxt, str) and nxt != cursor else None
    # arXiv: Atom, not JSON: one GET through the same polite client's session and retries
    q = query
    if lo or hi:
        q = f"({q}) AND submittedDate:[{lo or 1991}01010000 TO {hi or 2999}12312359]"
    text = _get_text(client, "/api/query", {"search_query": q, "start": int(cursor), "max_results": size})
    recs, total = arxiv_records(text)
    start = int(cursor)
    more = bool(recs) and (total is None or start + size < total)
    return recs, str(start + size) if more else None


def _get_text(client: CrossrefClient, path: str, params: dict) -> str:
    """get_json's politeness and retries for a non-JSON body: the body comes back as text."""
    status, body, _ = client.get_json(path, params, parse=False)
    if status != 200:
        raise CampaignError(f"{client.base_url}{path}: HTTP {status}")
    return body


def _dedup_target(conn, campaign_id: int, rec: dict) -> int | None:
    if rec["doi"]:
        row = conn.execute(
            "SELECT min(id) FROM scirag.campaign_records WHERE campaign_id = %s AND doi = %s", (campaign_id, rec["doi"])
        ).fetchone()
        if row[0]:
            return row[0]
    if rec["norm_title"]:
        row = conn.execute(
            """SELECT min(id) FROM scirag.campaign_records
               WHERE campaign_id = %s AND norm_title = %s AND year IS NOT DISTINCT FROM %s""",
            (campaign_id, rec["norm_title"], rec["year"]),
        ).fetchone()
        return row[0]
    return None


def discover(
    conn,
    campaign: Campaign,
    sessions: dict | None = None,
    sleep: Callable | None = None,
    echo=print,
    max_pages: int | None = None,
) -> dict:
    """Search each source page by page until it has no more or --max records are kept.
    Each page and its records commit together; a rerun continues after the last page.
    ``max_pages`` bounds the pages fetched by this call (over all sources): the REST and
    MCP doors take a campaign a bounded step at a time."""
    summary = {}
    budget = max_pages if max_pages is not None else MAX_PAGES * len(PAGE_SIZE)
    for source in campaign.sources:
        q = source_query(source, campaign.query)
        conn.execute(
            """INSERT INTO scirag.campaign_queries (campaign_id, source, query) VALUES (%s, %s, %s)
               ON CONFLICT (campaign_id, source) DO NOTHING""",
            (campaign.id, source, q),
        )
        conn.commit()
        qid, q = conn.execute(
            "SELECT id, query FROM scirag.campaign_queries WHERE campaign_id = %s AND source = %s",
            (campaign.id, source),
        ).fetchone()
        last = conn.execute(
            """SELECT page_no, next_cursor FROM scirag.campaign_pages WHERE query_id = %s
               ORDER BY page_no DESC LIMIT 1""",
            (qid,),
        ).fetchone()
        kept = conn.execute("SELECT count(*) FROM scirag.campaign_records WHERE query_id = %s", (qid,)).fetchone()[0]
        page_no, cursor = (last[0] + 1, last[1]) if last else (1, "0" if source == "arxiv" else "1")
        if source == "crossref" and not last:
            cursor = "*"
        client = client_for(source, campaign, (sessions or {}).get(source), sleep)
        size = int(os.environ.get("SCIRAG_CAMPAIGN_PAGE_SIZE") or PAGE_SIZE[source])
        added = 0
        while cursor is not None and kept < campaign.max_records and page_no <= MAX_PAGES and budget > 0:
            budget -= 1
            try:
                recs, nxt = fetch_page(source, client, campaign, q, cursor, min(size, campaign.max_records))
            except (CrossrefError, CampaignError) as exc:
                echo(f"{source}: stopped at page {page_no}: {exc} (rerun to continue)")
                break
            recs = recs[: campaign.max_records - kept]
            if kept + len(recs) >= campaign.max_records:
                nxt = None
            n_new = 0
            with conn.transaction():
                for rec in recs:
                    rec["norm_title"] = norm_title(rec["title"])
                    dup = _dedup_target(conn, campaign.id, rec)
                    cur = conn.execute(
                        """INSERT INTO scirag.campaign_records
                             (campaign_id, query_id, source, source_id, doi, title, abstract, authors, year, venue,
                              norm_title, oa, duplicate_of)
                           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                           ON CONFLICT (campaign_id, source, source_id) DO NOTHING""",
                        (
                            campaign.id,
                            qid,
                            source,
                            rec["source_id"],
                            rec["doi"],
                            rec["title"],
                            rec["abstract"],
                            rec["authors"],
                            rec["year"],
                            rec["venue"],
                            rec["norm_title"],
                            json.dumps(rec["oa"]),
                            dup,
                        ),
                    )
                    n_new += cur.rowcount
                conn.execute(
                    """INSERT INTO scirag.campaign_pages (query_id, campaign_id, page_no, cursor, next_cursor, n_records)
                       VALUES (%s, %s, %s, %s, %s, %s)""",
                    (qid, campaign.id, page_no, cursor, nxt, n_new),
                )
            conn.commit()
            kept += n_new
            added += n_new
            page_no += 1
            cursor = nxt
        summary[source] = {"added": added, "kept": kept, "done": cursor is None or kept >= campaign.max_records}
        echo(f"{source}: {added} new records, {kept} in all" + ("" if summary[source]["done"] else " (not finished)"))
    return summary


# ---------------------------------------------------------------------------------------
# Screening
# ---------------------------------------------------------------------------------------


@dataclass
class ScreenState:
    record_ids: list[int]  # unique (non-duplicate) records, in id order
    texts: list[str]
    labeled: dict[int, int]  # position in record_ids -> 1 include / 0 exclude (current decisions)
    current: dict[int, str]  # record id -> current decision
    decided_order: list[tuple[int, str]]  # (record id, decision) of include/exclude decisions, oldest first
    missing_abstract: set[int]


def screen_state(conn, campaign: Campaign) -> ScreenState:
    rows = conn.execute(
        """SELECT id, title, coalesce(abstract, '') FROM scirag.campaign_records
           WHERE campaign_id = %s AND duplicate_of IS NULL ORDER BY id""",
        (campaign.id,),
    ).fetchall()
    ids = [r[0] for r in rows]
    pos = {rid: i for i, rid in enumerate(ids)}
    current = dict(
        conn.execute(
            "SELECT record_id, decision FROM scirag.campaign_current_decisions WHERE campaign_id = %s",
            (campaign.id,),
        ).fetchall()
    )
    labeled = {pos[r]: int(d == "include") for r, d in current.items() if d in ("include", "exclude") and r in pos}
    order = conn.execute(
        """SELECT record_id, decision FROM scirag.screening_decisions
           WHERE campaign_id = %s AND decision IN ('include', 'exclude') ORDER BY id""",
        (campaign.id,),
    ).fetchall()
    return ScreenState(
        ids, [f"{t} {a}".strip() for _, t, a in rows], labeled, current, order, {r[0] for r in rows if not r[2]}
    )


def stopping(state: ScreenState) -> dict:
    """The stopping rule as the reviewer sees it: consecutive irrelevant decisions since
    the last inclusion against the suggested threshold."""
    from scirag import screening

    run = 0
    for _, decision in state.decided_order:
        run = 0 if decision == "include" else run + 1
    threshold = screening.stop_after(len(state.record_ids))
    return {
        "screened": len(state.labeled),
        "records": len(state.record_ids),
        "included": sum(state.labeled.values()),
        "irrelevant_in_a_row": run,
        "stop_after": threshold,
        "suggest_stop": run >= threshold and len(state.labeled) > 0,
    }


EMBED_BATCH = 64


def record_embeddings(conn, campaign: Campaign, state: ScreenState, echo=None):
    """The MiniLM embeddings of the campaign's records (rows in ``state.record_ids``
    order). Those not stored yet are computed by the project's embedder and stored
    (one commit per batch of EMBED_BATCH, so a step stopped half way keeps what it
    computed); two screeners at once both compute a batch, the first stored wins."""
    import numpy as np

    from scirag_helpers.embedder import VERSION

    pos = {rid: i for i, rid in enumerate(state.record_ids)}
    E = np.zeros((len(state.record_ids), 384), dtype=np.float32)
    have = np.zeros(len(state.record_ids), dtype=bool)
    for rid, vec in conn.execute(
        "SELECT record_id, embedding::real[] FROM scirag.campaign_record_embeddings WHERE campaign_id = %s AND model = %s",
        (campaign.id, VERSION),
    ):
        if rid in pos:
            E[pos[rid]] = vec
            have[pos[rid]] = True
    missing = np.flatnonzero(~have)
    if len(missing):
        from scirag_helpers.embedder import Embedder

        (echo or (lambda m: print(m, file=sys.stderr, flush=True)))(
            f"embedding {len(missing)} records for the screener (MiniLM, once per record)"
        )
        embedder = Embedder(threads=1)
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            vecs = embedder.embed([state.texts[i] for i in batch])
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO scirag.campaign_record_embeddings (record_id, campaign_id, model, embedding)
                       VALUES (%s, %s, %s, %s::vector) ON CONFLICT (record_id, model) DO NOTHING""",
                    [
                        (state.record_ids[i], campaign.id, VERSION, "[" + ",".join(f"{x:.7g}" for x in v) + "]")
                        for i, v in zip(batch, vecs)
                    ],
                )
            failpoint("embed.before_commit")
            conn.commit()
            E[batch] = vecs
    return E


def next_to_screen(
    conn, campaign: Campaign, n: int = 1, waiting_first: bool = True
) -> tuple[list[dict], dict, str | None, int]:
    """The records to screen next: first those a model screener handed to a person
    (human_review; unless ``waiting_first`` is False), then the undecided ones the
    screener finds most likely relevant; with the stopping-rule figures, the model name
    and the training size. Records a person marked unsure are not shown again."""
    from scirag import screening

    state = screen_state(conn, campaign)
    skip = {i for i, rid in enumerate(state.record_ids) if rid in state.current and i not in state.labeled}
    model = screening.Model()
    model_name, training = None, len(state.labeled)
    if not state.record_ids:
        return [], stopping(state), None, 0
    if campaign.screen_minilm > 0:
        E = record_embeddings(conn, campaign, state)
        X = screening.features(state.texts, campaign.screen_minilm, embeddings=E)
        model.name += f"+minilm{campaign.screen_minilm:g}"
    else:
        X = screening.features(state.texts)
    labeled = dict(state.labeled)
    labeled.update({i: -1 for i in skip})  # unsure / waiting for a person: not ranked again
    waiting = [i for i in sorted(skip) if state.current[state.record_ids[i]] == "human_review"] if waiting_first else []
    y_known = {i: v for i, v in labeled.items() if v >= 0}
    if y_known and 0 < sum(y_known.values()) < len(y_known):
        done = list(labeled)
        import numpy as np

        pool = np.setdiff1d(np.arange(len(state.record_ids)), np.array(done, dtype=np.int64))
        if len(pool):
            train = np.array(list(y_known), dtype=np.int64)
            scores = model.scores(X, train, np.array(list(y_known.values()), dtype=np.int8), pool)
            top = np.argsort(-scores, kind="stable")[:n]
            picks, picked_scores = pool[top].tolist(), scores[top].tolist()
        else:
            picks, picked_scores = [], []
        model_name = model.name
    else:
        # no inclusion and exclusion yet: records in the order found
        picks = [i for i in range(len(state.record_ids)) if i not in labeled][:n]
        picked_scores = [None] * len(picks)
    picks, picked_scores = (waiting + picks)[:n], ([None] * len(waiting) + picked_scores)[:n]
    rows = []
    for i, s in zip(picks, picked_scores):
        rid = state.record_ids[i]
        title, abstract, year, authors = conn.execute(
            "SELECT title, abstract, year, authors FROM scirag.campaign_records WHERE id = %s", (rid,)
        ).fetchone()
        rows.append(
            {"record_id": rid, "title": title, "abstract": abstract, "year": year, "authors": authors, "score": s}
        )
    return rows, stopping(state), model_name, training


def decide(
    conn,
    campaign: Campaign,
    record_id: int,
    decision: str,
    reason: str | None = None,
    decider: str = "human",
    model: str | None = None,
    training_size: int | None = None,
    score: float | None = None,
) -> int:
    """Add a decision row (superseding the record's current one, if any)."""
    if decision not in ("include", "exclude", "unsure", "human_review"):
        raise CampaignError(f"decision {decision!r}: choose include, exclude, unsure or human_review")
    if decision == "exclude" and reason not in campaign.exclusion_reasons:
        raise CampaignError(
            f"exclusion reason {reason!r} is not one of the campaign's: {', '.join(campaign.exclusion_reasons)}"
        )
    ok = conn.execute(
        "SELECT 1 FROM scirag.campaign_records WHERE id = %s AND campaign_id = %s", (record_id, campaign.id)
    ).fetchone()
    if not ok:
        raise CampaignError(f"record {record_id} is not in campaign {campaign.name!r}")
    prev = conn.execute(
        """SELECT decision_id, decision, reason, decider, decided_by = current_user
           FROM scirag.campaign_current_decisions WHERE campaign_id = %s AND record_id = %s""",
        (campaign.id, record_id),
    ).fetchone()
    if prev and prev[1:] == (decision, reason, decider, True):
        # the same decision by the same person is already the current one (a rerun of a
        # step that was stopped): nothing to add
        return prev[0]
    did = conn.execute(
        """INSERT INTO scirag.screening_decisions
             (campaign_id, record_id, decision, reason, decider, model, training_size, score, supersedes)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
        (campaign.id, record_id, decision, reason, decider, model, training_size, score, prev[0] if prev else None),
    ).fetchone()[0]
    failpoint("decide.before_commit")
    conn.commit()
    return did


# ---------------------------------------------------------------------------------------
# Open access
# ---------------------------------------------------------------------------------------


def license_class(value: str | None) -> str:
    """The manifest license class of a stated license (OpenAlex/Unpaywall short names
    such as cc-by, or Creative Commons URLs); unknown when none is stated or it is not
    a recognised open license (publisher-specific, other-oa, implied-oa, ...)."""
    if not value:
        return "unknown"
    v = value.strip().lower()
    m = re.search(r"creativecommons\.org/(licenses|publicdomain)/([a-z-]+)", v)
    if m:
        v = "cc0" if m.group(2) in ("zero", "mark") else "cc-" + m.group(2)
    v = v.replace("_", "-").replace(" ", "-")
    if v in ("cc0", "cc-0", "public-domain", "pd", "cc-pdm"):
        return "public"
    if v in ("cc-by", "cc-by-sa"):
        return "open_commercial"
    if v.startswith("cc-by-") and ("nc" in v.split("-") or "nd" in v.split("-")):
        return "open_noncommercial"
    return "unknown"


def included_records(conn, campaign: Campaign) -> list[tuple]:
    return conn.execute(
        """SELECT r.id, r.doi, r.title, r.authors, r.year, r.venue, r.oa, r.source, r.source_id
           FROM scirag.campaign_current_decisions d JOIN scirag.campaign_records r ON r.id = d.record_id
           WHERE d.campaign_id = %s AND d.decision = 'include' ORDER BY r.id""",
        (campaign.id,),
    ).fetchall()


def resolve(conn, campaign: Campaign, unpaywall_session: Any = None, echo=print, limit: int | None = None) -> dict:
    """OA locations for included records without any yet: the locations the discovery
    source stated (OpenAlex best_oa_location/locations, arXiv PDF, Crossref PDF links),
    then Unpaywall by DOI when a --mailto is set and nothing direct was found. ``limit``
    bounds the records resolved by this call (``remaining`` says how many wait)."""
    counts = {"records": 0, "locations": 0, "none": 0, "remaining": 0}
    for rid, doi, _title, _a, _y, _v, oa, source, source_id in included_records(conn, campaign):
        if conn.execute("SELECT 1 FROM scirag.oa_resolutions WHERE record_id = %s LIMIT 1", (rid,)).fetchone():
            continue
        if limit is not None and counts["records"] >= limit:
            counts["remaining"] += 1
            continue
        counts["records"] += 1
        src = {"openalex": "openalex", "arxiv": "arxiv", "crossref": "crossref"}[source]
        locs = [(src, loc) for loc in (oa or {}).get("locations") or [] if isinstance(loc, dict)]
        # an arXiv record without a stated PDF still has one at a known place
        if source == "arxiv" and not any(loc.get("pdf_url") for _, loc in locs):
            locs.append(("arxiv", {"pdf_url": f"https://arxiv.org/pdf/{source_id}", "license": None}))
        if doi and campaign.mailto and not any(loc.get("pdf_url") for _, loc in locs):
            locs += [("unpaywall", loc) for loc in unpaywall(doi, campaign, unpaywall_session)]
        seen = set()
        with conn.transaction():
            for where, loc in locs:
                url = loc.get("pdf_url") or loc.get("url")
                if not url or url in seen or not re.match(r"^https?://", url) or len(url) > 2000:
                    continue
                seen.add(url)
                conn.execute(
                    """INSERT INTO scirag.oa_resolutions
                         (campaign_id, record_id, source, url, is_pdf, license_text, license, version)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
                    (
                        campaign.id,
                        rid,
                        where,
                        url,
                        bool(loc.get("pdf_url")),
                        (loc.get("license") or None) and str(loc["license"])[:200],
                        license_class(loc.get("license")),
                        (loc.get("version") or None) and str(loc["version"])[:100],
                    ),
                )
                counts["locations"] += 1
            if not seen:
                conn.execute(
                    "INSERT INTO scirag.oa_resolutions (campaign_id, record_id, source) VALUES (%s, %s, 'none')",
                    (campaign.id, rid),
                )
                counts["none"] += 1
            failpoint("resolve.before_commit")
        conn.commit()
    echo(f"resolved {counts['records']} records: {counts['locations']} locations, {counts['none']} without any")
    return counts


def unpaywall(doi: str, campaign: Campaign, session: Any = None) -> list[dict]:
    base = os.environ.get("SCIRAG_UNPAYWALL_URL", "https://api.unpaywall.org")
    client = CrossrefClient(mailto=None, session=session, base_url=base.rstrip("/"), min_interval=0.1)
    try:
        status, body, _ = client.get_json(f"/v2/{doi}", {"email": campaign.mailto})
    except CrossrefError:
        return []
    if status != 200 or not isinstance(body, dict):
        return []
    out = []
    for loc in [body.get("best_oa_location")] + list(body.get("oa_locations") or []):
        if isinstance(loc, dict) and (loc.get("url_for_pdf") or loc.get("url")):
            out.append(
                {
                    "pdf_url": _s(loc.get("url_for_pdf"), 2000),
                    "url": _s(loc.get("url"), 2000),
                    "license": _s(loc.get("license"), 100),
                    "version": _s(loc.get("version"), 100),
                }
            )
    return out


# ---------------------------------------------------------------------------------------
# Fetch: direct PDFs only, verified
# ---------------------------------------------------------------------------------------

MAX_PDF_BYTES = int(os.environ.get("SCIRAG_CAMPAIGN_MAX_PDF_MB", "50")) * 1024 * 1024
MAX_REDIRECTS = 3
USER_AGENT = "scirag-campaign/1.0"


class FetchFailed(Exception):
    def __init__(self, message: str, http_status: int | None = None, content_type: str | None = None, size=None):
        super().__init__(message)
        self.http_status, self.content_type, self.size = http_status, content_type, size


def _inside(folder: Path, target: Path) -> Path:
    resolved = target.resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise FetchFailed(f"refusing to write outside the campaign folder: {target}")
    return resolved


def _public_address(url: str) -> None:
    """Refuse a URL whose host resolves to a loopback, private, link-local or otherwise
    non-public address: PDF URLs come from third-party metadata, and the server runs
    fetch for API keys (SCIRAG_CAMPAIGN_FETCH_PRIVATE=1 allows them, e.g. for a
    repository on the local network, or tests)."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    if os.environ.get("SCIRAG_CAMPAIGN_FETCH_PRIVATE") == "1":
        return
    host = urlsplit(url).hostname or ""
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        raise FetchFailed(f"cannot resolve host {host[:200]!r}") from None
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if not ip.is_global:
            raise FetchFailed(f"refusing a non-public address: {host[:200]} is {ip}")


def download_pdf(url: str, target: Path, folder: Path, session: Any = None, timeout: float = 30.0) -> dict:
    """GET url (at most MAX_REDIRECTS redirects, http/https only), require HTTP 200, a PDF
    content type, the %PDF magic, at most MAX_PDF_BYTES and pages pypdf can count; write
    it to target (inside folder) through a temporary file. Returns the verification."""
    import hashlib
    from urllib.parse import urljoin

    import requests

    sess = session or requests.Session()
    target = _inside(folder, target)
    part = _inside(folder, target.with_name(target.name + ".part"))
    current = url
    for hop in range(MAX_REDIRECTS + 1):
        if not re.match(r"^https?://", current):
            raise FetchFailed(f"not an http(s) URL: {current[:200]}")
        _public_address(current)  # every hop: a public URL may redirect inward
        try:
            resp = sess.get(
                current, stream=True, allow_redirects=False, timeout=timeout, headers={"User-Agent": USER_AGENT}
            )
        except requests.RequestException as exc:
            raise FetchFailed(f"{type(exc).__name__}: {str(exc)[:300]}") from None
        if resp.status_code in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
            resp.close()
            if hop == MAX_REDIRECTS:
                raise FetchFailed(f"more than {MAX_REDIRECTS} redirects", resp.status_code)
            current = urljoin(current, resp.headers["Location"])
            continue
        break
    ctype = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if resp.status_code != 200:
        resp.close()
        raise FetchFailed(f"HTTP {resp.status_code}", resp.status_code, ctype)
    if ctype not in ("application/pdf", "application/x-pdf"):
        resp.close()
        raise FetchFailed(f"not a PDF: Content-Type {ctype or 'missing'}", 200, ctype)
    declared = resp.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > MAX_PDF_BYTES:
        resp.close()
        raise FetchFailed(f"larger than {MAX_PDF_BYTES} bytes (Content-Length {declared})", 200, ctype, int(declared))
    digest, size = hashlib.sha256(), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(part, "wb") as fh:
            for chunk in resp.iter_content(65536):
                size += len(chunk)
                if size > MAX_PDF_BYTES:
                    raise FetchFailed(f"larger than {MAX_PDF_BYTES} bytes", 200, ctype, size)
                if size == len(chunk) and not chunk.startswith(b"%PDF-"):
                    raise FetchFailed("body does not start with %PDF-", 200, ctype, size)
                digest.update(chunk)
                fh.write(chunk)
        if size == 0:
            raise FetchFailed("empty body", 200, ctype, 0)
        try:
            from pypdf import PdfReader

            pages = len(PdfReader(str(part)).pages)
        except Exception as exc:  # pypdf raises many kinds on a broken file
            raise FetchFailed(f"page count unreadable: {type(exc).__name__}", 200, ctype, size) from None
        if pages < 1:
            raise FetchFailed("PDF has no pages", 200, ctype, size)
        os.replace(part, target)
    finally:
        resp.close()
        part.unlink(missing_ok=True)
    return {"http_status": 200, "content_type": ctype, "bytes": size, "sha256": digest.hexdigest(), "pages": pages}


def fetch(conn, campaign: Campaign, folder: Path, session: Any = None, echo=print, limit: int | None = None) -> dict:
    """Download a verified PDF for each included record without one, from its resolved
    direct-PDF locations in order; then write the manifest. ``limit`` bounds the records
    tried by this call (``remaining`` says how many wait)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counts = {"ok": 0, "failed": 0, "skipped": 0, "no_pdf_location": 0, "remaining": 0}
    tried = 0
    for rid, *_ in included_records(conn, campaign):
        if conn.execute(
            "SELECT 1 FROM scirag.campaign_downloads WHERE record_id = %s AND status = 'ok' LIMIT 1", (rid,)
        ).fetchone():
            counts["skipped"] += 1
            continue
        locs = conn.execute(
            """SELECT id, url, license FROM scirag.oa_resolutions
               WHERE record_id = %s AND is_pdf AND url IS NOT NULL ORDER BY (license = 'unknown'), id""",
            (rid,),
        ).fetchall()
        if not locs:
            counts["no_pdf_location"] += 1
            continue
        if limit is not None and tried >= limit:
            counts["remaining"] += 1
            continue
        tried += 1
        for res_id, url, lic in locs:
            rel = f"pdfs/{rid}.pdf"
            try:
                v = download_pdf(url, folder / rel, folder, session)
                failpoint("fetch.file_in_place")
                conn.execute(
                    """INSERT INTO scirag.campaign_downloads
                         (campaign_id, record_id, resolution_id, url, status, http_status, content_type, bytes,
                          sha256, pages, path, license)
                       VALUES (%s, %s, %s, %s, 'ok', %s, %s, %s, %s, %s, %s, %s)""",
                    (campaign.id, rid, res_id, url, v["http_status"], v["content_type"], v["bytes"], v["sha256"])
                    + (v["pages"], rel, lic),
                )
                conn.commit()
                counts["ok"] += 1
                break
            except FetchFailed as exc:
                conn.execute(
                    """INSERT INTO scirag.campaign_downloads
                         (campaign_id, record_id, resolution_id, url, status, http_status, content_type, bytes,
                          error, license)
                       VALUES (%s, %s, %s, %s, 'failed', %s, %s, %s, %s, %s)""",
                    (campaign.id, rid, res_id, url, exc.http_status, exc.content_type, exc.size, str(exc)[:1000], lic),
                )
                conn.commit()
                counts["failed"] += 1
    manifest = write_manifest(conn, campaign, folder)
    counts["manifest_entries"] = manifest.read_text(encoding="utf-8").count("\n")
    echo(
        f"fetched {counts['ok']} PDFs ({counts['failed']} failed attempts, {counts['skipped']} already there, "
        f"{counts['no_pdf_location']} records without a direct PDF); manifest {manifest}"
    )
    return counts


def write_manifest(conn, campaign: Campaign, folder: Path) -> Path:
    """manifest.jsonl for `scirag ingest`: one line per verified PDF, with the license
    class its OA source stated (unknown when none)."""
    rows = conn.execute(
        """SELECT DISTINCT ON (d.record_id) d.record_id, d.path, d.license, d.sha256, r.title, r.authors, r.year,
                  r.doi, r.venue, r.source, r.source_id
           FROM scirag.campaign_downloads d JOIN scirag.campaign_records r ON r.id = d.record_id
           WHERE d.campaign_id = %s AND d.status = 'ok' ORDER BY d.record_id, d.id DESC""",
        (campaign.id,),
    ).fetchall()
    lines = []
    for rid, path, lic, sha, title, authors, year, doi, venue, source, source_id in rows:
        entry = {
            "id": f"campaign-{campaign.id}-{rid}",
            "path": path,
            "title": title,
            "authors": authors or None,
            "year": year,
            "doi": doi,
            "journal": venue,
            "source": f"campaign:{campaign.name}"[:200],
            "license": lic,
            "sha256": sha,
        }
        if source == "arxiv":
            entry["arxiv_id"] = source_id
        lines.append(json.dumps({k: v for k, v in entry.items() if v is not None}))
    target = _inside(folder, folder / "manifest.jsonl")
    tmp = target.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(tmp, target)
    return target


# ---------------------------------------------------------------------------------------
# Full-text eligibility: a decision on each retrieved report
# ---------------------------------------------------------------------------------------


def reports_to_assess(conn, campaign: Campaign, n: int = 10) -> list[dict]:
    """Retrieved reports of included records without a full-text decision yet."""
    rows = conn.execute(
        """SELECT DISTINCT ON (r.id) r.id, w.id, r.title, r.year, r.authors, w.path, w.pages, w.license
           FROM scirag.campaign_current_decisions d JOIN scirag.campaign_records r ON r.id = d.record_id
           JOIN scirag.campaign_downloads w ON w.record_id = r.id AND w.status = 'ok'
           WHERE d.campaign_id = %s AND d.decision = 'include' AND r.duplicate_of IS NULL
             AND NOT EXISTS (SELECT 1 FROM scirag.campaign_current_eligibility e WHERE e.record_id = r.id)
           ORDER BY r.id, w.id DESC LIMIT %s""",
        (campaign.id, n),
    ).fetchall()
    keys = ("record_id", "download_id", "title", "year", "authors", "pdf", "pages", "license")
    return [dict(zip(keys, r)) for r in rows]


def assess(conn, campaign: Campaign, record_id: int, decision: str, reason: str | None = None, decider="human") -> int:
    """A full-text eligibility decision on the record's retrieved report (superseding any
    earlier one; the same decision by the same person again adds nothing)."""
    if decision not in ("eligible", "exclude"):
        raise CampaignError(f"full-text decision {decision!r}: choose eligible or exclude")
    if decision == "exclude" and reason not in campaign.exclusion_reasons:
        raise CampaignError(
            f"exclusion reason {reason!r} is not one of the campaign's: {', '.join(campaign.exclusion_reasons)}"
        )
    if decision == "eligible":
        reason = None
    row = conn.execute(
        """SELECT w.id FROM scirag.campaign_downloads w JOIN scirag.campaign_current_decisions d
             ON d.record_id = w.record_id AND d.decision = 'include'
           WHERE w.record_id = %s AND w.campaign_id = %s AND w.status = 'ok' ORDER BY w.id DESC LIMIT 1""",
        (record_id, campaign.id),
    ).fetchone()
    if not row:
        raise CampaignError(f"record {record_id} has no retrieved report of an included record in {campaign.name!r}")
    prev = conn.execute(
        """SELECT eligibility_id, decision, reason, decider, decided_by = current_user
           FROM scirag.campaign_current_eligibility WHERE campaign_id = %s AND record_id = %s""",
        (campaign.id, record_id),
    ).fetchone()
    if prev and prev[1:] == (decision, reason, decider, True):
        return prev[0]
    eid = conn.execute(
        """INSERT INTO scirag.eligibility_decisions
             (campaign_id, record_id, download_id, decision, reason, decider, supersedes)
           VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id""",
        (campaign.id, record_id, row[0], decision, reason, decider, prev[0] if prev else None),
    ).fetchone()[0]
    failpoint("assess.before_commit")
    conn.commit()
    return eid


# ---------------------------------------------------------------------------------------
# PRISMA 2020
# ---------------------------------------------------------------------------------------


def prisma_counts(conn, campaign: Campaign) -> dict:
    """PRISMA 2020 flow counts from the campaign's rows."""
    one = lambda sql: conn.execute(sql, (campaign.id,)).fetchone()[0]  # noqa: E731
    per_source = dict(
        conn.execute(
            "SELECT source, count(*) FROM scirag.campaign_records WHERE campaign_id = %s GROUP BY source ORDER BY 1",
            (campaign.id,),
        ).fetchall()
    )
    reasons = dict(
        conn.execute(
            """SELECT reason, count(*) FROM scirag.campaign_current_decisions
               WHERE campaign_id = %s AND decision = 'exclude' GROUP BY reason ORDER BY 2 DESC, 1""",
            (campaign.id,),
        ).fetchall()
    )
    decided = """FROM scirag.campaign_current_decisions d JOIN scirag.campaign_records r ON r.id = d.record_id
                 WHERE d.campaign_id = %s AND r.duplicate_of IS NULL"""
    sought = one(f"SELECT count(*) {decided} AND d.decision = 'include'")
    retrieved = one(
        f"""SELECT count(*) {decided} AND d.decision = 'include' AND EXISTS (
              SELECT 1 FROM scirag.campaign_downloads w WHERE w.record_id = d.record_id AND w.status = 'ok')"""
    )
    ft_reasons = dict(
        conn.execute(
            f"""SELECT e.reason, count(*) FROM scirag.campaign_current_eligibility e
                WHERE e.campaign_id = %s AND e.decision = 'exclude' AND e.record_id IN (SELECT d.record_id {decided}
                  AND d.decision = 'include' AND EXISTS (SELECT 1 FROM scirag.campaign_downloads w
                                                         WHERE w.record_id = d.record_id AND w.status = 'ok'))
                GROUP BY 1 ORDER BY 2 DESC, 1""",
            (campaign.id, campaign.id),
        ).fetchall()
    )
    assessed = one(
        f"""SELECT count(*) {decided} AND d.decision = 'include'
              AND EXISTS (SELECT 1 FROM scirag.campaign_downloads w WHERE w.record_id = d.record_id AND w.status = 'ok')
              AND EXISTS (SELECT 1 FROM scirag.campaign_current_eligibility e WHERE e.record_id = d.record_id)"""
    )
    c = {
        "identified": sum(per_source.values()),
        "identified_per_source": per_source,
        "duplicates_removed": one(
            "SELECT count(*) FROM scirag.campaign_records WHERE campaign_id = %s AND duplicate_of IS NOT NULL"
        ),
        "screened": one(f"SELECT count(*) {decided} AND d.decision IN ('include', 'exclude')"),
        "awaiting_human_review": one(f"SELECT count(*) {decided} AND d.decision IN ('unsure', 'human_review')"),
        "excluded": sum(reasons.values()),
        "excluded_reasons": reasons,
        "sought_for_retrieval": sought,
        "not_retrieved": sought - retrieved,
        "retrieved": retrieved,
        # full text: a retrieved report is assessed once it has an eligibility decision
        "assessed_for_eligibility": assessed,
        "awaiting_full_text_assessment": retrieved - assessed,
        "reports_excluded": sum(ft_reasons.values()),
        "reports_excluded_reasons": ft_reasons,
        "included": assessed - sum(ft_reasons.values()),
    }
    return c


def prisma_violations(c: dict) -> list[str]:
    """The consistency rules of a PRISMA flow; an empty list when they hold."""
    out = []
    if c["identified"] != sum(c["identified_per_source"].values()):
        out.append("identified != sum over sources")
    if c["screened"] > c["identified"] - c["duplicates_removed"]:
        out.append("screened > identified - duplicates removed")
    if c["excluded"] > c["screened"]:
        out.append("excluded > screened")
    if c["excluded"] != sum(c["excluded_reasons"].values()):
        out.append("excluded != sum over reasons")
    if c["sought_for_retrieval"] != c["screened"] - c["excluded"]:
        out.append("sought for retrieval != screened - excluded")
    if c["sought_for_retrieval"] != c["retrieved"] + c["not_retrieved"]:
        out.append("sought != retrieved + not retrieved")
    if c["included"] > c["assessed_for_eligibility"] or c["assessed_for_eligibility"] > c["retrieved"]:
        out.append("included > assessed or assessed > retrieved")
    if c["assessed_for_eligibility"] + c["awaiting_full_text_assessment"] != c["retrieved"]:
        out.append("assessed + awaiting full-text assessment != retrieved")
    if c["reports_excluded"] != sum(c["reports_excluded_reasons"].values()):
        out.append("reports excluded != sum over reasons")
    if c["included"] != c["assessed_for_eligibility"] - c["reports_excluded"]:
        out.append("included != assessed - reports excluded")
    if any(v < 0 for v in c.values() if isinstance(v, int)):
        out.append("a negative count")
    return out


def _esc(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def prisma_svg(c: dict, title: str) -> str:
    """A PRISMA 2020 flow diagram (identification, screening, included) as SVG."""
    boxes = []  # (x, y, w, h, lines)
    src = ", ".join(f"{k} {v}" for k, v in c["identified_per_source"].items()) or "none"
    reasons = [f"{k}: {v}" for k, v in list(c["excluded_reasons"].items())[:8]]
    left = [
        ["Records identified", f"n = {c['identified']}", src],
        ["Records screened", f"n = {c['screened']}"],
        ["Reports sought for retrieval", f"n = {c['sought_for_retrieval']}"],
        ["Reports assessed for eligibility", f"n = {c['assessed_for_eligibility']}"],
        ["Studies included in review", f"n = {c['included']}"],
    ]
    right = [
        ["Duplicate records removed", f"n = {c['duplicates_removed']}"],
        ["Records excluded", f"n = {c['excluded']}"] + reasons,
        ["Reports not retrieved", f"n = {c['not_retrieved']}"],
        ["Reports excluded", f"n = {c['reports_excluded']}"]
        + [f"{k}: {v}" for k, v in list(c["reports_excluded_reasons"].items())[:8]]
        + (
            [f"awaiting assessment: {c['awaiting_full_text_assessment']}"] if c["awaiting_full_text_assessment"] else []
        ),
        None,
    ]
    y, h_row, out = 50, 110, []
    for i, (lb, rb) in enumerate(zip(left, right)):
        top = y + i * h_row
        boxes.append((20, top, 300, 80, lb))
        if rb:
            boxes.append((380, top, 320, max(80, 18 * len(rb) + 12), rb))
            out.append(f'<line x1="320" y1="{top + 40}" x2="380" y2="{top + 40}" class="a"/>')
        if i < len(left) - 1:
            out.append(f'<line x1="170" y1="{top + 80}" x2="170" y2="{top + h_row}" class="a"/>')
    for x, yy, w, h, lines in boxes:
        out.append(f'<rect x="{x}" y="{yy}" width="{w}" height="{h}" rx="4" class="b"/>')
        for k, line in enumerate(lines):
            cls = ' class="t"' if k == 0 else ""
            out.append(f'<text x="{x + 10}" y="{yy + 22 + 18 * k}"{cls}>{_esc(line)}</text>')
    height = y + h_row * len(left) + 120
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="720" height="{height}" viewBox="0 0 720 {height}">'
        "<style>.b{fill:#fff;stroke:#333}.a{stroke:#333;marker-end:url(#h)}text{font:13px sans-serif}"
        ".t{font-weight:bold}</style>"
        '<defs><marker id="h" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z"/></marker></defs>'
        f'<text x="20" y="30" class="t">PRISMA 2020 flow: {_esc(title)}</text>' + "".join(out) + "</svg>\n"
    )


def report(conn, campaign: Campaign, folder: Path, echo=print) -> dict:
    """prisma.json, prisma.svg and prisma.csv (every record: decision, reason, retrieval)
    in the campaign folder; raises CampaignError when the counts break a rule."""
    import csv

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    c = prisma_counts(conn, campaign)
    bad = prisma_violations(c)
    if bad:
        raise CampaignError(f"PRISMA counts inconsistent: {'; '.join(bad)}")
    _inside(folder, folder / "prisma.json").write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    _inside(folder, folder / "prisma.svg").write_text(prisma_svg(c, campaign.name), encoding="utf-8")
    rows = conn.execute(
        """SELECT r.id, r.source, r.source_id, r.doi, r.title, r.year, r.duplicate_of, d.decision, d.reason, d.decider,
                  d.decided_by, d.decided_at,
                  (SELECT w.path FROM scirag.campaign_downloads w WHERE w.record_id = r.id AND w.status = 'ok'
                   ORDER BY w.id DESC LIMIT 1),
                  (SELECT w.license FROM scirag.campaign_downloads w WHERE w.record_id = r.id AND w.status = 'ok'
                   ORDER BY w.id DESC LIMIT 1),
                  e.decision, e.reason
           FROM scirag.campaign_records r
           LEFT JOIN scirag.campaign_current_decisions d ON d.record_id = r.id
           LEFT JOIN scirag.campaign_current_eligibility e ON e.record_id = r.id
           WHERE r.campaign_id = %s ORDER BY r.id""",
        (campaign.id,),
    ).fetchall()
    with open(_inside(folder, folder / "prisma.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["record_id", "source", "source_id", "doi", "title", "year", "duplicate_of", "decision", "reason"]
            + ["decider", "decided_by", "decided_at", "pdf", "license", "eligibility", "eligibility_reason"]
        )
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
    echo(
        f"identified {c['identified']} ({', '.join(f'{k} {v}' for k, v in c['identified_per_source'].items())}), "
        f"duplicates {c['duplicates_removed']}, screened {c['screened']}, excluded {c['excluded']}, "
        f"sought {c['sought_for_retrieval']}, not retrieved {c['not_retrieved']}, assessed "
        f"{c['assessed_for_eligibility']} ({c['awaiting_full_text_assessment']} awaiting), reports excluded "
        f"{c['reports_excluded']}, included {c['included']}; "
        f"{folder / 'prisma.svg'}"
    )
    return c


# ---------------------------------------------------------------------------------------
# Model screener (the configured LLM): proposes, never excludes by default
# ---------------------------------------------------------------------------------------

LLM_MIN_CONFIDENCE = 0.8
LLM_SYSTEM = (
    "You screen records for a systematic review by title and abstract. Answer with one JSON object: "
    '{"decision": "include" or "exclude", "reason": one of the listed exclusion reasons (exclude only), '
    '"confidence": a number from 0 to 1}.'
)


def llm_prompt(campaign: Campaign, title: str, abstract: str) -> str:
    return (
        f"Review topic (search query): {campaign.query}\n"
        f"Eligibility criteria: {campaign.criteria or '(none stated: include what is on the topic)'}\n"
        f"Exclusion reasons: {'; '.join(campaign.exclusion_reasons)}\n\n"
        f"Title: {title}\nAbstract: {abstract}"
    )


def llm_screen(conn, campaign: Campaign, llm, n: int = 10, min_confidence: float = LLM_MIN_CONFIDENCE) -> dict:
    """The model screener decides the next ``n`` records. What it cannot decide well
    becomes a human_review row (never an implicit exclusion): a record without
    abstract, a failed call, a malformed answer, an exclusion reason outside the
    campaign's list, or a confidence below ``min_confidence``."""
    from scirag_helpers.llm import LLMError, parse_json_response

    rows, _, model, training = next_to_screen(conn, campaign, n, waiting_first=False)
    counts = {"include": 0, "exclude": 0, "human_review": 0}
    for r in rows:
        decision, reason, score = "human_review", None, None
        if not (r["abstract"] or "").strip():
            reason = "no abstract: a person decides"
        else:
            try:
                answer = parse_json_response(
                    llm.complete(llm_prompt(campaign, r["title"], r["abstract"]), system=LLM_SYSTEM, json_mode=True)
                )
                if not isinstance(answer, dict):
                    raise LLMError("not a JSON object")
                proposed = answer.get("decision")
                conf = answer.get("confidence")
                if proposed not in ("include", "exclude") or not isinstance(conf, (int, float)):
                    raise LLMError(f"decision {proposed!r}, confidence {conf!r}")
                score = float(conf)
                if proposed == "exclude" and answer.get("reason") not in campaign.exclusion_reasons:
                    reason = f"model proposed exclude with reason {str(answer.get('reason'))[:100]!r} not in the list"
                elif score < min_confidence:
                    reason = f"low confidence {score:.2f} (model proposed {proposed})"
                else:
                    decision, reason = proposed, answer.get("reason") if proposed == "exclude" else None
            except (LLMError, ValueError, TypeError) as exc:
                reason = f"model answer unusable: {str(exc)[:300]}"
        conn.execute(
            """INSERT INTO scirag.screening_decisions
                 (campaign_id, record_id, decision, reason, decider, decided_by, model, training_size, score)
               VALUES (%s, %s, %s, %s, 'llm', %s, %s, %s, %s)""",
            (campaign.id, r["record_id"], decision, reason, getattr(llm, "name", "llm")[:200], model, training, score),
        )
        failpoint("llm.before_commit")
        conn.commit()
        counts[decision] += 1
    return counts
