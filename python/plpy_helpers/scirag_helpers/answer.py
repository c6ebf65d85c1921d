"""Grounded answers: numbered sources, optional question-aware compression, a model
answerer (google-genai or an OpenAI-compatible endpoint, through llm.get_llm()) and
the offline default, an extractive answerer that quotes the sentences (and table
rows) that best answer the question, cites each, and abstains when the evidence is
too weak.

``answer_question`` is pure: it takes retrieval rows, templates, intents and an LLM
client (or None), so tests/py exercise it without a database. ``answer_in_db`` is
the thin adapter the PL/Python function ``scirag.answer`` calls: scope check,
retraction exclusion, ``scirag.retrieve`` as the caller, template rows.

Traces are content-free: stage, status, duration, counts; never question or text.
"""
from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field

from scirag_helpers import checks, prompts
from scirag_helpers.llm import LLMError, parse_json_response

DEFAULTS = {
    "k": 10,                    # retrieval depth (the complete evidence view)
    "profile": "interactive",
    "retrieve": {},             # options passed through to scirag.retrieve
    "max_sources": 5,           # numbered sources shown to the answerer (VulcanLab top_n_contexts)
    "answerer": "auto",         # auto (model when configured, else extractive) | extractive | model
    "template": "default",
    "compress": False,          # or {"enabled": true, "relevance_floor": 0.0}
    "include_retracted": False, # answers exclude retracted documents unless asked
    "max_sentences": 3,
    "min_coverage": 0.3,        # extractive: weighted share of the question the evidence must cover
    "max_unknown_share": 0.15,  # extractive: abstain when this share of the question's terms occurs nowhere in the visible corpus
    "include_content": True,    # put chunk text into the "retrieval" view
    "preset": None,             # a scirag.presets name: passed to retrieve; its augmentation.top_n_contexts sets max_sources
}

NO_SOURCES = f"{prompts.ABSTAIN_LEAD} any evidence for this question within your scope."


class AnswerError(ValueError):
    """Bad options or an answerer that cannot run (the message says which)."""


def parse_options(options) -> dict:
    if options is None or options == "":
        options = {}
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except json.JSONDecodeError as exc:
            raise AnswerError(f"options is not valid JSON: {exc.msg}") from None
    if not isinstance(options, dict):
        raise AnswerError("options must be a JSON object")
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise AnswerError(f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(DEFAULTS))}")
    out = {**DEFAULTS, **options}
    if out["preset"] is not None and not isinstance(out["preset"], str):
        raise AnswerError("option preset must be a preset name")
    for key in ("k", "max_sources", "max_sentences"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or not 1 <= out[key] <= 200:
            raise AnswerError(f"option {key} must be an integer between 1 and 200")
    for key in ("min_coverage", "max_unknown_share"):
        if not isinstance(out[key], (int, float)) or isinstance(out[key], bool) or not 0 <= out[key] <= 1:
            raise AnswerError(f"option {key} must be a number between 0 and 1")
    if out["answerer"] not in ("auto", "extractive", "model"):
        raise AnswerError("option answerer must be auto, extractive or model")
    if not isinstance(out["retrieve"], dict):
        raise AnswerError("option retrieve must be a JSON object (options for scirag.retrieve)")
    comp = out["compress"]
    if isinstance(comp, bool):
        comp = {"enabled": comp}
    if not isinstance(comp, dict) or set(comp) - {"enabled", "relevance_floor"}:
        raise AnswerError('option compress must be true/false or {"enabled": bool, "relevance_floor": 0..1}')
    floor = comp.get("relevance_floor", 0.0)
    if not isinstance(floor, (int, float)) or isinstance(floor, bool) or not 0 <= floor <= 1:
        raise AnswerError("compress.relevance_floor must be a number between 0 and 1")
    out["compress"] = {"enabled": bool(comp.get("enabled", True)), "relevance_floor": float(floor)}
    for key in ("include_retracted", "include_content"):
        if not isinstance(out[key], bool):
            raise AnswerError(f"option {key} must be true or false")
    out["k"] = max(out["k"], out["max_sources"])
    return out


# ---------------------------------------------------------------------------------
# Text of a chunk
# ---------------------------------------------------------------------------------

def body_of(content: str, title: str | None) -> str:
    """Chunk text without the title/section header the chunker prepends for embedding."""
    if title and content.startswith(title) and "\n\n" in content:
        return content.split("\n\n", 1)[1].strip()
    return content.strip()


def make_sources(rows: list[dict], max_sources: int) -> list[dict]:
    """Numbered sources [1..n] from retrieval rows (rank order)."""
    out = []
    for row in rows[:max_sources]:
        cit = row.get("citation") or {}
        if isinstance(cit, str):
            cit = json.loads(cit)
        text = body_of(row["content"], row.get("title"))
        out.append({
            "n": len(out) + 1, "chunk_id": row["chunk_id"], "document_id": row["document_id"],
            "external_id": row.get("external_id"), "title": row.get("title"),
            "section_path": row.get("section_path"), "is_table": bool(row.get("is_table")),
            "citation": cit, "full_text": text, "text": text, "shown": "full"})
    return out


# ---------------------------------------------------------------------------------
# Terms: a light normaliser shared by scoring and coverage
# ---------------------------------------------------------------------------------

STOP = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each either else etc every few for from further get gets
getting give given gives gave go goes had has have having he her here hers him his how however i if in into is it
its itself just least less let like made make makes making many may me might more most much must my near need needs
no nor not now of off on once one only or other our out over own per please quite rather really same say says
shall she should so some such take taken takes taking tell than that the their them then there these they this those
through thus to too under until up upon us use used uses using very via was we were what when where whether which
while who whom whose why will with within without would yet you your
achieve achieved achieves approximately around big came come comes expect expected find found happen kind know
main mainly overall particular possible put seem seems show shown specific start starts started typical typically
want wanted way ways whatever well
""".split())

# Units and chemical names written two ways; maize/corn is one crop.
_PHRASES = [
    (r"cubic met(?:re|er)s?|m³", " m3 "),
    (r"fine particulate matter|fine particulates?|fine particles|pm\s?2\.5", " pm25 "),
    (r"\bpm\s?10\b", " pm10 "),
    (r"carbon dioxide|\bco2\b|co₂", " co2 "),
    (r"\bch4\b|ch₄", " methane "),
    (r"soil organic carbon", " soil carbon "),
    (r"\bper cent\b|\bpercent(?:age)?s?\b|%", " percent "),
    (r"\bannual(?:ly)?\b|\beach year\b|\ba year\b|\bper year\b|/\s?yr\b|\byr\b", " year "),
]
_WORD_SYNONYMS = {
    "t": "tonne", "tonnes": "tonne", "ton": "tonne", "tons": "tonne", "kilogram": "kg", "kilograms": "kg",
    "hectare": "ha", "hectares": "ha", "acres": "acre", "ac": "acre", "kilometre": "km", "kilometres": "km",
    "kilometer": "km", "kilometers": "km", "maize": "corn", "years": "year", "big": "large",
    "price": "cost", "prices": "cost", "priced": "cost",
}
# Verbs of change: a question says "fall", a paper says "declining".
_CHANGE = [(re.compile(r"^(declin|decreas|drop|fall|fell$)"), "decrea"),
           (re.compile(r"^(increas|rise|rising|rose$|grow|grew$)"), "increa")]
_WORD = re.compile(r"[a-z][a-z0-9]*|\d+(?:\.\d+)?")


def _stem(w: str) -> str:
    if w.isdigit() or len(w) <= 3:
        return w
    if w.endswith("'s"):
        w = w[:-2]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)]
            break
    w = re.sub(r"(ab|ib)ility$", r"\1le", w)
    # Truncation joins derivational forms (durable/durability, pellet/pelleting).
    return w[:6]


def terms(text: str, with_numbers: bool = False) -> list[str]:
    """Normalised content terms, in order (duplicates kept). With ``with_numbers``
    numbers count too (as "#80"): a number the question names is a strong cue."""
    t = (text or "").lower().replace("’", "'")
    for pat, rep in _PHRASES:
        t = re.sub(pat, rep, t)
    out = []
    for w in _WORD.findall(t.replace("-", " ")):
        w = _WORD_SYNONYMS.get(w, w)
        for pat, canon in _CHANGE:
            if pat.match(w):
                w = canon
                break
        if w in STOP or (len(w) < 2 and not w.isdigit()):
            continue
        if w.replace(".", "").isdigit():
            if with_numbers:
                out.append("#" + checks.normalize_number(w))
            continue  # otherwise numbers are scored separately (quantity preference)
        out.append(_stem(w))
    return out


def surface_words(question: str) -> dict[str, str]:
    """term -> the word the question used for it (to name what is missing)."""
    out: dict[str, str] = {}
    for w in re.findall(r"[A-Za-z][A-Za-z0-9-]*", question or ""):
        for t in terms(w):
            out.setdefault(t, w)
    return out


# ---------------------------------------------------------------------------------
# Evidence units: sentences of prose, rows of tables
# ---------------------------------------------------------------------------------

_ABBREV = re.compile(r"(?:\b(?:al|e\.g|i\.e|fig|figs|eq|eqs|no|vs|approx|ca|cf|st|dr|mr|ms|resp|ref|refs|tab|sect|vol|pp)\.)$", re.I)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_QUANT = re.compile(r"(\$\s?\d|\d\s?(%|°|‰)|\d\s?(?:[a-zA-Z]{1,5}(?:/[a-zA-Z0-9]+)*|m3|m³)\b|\(\s*[^)]*/[^)]*\)\s*:\s*[\d.,]+)")
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_ROW = re.compile(r"\s\|\s")


@dataclass
class Unit:
    n: int                       # source number
    order: int                   # position in the source
    text: str                    # quoted text (a sentence, or a rendered table row)
    terms: set = field(default_factory=set)
    ctx: set = field(default_factory=set)         # terms of the title and section path (count half)
    is_row: bool = False
    cells: list = field(default_factory=list)     # (header, value) for table rows
    has_number: bool = False
    has_quantity: bool = False


def split_sentences(paragraph: str) -> list[str]:
    parts = _SPLIT.split(paragraph.strip())
    out: list[str] = []
    for p in parts:
        if out and _ABBREV.search(out[-1]):
            out[-1] = out[-1] + " " + p
        else:
            out.append(p)
    return [re.sub(r"\s+", " ", s).strip() for s in out if s.strip()]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _numeric(cell: str) -> bool:
    return bool(re.fullmatch(r"[-+~<>≈]?\s?\$?\d[\d,]*(\.\d+)?\s?%?|[-+]?\d[\d,.]*\s?[-–]\s?\d[\d,.]*", cell.strip()))


def table_rows(lines: list[str]) -> list[list[tuple[str, str]]]:
    """Rows of a pipe table as (header, value) pairs; header lines (no numeric cell) are
    merged column-wise, so a second line of units joins its column names."""
    rows = [_cells(x) for x in lines if _ROW.search(x)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    header = [""] * width
    i = 0
    while i < len(rows) and not any(_numeric(c) for c in rows[i][1:]):
        # a shorter header line (a line of units under the names) belongs to the right-hand columns
        shift = width - len(rows[i]) if i > 0 else 0
        for j, c in enumerate(rows[i]):
            header[j + shift] = (header[j + shift] + " " + c).strip()
        i += 1
    if i == 0:
        return []   # carried-over rows without their header: the table chunk has them
    out = []
    for r in rows[i:]:
        out.append([(header[j] if j < width else "", c) for j, c in enumerate(r)])
    return out


def units_of(source: dict) -> list[Unit]:
    text = source["text"]
    ctx = set(terms(prompts.breadcrumb(source.get("title") or "", source.get("section_path"))))
    out: list[Unit] = []
    order = 0
    for block in re.split(r"\n\s*\n", text):
        lines = [x for x in block.split("\n") if x.strip()]
        if not lines:
            continue
        if sum(1 for x in lines if _ROW.search(x)) >= max(1, len(lines) // 2):
            for cells in table_rows(lines):
                rendered = "; ".join(f"{h}: {v}" if h else v for h, v in cells if v)
                u = Unit(source["n"], order, rendered, set(terms(rendered, True)), is_row=True, cells=cells)
                out.append(u)
                order += 1
            continue
        paragraphs, cur = [], []
        for x in lines:   # list items are sentences of their own
            if re.match(r"\s*([-*•]|\d{1,2}[.)])\s+\S", x) and cur:
                paragraphs.append(" ".join(cur))
                cur = []
            cur.append(re.sub(r"^\s*[-*•]\s+", "", x))
        if cur:
            paragraphs.append(" ".join(cur))
        for sent in (s for p in paragraphs for s in split_sentences(p)):
            words = re.findall(r"[A-Za-z]{2,}", sent)
            if len(words) < 4 or len(sent) < 25 or sent.isupper():
                continue   # headings, captions' stubs, extraction noise
            out.append(Unit(source["n"], order, sent, set(terms(sent, True))))
            order += 1
    for u in out:
        body = u.text
        u.ctx = ctx - u.terms
        u.has_number = bool(_NUM.search(body))
        # a table cell is a measurement: its unit sits in the column header
        u.has_quantity = bool(_QUANT.search(body)) or (u.is_row and u.has_number)
    return out


# ---------------------------------------------------------------------------------
# The extractive answerer
# ---------------------------------------------------------------------------------

@dataclass
class Extract:
    text: str
    abstained: bool
    units: list
    coverage: float
    missing: list
    reason: str


def _weights(qterms: list[str], units: list[Unit]) -> dict[str, float]:
    n = max(len(units), 1)
    w = {}
    for t in dict.fromkeys(qterms):
        df = sum(1 for u in units if t in u.terms or t in u.ctx)
        w[t] = math.log(1 + (n + 1) / (df + 0.5))
    return w


def _coverage(covered: set, w: dict, ctx: set = frozenset()) -> float:
    """IDF-weighted share of the question's terms in a unit (its title and section
    path count half)."""
    total = sum(w.values())
    if not total:
        return 0.0
    return sum(v if t in covered else (0.5 * v if t in ctx else 0.0) for t, v in w.items()) / total


def _row_text(u: Unit, keep_terms: set) -> str:
    """A table row with its label and the columns the question asks about."""
    if not u.cells:
        return u.text
    label = u.cells[0]
    keep = [c for c in u.cells[1:] if set(terms(c[0])) & keep_terms]
    if not keep or len(keep) == len(u.cells) - 1:
        keep = u.cells[1:]
    parts = [f"{label[0]}: {label[1]}" if label[0] else label[1]] + [f"{h}: {v}" if h else v for h, v in keep]
    return "; ".join(p for p in parts if p)


def extractive_answer(question: str, sources: list[dict], *, quantity: bool, max_sentences: int = 3,
                      min_coverage: float = DEFAULTS["min_coverage"],
                      max_unknown_share: float = DEFAULTS["max_unknown_share"],
                      unknown_words: set | None = None) -> Extract:
    """Quote the evidence that best answers the question, each piece cited.

    Scoring: a unit's score is the IDF-weighted share of the question's terms it
    contains (IDF over all units of the sources, so words every source uses count
    little; the source's title and section path count half), times a small prior for
    the source's retrieval rank, times a quantity factor (carrying a number with a
    unit helps, carrying none hurts) when the question asks for a quantity. Later
    picks must add uncovered question terms; a unit that shares the first pick's own
    distinctive terms is preferred, which is how a two-hop question ("the main
    residue of Harlan County" -> "barley straw" -> its ash content) gets both hops.

    Abstains when the picks together cover less than ``min_coverage`` of the question, or
    when ``max_unknown_share`` of the question's terms occur nowhere in the caller's
    visible corpus (``unknown_words``, from the keyword statistics): the question is
    about something no document in scope mentions."""
    qterms = terms(question, True)
    units: list[Unit] = []
    seen_text: set[str] = set()
    for s in sources:
        for u in units_of(s):
            key = re.sub(r"\W+", " ", u.text.lower()).strip()
            if key in seen_text:
                continue  # overlap carried between chunks: quote it once, from the better-ranked source
            seen_text.add(key)
            units.append(u)
    surface = surface_words(question)
    lead = f"{prompts.ABSTAIN_LEAD} an answer to this question"
    if not units or not qterms:
        reason = "no evidence text" if not units else "no content words in the question"
        return Extract(lead + ".", True, [], 0.0, [], reason)
    w = _weights(qterms, units)
    pool = set().union(*(u.terms | u.ctx for u in units))
    missing = [t for t in w if t not in pool]
    unknown = [t for t in missing if unknown_words is not None
               and any(t in terms(x) for x in unknown_words)]
    n_max = max(s["n"] for s in sources)

    def score(u: Unit) -> float:
        cov = _coverage(u.terms, w, u.ctx)
        prior = 1.0 - 0.04 * (u.n - 1) / max(n_max, 1)
        q = 1.0
        if quantity:
            q = 1.25 if u.has_quantity else (1.1 if u.has_number else 0.75)
        return cov * prior * q

    def names(ts) -> str:
        # the question's own words, never numbers (an abstention states no figure)
        words = list(dict.fromkeys(surface.get(t, t) for t in ts if not t.startswith("#")))
        return ", ".join(f'"{x}"' for x in words[:3])

    ranked = sorted(units, key=lambda u: (-score(u), u.n, u.order))
    best = ranked[0]
    best_cov = _coverage(best.terms, w, best.ctx)
    if unknown and len(unknown) / len(w) >= max_unknown_share:
        named = names(unknown)
        return Extract(f"{lead}: no document in scope mentions {named}.", True, [], best_cov, missing,
                       "question terms absent from the visible corpus")
    def too_weak(cov: float) -> Extract:
        named = names(missing)
        return Extract(lead + (f" (none of them mentions {named})." if named else "."),
                       True, [], cov, missing, "evidence too weak")

    if best_cov < 0.5 * min_coverage:
        return too_weak(best_cov)

    picked = [best]
    covered = set(best.terms) & set(w)
    # Bridge terms: distinctive things the first pick names beyond the question (e.g.
    # "barley straw"); a unit from another document that names them is the next hop.
    doc_of = {s["n"]: s.get("document_id") for s in sources}
    bridge = {t for t in best.terms - set(w)
              if not t.startswith("#") and sum(1 for u in units if t in u.terms) <= max(2, len(units) // 4)}
    present = sum(v for t, v in w.items() if t in pool) or 1.0
    while len(picked) < max_sentences:
        coverage = _coverage(covered, w)
        have_quantity = any(u.has_quantity for u in picked)
        if coverage >= 0.9 and (have_quantity or not quantity):
            break
        uncovered = {t: v for t, v in w.items() if t not in covered and t in pool}
        best_gain, choice = 0.0, None
        for u in ranked:
            if u in picked:
                continue
            # share of what the sources can still cover (terms no source has cannot be gained)
            gain = sum(v for t, v in uncovered.items() if t in u.terms) / present
            bridged = bool(u.terms & bridge) and doc_of.get(u.n) != doc_of.get(best.n)
            # A small gain is noise; a unit sharing what the first pick named (the next
            # hop of a two-hop question) needs less and ranks first.
            if gain < (0.12 if bridged else 0.2):
                continue
            # ... and it must be about the question in its own right, not a stray word match
            if _coverage(u.terms, w, u.ctx) < (0.4 if bridged else 0.6) * best_cov:
                continue
            if bridged:
                gain += 0.1
            if quantity and not have_quantity:
                gain *= 1.3 if u.has_quantity else 0.6
            if gain > best_gain:
                best_gain, choice = gain, u
        if choice is None:
            break
        picked.append(choice)
        covered |= choice.terms & set(w)
    coverage = _coverage(covered, w)
    if coverage < min_coverage:
        # judged on what the picks cover together: two hops may each cover half
        return too_weak(coverage)
    if quantity and not any(u.has_number for u in picked):
        return too_weak(coverage)   # a question asking for a figure is not answered without one
    keep_terms = set(w)
    text = " ".join(f"{_row_text(u, keep_terms) if u.is_row else u.text} [{u.n}]" for u in picked)
    return Extract(text, False, picked, coverage, missing, "ok")


# ---------------------------------------------------------------------------------
# Compression (optional)
# ---------------------------------------------------------------------------------

def compress_sources(question: str, sources: list[dict], floor: float, llm=None,
                     template: prompts.Template | None = None) -> dict:
    """Question-aware summaries of each source with a relevance floor.

    With a model: a JSON {"relevance", "summary"} per source; a malformed reply, or a
    summary carrying a number the passage does not, falls back to the full text and
    is counted. Without one: the passage's sentences and rows that share a question
    term, relevance = their weighted coverage. Sources below the floor are dropped
    from the prompt view only; the numbering (and so the citation list) is unchanged."""
    stats = {"enabled": True, "summariser": "model" if llm else "extractive", "relevance_floor": floor,
             "summarised": 0, "dropped": 0, "failures": 0, "tokens_before": 0, "tokens_after": 0}
    qterms = terms(question)
    for s in sources:
        full = s["full_text"]
        stats["tokens_before"] += prompts.approx_tokens(full)
        relevance, summary = None, None
        if llm is not None:
            try:
                system, prompt = prompts.compress_prompt(template, question, full)
                obj = parse_json_response(llm.complete(prompt, system=system, temperature=0.0, json_mode=True))
                rel, summ = (obj.get("relevance"), obj.get("summary")) if isinstance(obj, dict) else (None, None)
                if (not isinstance(rel, (int, float)) or isinstance(rel, bool) or not isinstance(summ, str)
                        or not summ.strip()):
                    raise LLMError("summary reply lacks a numeric relevance or a summary text")
                extra = set(checks.numbers_in(summ)) - set(checks.numbers_in(full))
                if extra:
                    raise LLMError(f"summary carries numbers the passage does not: {sorted(extra)[:3]}")
                relevance, summary = min(max(float(rel), 0.0), 1.0), summ.strip()
            except LLMError:
                stats["failures"] += 1
                s.update(text=full, shown="full", relevance=None)
                stats["tokens_after"] += prompts.approx_tokens(full)
                continue
        else:
            us = units_of({**s, "text": full})
            w = _weights(qterms, us) if us else {}
            keep = [u for u in us if u.terms & set(w)]
            relevance = _coverage(set().union(*(u.terms for u in keep)), w) if keep else 0.0
            summary = "\n".join(u.text for u in keep) if keep else ""
        if relevance < floor or not summary:
            s.update(text="", shown="dropped", relevance=relevance)
            stats["dropped"] += 1
            continue
        s.update(text=summary, shown="summary", relevance=round(relevance, 4))
        stats["summarised"] += 1
        stats["tokens_after"] += prompts.approx_tokens(summary)
    return stats


# ---------------------------------------------------------------------------------
# The answer
# ---------------------------------------------------------------------------------

def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


def citation_entry(s: dict) -> dict:
    cit = s.get("citation") or {}
    entry = {"n": s["n"], "document_id": s["document_id"], "external_id": s.get("external_id"),
             "chunk_id": s["chunk_id"], "title": s.get("title"), "section_path": s.get("section_path") or None,
             "pages": cit.get("pages"), "lines": cit.get("lines"), "cite": cit.get("cite")}
    return {k: v for k, v in entry.items() if v is not None}


def llm_label(llm) -> str:
    model = getattr(llm, "model", None)
    return f"{llm.name}:{model}" if model else llm.name


def answer_question(question: str, rows: list[dict], *, options: dict, template: prompts.Template,
                    intents: list[prompts.Intent], llm=None, compress_llm=None,
                    compress_template: prompts.Template | None = None, trace: dict | None = None,
                    unknown_words: set | None = None) -> dict:
    """The answer object for one question, from its retrieval rows (rank order).
    ``llm`` answers (None: the extractive answerer); ``compress_llm`` summarises when
    compression is on (None: extractive summaries); ``unknown_words`` are the
    question's words that occur nowhere in the caller's visible corpus (None: unknown)."""
    opts = options
    t_all = time.perf_counter()
    trace = trace if trace is not None else {"stages": []}
    stages = trace.setdefault("stages", [])
    intent = prompts.classify_intent(question, intents)
    quantity = prompts.wants_quantity(question, intent)
    sources = make_sources(rows, opts["max_sources"])

    # Compression (off by default).
    comp = {"enabled": False}
    if sources and opts["compress"]["enabled"]:
        t0 = time.perf_counter()
        comp = compress_sources(question, sources, opts["compress"]["relevance_floor"],
                                compress_llm if compress_template is not None else None, compress_template)
        stages.append({"stage": "compress", "status": "ok" if not comp["failures"] else "degraded", "ms": _ms(t0),
                       "candidates": len(sources), "summarised": comp["summarised"], "dropped": comp["dropped"],
                       "failures": comp["failures"]})
    shown = [s for s in sources if s["shown"] != "dropped"]

    # Generation.
    t0 = time.perf_counter()
    use_model = opts["answerer"] == "model" or (opts["answerer"] == "auto" and llm is not None)
    if use_model and llm is None:
        raise AnswerError('answerer "model" asked for, but no model is configured (SCIRAG_LLM_PROVIDER)')
    prompt_tokens = 0
    extract = None
    status = "ok"
    if not shown:
        text, answerer, abstained = NO_SOURCES, "none", True
        status = "skipped"
    elif use_model:
        system, prompt = prompts.answer_prompt(template, question, shown, intent)
        prompt_tokens = prompts.approx_tokens(system, prompt)
        try:
            text = llm.complete(prompt, system=system, temperature=0.0, max_tokens=1024).strip()
            answerer = llm_label(llm)
            if not text:
                raise LLMError("empty answer")
        except LLMError as exc:
            # Degrade, do not break: the offline answerer still answers, and the trace says why.
            status = "error"
            extract = extractive_answer(question, shown, quantity=quantity, max_sentences=opts["max_sentences"],
                                        min_coverage=opts["min_coverage"],
                                        max_unknown_share=opts["max_unknown_share"], unknown_words=unknown_words)
            text, answerer = extract.text, "extractive (model failed)"
            trace["model_error"] = type(exc).__name__
        abstained = checks.is_abstention(text)
    else:
        extract = extractive_answer(question, shown, quantity=quantity, max_sentences=opts["max_sentences"],
                                    min_coverage=opts["min_coverage"], max_unknown_share=opts["max_unknown_share"],
                                    unknown_words=unknown_words)
        text, answerer, abstained = extract.text, "extractive", extract.abstained
        prompt_tokens = prompts.approx_tokens(*(s["text"] for s in shown))
    stages.append({"stage": "generate", "status": status, "ms": _ms(t0), "candidates": len(shown),
                   "answerer": answerer.split(":")[0], "prompt_tokens": prompt_tokens})

    # Mechanical checks on what was shown.
    t0 = time.perf_counter()
    chk = checks.run_checks(text, shown)
    stages.append({"stage": "checks", "status": "ok", "ms": _ms(t0), "candidates": len(shown),
                   "citations_ok": chk["citations_ok"], "numbers_ok": chk["numbers_ok"]})

    cited = set(chk["cited"])
    result = {
        "answer": text,
        "abstained": abstained,
        "answerer": answerer,
        "intent": intent.intent,
        "citations": [citation_entry(s) for s in sources if s["n"] in cited],
        "sources": [{**citation_entry(s), "shown": s["shown"], **({"relevance": s["relevance"]} if "relevance" in s else {})}
                    for s in sources],
        "retrieval": [
            {"rank": r["rank"], "chunk_id": r["chunk_id"], "document_id": r["document_id"],
             "external_id": r.get("external_id"), "score": r.get("score"), "layers": _json(r.get("layers")),
             "title": r.get("title"), "section_path": r.get("section_path"), "is_table": bool(r.get("is_table")),
             "citation": _json(r.get("citation")), **({"content": r["content"]} if opts["include_content"] else {})}
            for r in rows],
        "prompt_sources": [{"n": s["n"], "chunk_id": s["chunk_id"], "document_id": s["document_id"],
                            "shown": s["shown"], "text": s["text"]} for s in shown],
        "checks": chk,
        "compression": comp,
    }
    if extract is not None:
        result["evidence"] = {"coverage": round(extract.coverage, 4), "reason": extract.reason,
                              "quantity_question": quantity}
    trace["ms"] = round(trace.get("ms", 0) + _ms(t_all), 2)
    result["trace"] = trace
    return result


def _json(v):
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
    return v


def abstention_without_evidence(reason: str, trace: dict) -> dict:
    return {"answer": NO_SOURCES, "abstained": True, "answerer": "none", "intent": None, "citations": [],
            "sources": [], "retrieval": [], "prompt_sources": [],
            "checks": checks.run_checks(NO_SOURCES, []), "compression": {"enabled": False},
            "evidence": {"coverage": 0.0, "reason": reason}, "trace": trace}


# ---------------------------------------------------------------------------------
# Inside PostgreSQL
# ---------------------------------------------------------------------------------

UNKNOWN_WORDS_SQL = """
SELECT coalesce(array_agg(DISTINCT w), '{}') AS words
FROM regexp_split_to_table($1, '[^[:alnum:]]+') AS w
WHERE w <> ''
  AND cardinality(tsvector_to_array(to_tsvector('english', w))) > 0
  AND NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('english', w))) AS l
                  JOIN scirag.kw_term_stats s ON s.lexeme = l)
"""


def unknown_words_in_db(plpy, question: str) -> set:
    """Words of the question that no document in the caller's scope contains (the
    keyword statistics are under row-level security, so this reveals nothing else)."""
    rows = plpy.execute(plpy.prepare(UNKNOWN_WORDS_SQL, ["text"]), [question])
    return set(rows[0]["words"] or []) if rows else set()


def apply_preset(plpy, opts: dict, explicit: set) -> None:
    """A named preset (scirag.presets) sets the number of sources (augmentation.
    top_n_contexts) and its retrieval profile, unless the call gave them, and is passed
    on to scirag.retrieve."""
    if not plpy.execute("SELECT to_regprocedure('scirag.preset_get(text)') IS NOT NULL AS ok")[0]["ok"]:
        raise AnswerError("option preset: this database has no presets (scirag.preset_get)")
    cfg = json.loads(plpy.execute(plpy.prepare("SELECT scirag.preset_get($1)::text AS c", ["text"]),
                                  [opts["preset"]])[0]["c"] or "{}")
    aug, ret = cfg.get("augmentation") or {}, cfg.get("retrieval") or {}
    if "max_sources" not in explicit and isinstance(aug.get("top_n_contexts"), int):
        opts["max_sources"] = aug["top_n_contexts"]
    if "profile" not in explicit and isinstance(ret.get("profile"), str):
        opts["profile"] = ret["profile"]
    opts["retrieve"] = {"preset": opts["preset"], **opts["retrieve"]}
    opts["k"] = max(opts["k"], opts["max_sources"])


def answer_in_db(plpy, GD, question: str, options, llm_factory=None) -> dict:
    """What scirag.answer runs. Retrieval happens through scirag.retrieve as the
    calling role, so row-level security decides what evidence exists; this function
    can only narrow the caller's scope (it turns retraction exclusion on for the call
    and restores the previous value), never widen it."""
    from scirag_helpers import llm as llm_mod

    t_all = time.perf_counter()
    raw = options if isinstance(options, dict) else json.loads(options or "{}")
    opts = parse_options(raw)
    if opts["preset"]:
        apply_preset(plpy, opts, explicit=set(raw) if isinstance(raw, dict) else set())
    trace: dict = {"stages": [], "exclude_retracted": not opts["include_retracted"]}
    if not (question or "").strip():
        raise AnswerError("question is empty")
    if plpy.execute("SELECT scirag.scope_is_empty() AS e")[0]["e"]:
        # Fail closed: no retrieval, no embedding, no model call.
        trace.update(scope="empty", ms=_ms(t_all))
        trace["stages"].append({"stage": "scope", "status": "empty", "ms": 0, "candidates": 0})
        return abstention_without_evidence("empty scope", trace)
    trace["scope"] = "ok"

    old = plpy.execute("SELECT current_setting('scirag.exclude_retracted', true) AS v")[0]["v"]
    t0 = time.perf_counter()
    if not opts["include_retracted"]:
        plpy.execute("SELECT set_config('scirag.exclude_retracted', 'on', true)")
    try:
        # Prepared per call, not cached in GD: GD outlives SET ROLE and redeploys.
        plan = plpy.prepare(
            "SELECT rank, chunk_id, document_id, external_id, score, layers::text AS layers, title, "
            "section_path, content, is_table, citation::text AS citation "
            "FROM scirag.retrieve($1, $2, $3, $4::jsonb)", ["text", "int4", "text", "text"])
        rows = [dict(r) for r in plpy.execute(plan, [question, opts["k"], opts["profile"],
                                                     json.dumps(opts["retrieve"])])]
        rtrace = plpy.execute("SELECT scirag.last_trace()::text AS t")[0]["t"]
    finally:
        if not opts["include_retracted"]:
            plpy.execute(plpy.prepare("SELECT set_config('scirag.exclude_retracted', coalesce($1, ''), true)",
                                      ["text"]), [old])
    for r in rows:
        r["layers"], r["citation"] = _json(r["layers"]), _json(r["citation"])
    trace["retrieve"] = json.loads(rtrace) if rtrace else None
    trace["stages"].append({"stage": "retrieve", "status": "ok" if rows else "empty", "ms": _ms(t0),
                            "candidates": len(rows)})

    llm = None
    if opts["answerer"] != "extractive" or opts["compress"]["enabled"]:
        llm = (llm_factory or llm_mod.get_llm)()
    template = prompts.load_template(plpy, "answer", opts["template"])
    compress_template = prompts.load_template(plpy, "compress") if (opts["compress"]["enabled"] and llm) else None
    intents = prompts.load_intents(plpy)
    unknown = unknown_words_in_db(plpy, question) if rows else set()
    result = answer_question(question, rows, options=opts, template=template, intents=intents,
                             llm=None if opts["answerer"] == "extractive" else llm, compress_llm=llm,
                             compress_template=compress_template, trace=trace, unknown_words=unknown)
    trace["ms"] = _ms(t_all)
    return result
