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
import os
import re
import time
import unicodedata
from dataclasses import dataclass, field

from scirag_helpers import answer_forms, checks, prompts
from scirag_helpers import text as text_rules
from scirag_helpers.llm import LLMError, parse_json_response

DEFAULTS = {
    "k": 10,  # retrieval depth (the complete evidence view)
    "profile": "interactive",
    "retrieve": {},  # options passed through to scirag.retrieve
    "max_sources": 5,  # numbered sources shown to the answerer (VulcanLab top_n_contexts)
    "answerer": "auto",  # auto (model when configured, else extractive) | extractive | model
    "template": "default",
    "compress": False,  # or {"enabled": true, "relevance_floor": 0.0}
    "include_retracted": False,  # answers exclude retracted documents unless asked
    "max_sentences": 3,
    "min_coverage": 0.3,  # extractive: weighted share of the question the evidence must cover
    "max_unknown_share": 0.15,  # extractive: abstain when this share of the question's terms occurs nowhere in the visible corpus
    "include_content": True,  # put chunk text into the "retrieval" view
    "form": True,  # lead with the answer in the question's form (answer_forms); false: the sentence answer alone
    "selector": True,  # with form: the trained sentence selector (answer_sentence) picks the answer; false: the linear scorers
    "preset": None,  # a scirag.presets name: passed to retrieve; its augmentation.top_n_contexts sets max_sources
    # Evidence building (VulcanLab stages 2-3), each off unless asked for or a preset turns it on:
    "enrich": False,  # parent enrichment: true or {"min_word_count", "max_word_count"} (scirag.enrich_chunks)
    "consolidate": False,  # consolidation: true or {"coverage_threshold", "line_gap", "min_content_length",
    #   "enrich_from_parent"} (scirag.consolidate)
    "min_sentences": None,  # drop prose chunks with fewer sentences (VulcanLab min_sentence_count filter)
}
ENRICH_KEYS = {"min_word_count": (0, 100000), "max_word_count": (1, 100000)}
CONSOLIDATE_KEYS = {"coverage_threshold", "line_gap", "min_content_length", "enrich_from_parent"}

NO_SOURCES = f"{prompts.ABSTAIN_LEAD} any evidence for this question within your scope."
NOT_ANSWERED = f"{prompts.ABSTAIN_LEAD} an answer to this question within your scope."
# Abstentions of the sentence answerer that name what is missing (a dataset, size or
# term no source mentions) always stand; after a merely weak sentence match the form
# model may answer (WEAK_MATCH_FORMS below).
NAMED_GAPS = frozenset({"question entities absent from the evidence", "question terms absent from the visible corpus"})
# After a weak sentence match the form model answers only questions whose answer is a
# decision (yes/no): a "what/which" question without a covering sentence is more often
# a near miss (a dataset or size the paper does not report) than a phrasing gap.
WEAK_MATCH_FORMS = frozenset({"yes_no"})


def form_may_answer(question: str, abstained: bool, reason: str | None) -> bool:
    """Whether the answer form may answer after the sentence answerer's verdict."""
    if not abstained:
        return True
    if reason in NAMED_GAPS:
        return False
    return answer_forms.question_type(question) in WEAK_MATCH_FORMS


MAX_QUESTION_CHARS = 4000
UNSUPPORTED = (
    f"{prompts.ABSTAIN_LEAD} an answer that passes the supports check: no sentence of the drafted "
    "answer is held by the source it cites."
)


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
    for key in ("include_retracted", "include_content", "form", "selector"):
        if not isinstance(out[key], bool):
            raise AnswerError(f"option {key} must be true or false")
    en = out["enrich"]
    if isinstance(en, bool):
        en = {"enabled": en}
    if not isinstance(en, dict) or set(en) - set(ENRICH_KEYS) - {"enabled"}:
        raise AnswerError('option enrich must be true/false or {"min_word_count": int, "max_word_count": int}')
    for key, (lo, hi) in ENRICH_KEYS.items():
        v = en.get(key, 150 if key == "min_word_count" else 1000)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise AnswerError(f"enrich.{key} must be an integer between {lo} and {hi}")
        en[key] = v
    out["enrich"] = {"enabled": bool(en.get("enabled", True)), **{k: en[k] for k in ENRICH_KEYS}}
    co = out["consolidate"]
    if isinstance(co, bool):
        co = {"enabled": co}
    if not isinstance(co, dict) or set(co) - CONSOLIDATE_KEYS - {"enabled"}:
        raise AnswerError(
            "option consolidate must be true/false or an object with "
            + ", ".join(sorted(CONSOLIDATE_KEYS))
            + " (validated by scirag.consolidate)"
        )
    out["consolidate"] = {"enabled": bool(co.get("enabled", True)), **{k: v for k, v in co.items() if k != "enabled"}}
    ms = out["min_sentences"]
    if ms is not None and (not isinstance(ms, int) or isinstance(ms, bool) or not 1 <= ms <= 1000):
        raise AnswerError("option min_sentences must be null or an integer between 1 and 1000")
    out["k"] = max(out["k"], out["max_sources"])
    return out


# ---------------------------------------------------------------------------------
# Text of a chunk
# ---------------------------------------------------------------------------------


def body_of(row: dict) -> str:
    """The text a source shows: the row's ``body`` (chunks.body, stored by the loader
    without the title/section prefix that ``content`` carries for embedding and
    search; for a consolidated group or an enriched chunk, the stage's text)."""
    if row.get("body") is None:
        raise AnswerError(f"evidence row for chunk {row.get('chunk_id')} has no body (chunks.body)")
    return row["body"].strip()


def make_sources(rows: list[dict], max_sources: int) -> list[dict]:
    """Numbered sources [1..n] from retrieval rows (rank order)."""
    out = []
    for row in rows[:max_sources]:
        cit = row.get("citation") or {}
        if isinstance(cit, str):
            cit = json.loads(cit)
        text = body_of(row)
        out.append(
            {
                "n": len(out) + 1,
                "chunk_id": row["chunk_id"],
                "document_id": row["document_id"],
                "external_id": row.get("external_id"),
                "title": row.get("title"),
                "section_path": row.get("section_path"),
                "is_table": bool(row.get("is_table")),
                "citation": cit,
                "full_text": text,
                "text": text,
                "shown": "full",
            }
        )
    return out


# ---------------------------------------------------------------------------------
# Terms: a light normaliser shared by scoring and coverage
# ---------------------------------------------------------------------------------

STOP = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during either else etc every few for from further get gets
getting give given gives gave go goes had has have having he her here hers him his how however i if in into is it
its itself just least less let like made make makes making many may me might more most much must my near need needs
no nor not now of off on once one only or other our out over own per please quite rather really same say says
shall she should so some such take taken takes taking tell than that the their them then there these they this those
through thus to too under until up upon us use used uses using very via was we were what when where whether which
while who whom whose why will with within without would yet you your
achieve achieved achieves approximately around big came come comes expect expected find found happen kind know
main mainly overall particular possible put seem seems show shown specific start starts started typical typically
want wanted way ways whatever well reach reaches reached obtain obtains obtained attain attains attained
""".split()
)

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
    "t": "tonne",
    "tonnes": "tonne",
    "ton": "tonne",
    "tons": "tonne",
    "kilogram": "kg",
    "kilograms": "kg",
    "hectare": "ha",
    "hectares": "ha",
    "acres": "acre",
    "ac": "acre",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "maize": "corn",
    "years": "year",
    "big": "large",
    "price": "cost",
    "prices": "cost",
    "priced": "cost",
}
# Verbs of change: a question says "fall", a paper says "declining".
_CHANGE = [
    (re.compile(r"^(declin|decreas|drop|fall|fell$)"), "decrea"),
    (re.compile(r"^(increas|rise|rising|rose$|grow|grew$)"), "increa"),
]
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

_QUANT = re.compile(
    r"(\$\s?\d|\d\s?(%|°|‰)|\d\s?(?:[a-zA-Z]{1,5}(?:/[a-zA-Z0-9]+)*|m3|m³)\b|\(\s*[^)]*/[^)]*\)\s*:\s*[\d.,]+)"
)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_ROW = re.compile(r"\s\|\s")
_LABEL = re.compile(r"^\s*(?:Table|Figure|Fig\.)\s+[A-Z]?\d+[a-z]?\s*[:.]\s*")


@dataclass
class Unit:
    n: int  # source number
    order: int  # position in the source
    text: str  # quoted text (a sentence, or a rendered table row)
    terms: set = field(default_factory=set)
    ctx: set = field(default_factory=set)  # terms of the title and section path (count half)
    is_row: bool = False
    cells: list = field(default_factory=list)  # (header, value) for table rows
    has_number: bool = False
    has_quantity: bool = False
    is_caption: bool = False  # a table or figure caption: describes, rarely answers


def table_rows(lines: list[str]) -> list[list[tuple[str, str]]]:
    """Rows of a pipe table as (column name, cell) pairs, the label first: the same
    reading of the table (checks.parse_table) as the table-cell answerer and the
    supports check use."""
    t = checks.parse_table("\n".join(lines))
    if t is None:
        return []
    label_name = t["columns"][0] if t["columns"] else ""
    return [
        [(label_name, " ".join(x for x in (r["group"], r["label"]) if x))] + checks.row_columns(t, r) for r in t["rows"]
    ]


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
        # list items are sentences of their own, also when the loader ran them into one line
        lines = [y for x in lines for y in re.split(r"\s+(?=[•▪◦]\s)", x)]
        for x in lines:
            if re.match(r"\s*([-*•]|\d{1,2}[.)])\s+\S", x) and cur:
                paragraphs.append(" ".join(cur))
                cur = []
            cur.append(re.sub(r"^\s*[-*•]\s+", "", x))
        if cur:
            paragraphs.append(" ".join(cur))
        for sent in (s for p in paragraphs for s in checks.split_sentences(p)):
            words = re.findall(r"[A-Za-z]{2,}", sent)
            if len(words) < 4 or len(sent) < 25 or sent.isupper():
                continue  # headings, captions' stubs, extraction noise
            out.append(Unit(source["n"], order, sent, set(terms(sent, True))))
            order += 1
    for u in out:
        body = _LABEL.sub("", u.text)  # "Table 5:" is a name, not a figure
        u.ctx = ctx - u.terms
        u.is_caption = body != u.text
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


_REFS = re.compile(r"\s?\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]")


def strip_refs(sentence: str) -> str:
    """A quoted sentence without the paper's own reference markers ("previous work
    [1]"): in an answer they would read as citations of the numbered sources."""
    return _REFS.sub("", sentence)


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


# ---------------------------------------------------------------------------------
# What the question names and what it asks for
# ---------------------------------------------------------------------------------

_ENTITY_TOKEN = re.compile(r"[A-Za-z0-9][\w.@+/-]*[\w%+]|[A-Za-z0-9]")
_ENTITY_SUFFIX = re.compile(r"-(?:parameters?|params?|based|level|scale|sized?|style|like|only)$", re.I)
_WH = re.compile(r"\b(what|which|how many|how much)\s+", re.I)
_ATTR_END = frozenset(
    """does do did is are was were has have had can could will would make makes made
of for in on with at to by from that than ends end""".split()
)
_NEGATION = re.compile(r"\b(without|w/o|no)\b", re.I)


def _norm_entity(text: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", unicodedata.normalize("NFKC", text or "").lower())


def question_entities(question: str) -> list[str]:
    """The things a question names: words with a capital letter after its first word
    (Reptile, Mini-ImageNet, TPUv3, GPUs), and words with a digit (5-shot, 540B,
    hits@10, 13.25). A source that names none of them is about something else."""
    out: list[str] = []
    toks = _ENTITY_TOKEN.findall(question or "")
    for i, tok in enumerate(toks):
        t = tok.rstrip(".")
        if t.lower().endswith("'s") or t.endswith("’s"):
            t = t[:-2]
        t = _ENTITY_SUFFIX.sub("", t)
        digit = any(c.isdigit() for c in t)
        upper = any(c.isupper() for c in t[1:]) or (t[:1].isupper() and i > 0)
        if not (digit or upper) or (not digit and t.lower() in STOP):
            continue
        if re.fullmatch(r"[A-Z]{2,}s|[A-Z][a-z]+[a-rt-z]s", t):  # GPUs, Pods: the singular matches both
            t = t[:-1]
        if len(_norm_entity(t)) < 2:
            continue
        out.append(t)
    return list(dict.fromkeys(out))


def entity_in(entity: str, norm_text: str, numbers: set = frozenset()) -> bool:
    """Is the entity in the text (both normalised: lower case, only letters, digits and
    dots, so "5-way" matches "5 way" and "Mini-ImageNet" "MiniImageNet")? Sizes with a
    magnitude ("14.2B") are matched by size_in."""
    e = _norm_entity(entity)
    return bool(e) and e in norm_text


def literal_numbers(text: str) -> set:
    """Numbers as written in a text (no normalisation: "30.00" is not "30")."""
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?!\.?\d)", text or ""))


_MAGNITUDE = re.compile(r"(\d+(?:\.\d+)?)\s?([BMKT])(?:-\w+)?", re.I)
_MAG_WORDS = {"b": "billion", "m": "million", "k": "thousand", "t": "trillion"}


def sizes_in_question(entities: list[str]) -> list[tuple[str, str]]:
    """Model or data sizes the question gives ("540B", "10B-parameter", "30B"): (number, magnitude)."""
    out = []
    for e in entities:
        m = _MAGNITUDE.fullmatch(e)
        if m:
            out.append((m.group(1), m.group(2).lower()))
    return out


def size_in(size: tuple[str, str], text: str) -> bool:
    """The size as written ("540B", "540 B", "540 billion"), or the bare number as a
    whole table cell (a "Params (B)" column holds 14.2)."""
    num, mag = size
    n = re.escape(num)
    return bool(
        re.search(rf"(?<![\w.]){n}\s?(?:{mag}\b|{mag}(?=[-\s])|{_MAG_WORDS[mag]}\b)", text, re.I)
        or re.search(rf"(?:^|\|)\s*{n}\s*(?:\||$)", text, re.M)
    )


def allowed_missing(n_entities: int) -> int:
    """A long question may name one thing the evidence calls otherwise (Swahili /
    Sw); a short one may not."""
    return n_entities // 5


def asked_attribute(question: str) -> list[str]:
    """The terms of what the question asks for: the words after what / which / how
    many up to its verb or preposition ("what one-shot TriviaQA accuracy does" ->
    accuracy), the last one being the head."""
    m = _WH.search(question or "")
    if not m:
        return []
    words = []
    for w in re.sub(r"\([^)]*\)", " ", question[m.end() :]).split():
        if w.lower().strip(",.?") in _ATTR_END:
            break
        words.append(w)
    return [t for t in terms(" ".join(words)) if t]


_DEF_Q = re.compile(
    r"^\s*(?:how is|how are|what is|what are|what does|what do)\s+(?:the\s+|an?\s+)?(.+?)"
    r"\s*(?:defined|mean|means|denote|denotes|stand for|refer to)?\s*\??\s*$",
    re.I,
)


def defined_term(question: str) -> str | None:
    """What a definition question asks about ("How is model FLOPs utilization (MFU)
    defined?" -> "MFU"; "what does the W element denote?" -> "W"): an acronym in
    parentheses, else the last capitalised word, else the phrase."""
    last = re.split(r",\s*(?=(?:how|what)\b)", question or "", flags=re.I)[-1]
    m = _DEF_Q.search(last)
    if not m or not re.search(
        r"\b(defined|mean|means|denote|denotes|stand for|refer to)\b|^\s*what (is|are)\b", last, re.I
    ):
        return None
    phrase = m.group(1)
    if prompts.wants_quantity(question) or re.search(r"\b(of|for|in|on|per)\b", phrase) or len(phrase.split()) > 4:
        return None  # "what is the ash content of barley straw" asks for a value, not a definition
    acr = re.search(r"\(([A-Za-z][\w-]*)\)", phrase)
    if acr:
        return re.escape(acr.group(1))
    poss = re.fullmatch(r"([A-Z][\w-]*)['’]s\s+([a-z][\w-]*)", phrase.strip())
    if poss:  # "PonderNet's prediction": "the prediction of PonderNet is", "PonderNet's prediction is"
        owner, thing = map(re.escape, poss.groups())
        return rf"(?:{thing}s? of {owner}|{owner}['’]s {thing})"
    caps = [w for w in re.findall(r"[A-Za-z][\w-]*", phrase) if any(c.isupper() for c in w)]
    word = caps[-1] if caps else phrase.split()[-1] if phrase.split() else None
    return re.escape(word) if word else None


def _defines(sentence: str, term: str) -> bool:
    """The sentence defines the term: "MFU is the ratio ...", "w is the ... vector",
    "X, which denotes ...", "we define X as"."""
    t = term  # a regular expression (defined_term)
    return bool(
        re.search(
            rf"(?<![\w-]){t}(?![\w-])(?:\s+\([^)]*\))?\s+(is|are|denotes?|refers to|is defined as|means)\b"
            rf"|(?<![\w-]){t}\s*:\s*\w"
            rf"|\bdefine[sd]?\b[^.;]{{0,40}}(?<![\w-]){t}(?![\w-])",
            sentence,
        )
    )


_CONTRAST = re.compile(
    r"\b(?:unlike|in contrast to|rather than|as opposed to|compared to)\b(.*?)(?:,\s*(?=(?:what|how|who|when|where|why)\b)|$)",
    re.I,
)


def contrast_terms(question: str) -> set:
    """Terms of a contrast clause in the question ("Unlike ACT, which averages ...")."""
    out = set()
    for m in _CONTRAST.finditer(question or ""):
        if m.group(0).strip().endswith(","):
            out |= set(terms(m.group(1)))
    return out - set(terms(_CONTRAST.sub(" ", question or "")))


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text or ""))


# ---------------------------------------------------------------------------------
# Table cells
# ---------------------------------------------------------------------------------


@dataclass
class Cell:
    n: int
    text: str  # the answer sentence (without citation)
    score: float
    coverage: float
    row_match: float
    col_match: float
    context: str = ""  # the row line, the caption and the header lines


def _abbrev_match(name: str, question: str) -> bool:
    """A column named by an abbreviation of a capitalised question word (Sw for Swahili)."""
    return bool(_abbreviated(name, question))


def _abbreviated(name: str, question: str) -> list[str]:
    """The question words a column name abbreviates: a capitalised word it starts
    ("Sw": Swahili), or consecutive words it gives the initials of ("LR": learning rate)."""
    name = name.strip()
    if re.fullmatch(r"[A-Z]{2,4}", name):
        words = re.findall(r"[A-Za-z]+", question)
        for i in range(len(words) - len(name) + 1):
            span = words[i : i + len(name)]
            if "".join(x[0] for x in span).upper() == name and all(len(x) > 1 for x in span):
                return span
        return []
    if not re.fullmatch(r"[A-Z][a-z]{1,3}\.?", name):
        return []
    stem = name.rstrip(".").lower()
    return [
        w
        for w in re.findall(r"[A-Za-z]+", question)
        if w[0].isupper() and w.lower().startswith(stem) and len(w) > len(stem)
    ]


def table_cell_answer(question: str, sources: list[dict], w: dict, attribute: list[str]) -> Cell | None:
    """The cell a question names by its row and its column, read from the table chunks
    among the sources: the row label (with its group) and the column name (with its
    group, "group / column") must share the question's terms, the table's caption,
    section and header count for the rest. Repeated row labels are told apart by the
    question's sizes in the row ("the 14.2B RWKV-4"), a label without words by the
    code the question gives ("A-B trials"). A row label that adds words the question
    does not use costs a little; one that negates ("without") what the question does
    not, a lot. A column named after the question's subject ("MuZero") or by an
    abbreviation of its words ("Sw") is named; a column that does not name the
    asked-for attribute (nor does the caption) is not. No column named: the whole row
    is quoted."""
    total = sum(w.values()) or 1.0
    qset = set(w)
    q_neg = _negated(question)
    named = question_entities(question)
    sizes = {num for num, _ in sizes_in_question(named)}
    codes = [e for e in named if not terms(e)]  # "A-B": a name without terms
    best: Cell | None = None
    for s, t in ((src, tab) for src in sources for tab in checks.parse_tables(src["text"])):
        ctx = set(terms(" ".join([t["caption"], s.get("section_path") or "", *t["header_lines"]]), True))
        for row in t["rows"]:
            label = " ".join(x for x in (row["group"], row["label"]) if x)
            lab = set(terms(label, True))
            cols = checks.row_columns(t, row)
            # a size the question gives ("the 14.2B RWKV-4") tells repeated labels apart
            # when a cell holds exactly that number
            row_nums = {
                "#" + checks.normalize_number(m.group(1))
                for _, c in cols
                for m in [re.fullmatch(r"(\d+(?:\.\d+)?)\s?[BMK]?", c.strip())]
                if m and m.group(1) in sizes
            }
            row_hit = (lab | (row_nums & qset)) & qset
            row_match = sum(w[x] for x in row_hit)
            # a label the question names as a code ("A-B trials"): no terms, but the same name
            code_hit = any(_norm_entity(e) == _norm_entity(label) for e in codes)
            if code_hit:
                row_match += max(w.values())
            if row_match <= 0:
                continue
            extra = len([x for x in lab - qset if not x.startswith("#")])
            penalty = 0.04 * extra + (0.5 if _negated(label) != q_neg else 0.0)
            candidates = []
            for name, cell in cols:
                if not cell or not checks.numbers_in(cell) and cell not in ("✓", "✗"):
                    continue
                if set(terms(cell, True)) <= qset:
                    continue  # the question already gives this value ("the 20 bAbI tasks")
                ct = set(terms(name, True))
                col_hit = (ct | {t for x in _abbreviated(name.split(" / ")[-1], question) for t in terms(x)}) & qset
                col_match = sum(w[x] for x in col_hit)
                # a column name that adds a number the question does not ("1-shot" for a
                # 5-shot question) is another column
                col_extra = len(ct - qset)
                col_eff = col_match - 0.25 * max(w.values()) * len([x for x in ct - qset if x.startswith("#")])
                # a column named after the thing the question is about ("MuZero") beats one
                # sharing a common word with it ("Random" for "30 random no-op starts")
                subject = any(_norm_entity(e) == _norm_entity(name.split(" / ")[-1]) for e in named)
                if subject:
                    col_match += max(w.values())
                    col_eff += max(w.values())
                candidates.append((col_eff, -col_extra, name, cell, col_hit, subject))
            if not candidates:
                continue
            col_match, neg_extra, name, cell, col_hit, subject = max(candidates, key=lambda c: (c[0], c[1]))
            col_match = max(col_match, 0.0)
            if attribute and not subject and not set(attribute) & (ctx | set(terms(name)) | col_hit):
                col_match = 0.0  # the column does not name what is asked ("ash content" is not "ratio")
            # the caption, section and header count half (as a sentence's title does)
            coverage = (
                sum(w[x] for x in row_hit | col_hit)
                + (max(w.values()) if code_hit else 0.0)
                + 0.5 * sum(w[x] for x in (ctx & qset) - row_hit - col_hit)
            ) / (total + (max(w.values()) if codes else 0.0))
            head = attribute[-1] if attribute else None
            attr_ok = head is None or head in (ctx | set(terms(name)) | lab)
            score = (
                coverage
                + 0.5 * row_match / total
                + 0.5 * col_match / total
                - penalty
                + 0.02 * neg_extra
                - (0.15 if not attr_ok else 0.0)
            )
            label_name = t["columns"][0] if t["columns"] else ""
            lead = f"{label_name}: {label}" if label_name and label_name != label else label
            if col_match > 0:
                text = f"{lead}; {name}: {cell}" if name else f"{lead}: {cell}"
            else:
                vals = "; ".join(f"{h}: {c}" if h else c for h, c in cols if c)
                text = f"{lead}; {vals}" if lead else vals
            cand = Cell(
                s["n"],
                text,
                score,
                coverage,
                row_match,
                col_match,
                "\n".join([row["line"], label, t["caption"], *t["header_lines"]]),
            )
            if best is None or cand.score > best.score + 1e-9:
                best = cand
    return best


def extractive_answer(
    question: str,
    sources: list[dict],
    *,
    quantity: bool,
    max_sentences: int = 3,
    min_coverage: float = DEFAULTS["min_coverage"],
    max_unknown_share: float = DEFAULTS["max_unknown_share"],
    unknown_words: set | None = None,
    context: dict | None = None,
) -> Extract:
    """Quote the evidence that best answers the question, each piece cited.

    Who: the question's named things (question_entities) must be in the source's
    document (its retrieved chunks, ``context``: document id -> their text; numbers
    in the chunk itself); a source from a document that lacks them is not quoted, so
    an answer never cites another paper than the one the question names unless
    nothing else fits (then it abstains, naming what no source names).

    What: a table cell the question names by row and column (table_cell_answer)
    answers first (a whole row when only the row is named and no sentence covers
    more). Otherwise a unit's score is the IDF-weighted share of the question's terms it
    contains (the source's title and section path count half), times a small prior
    for the source's retrieval rank, times a quantity factor (a number the question
    does not already give helps, none hurts), times an attribute factor (the unit
    names what the question asks for: "accuracy", "learning rate"). Later picks must
    add uncovered question terms; a unit that shares the first pick's own distinctive
    terms is preferred, which is how a two-hop question ("the main residue of Harlan
    County" -> "barley straw" -> its ash content) gets both hops. The first pick must
    name the most of the question's entities, state the sizes it gives ("540B"), and
    for "how many X" count X when the named document does anywhere.

    Every pick must pass the supports check against its own source; abstains when
    none does, when the picks cover less than ``min_coverage`` of the question, or
    when ``max_unknown_share`` of the question's terms occur nowhere in the caller's
    visible corpus (``unknown_words``, from the keyword statistics)."""
    qterms = terms(question, True)
    surface = surface_words(question)
    lead = f"{prompts.ABSTAIN_LEAD} an answer to this question"

    # Who the question is about: keep the sources whose document names its entities
    # (not the ones it contrasts with: "Unlike ACT, ...").
    contrast = contrast_terms(question)
    entities = [e for e in question_entities(question) if not (set(terms(e)) and set(terms(e)) <= contrast)]
    docs: dict = {}
    for s in sources:
        docs.setdefault(s.get("document_id"), []).append(s)
    doc_text = {}
    for d, ss in docs.items():
        extra = (context or {}).get(d, "")
        doc_text[d] = _norm_entity(
            " ".join(
                [ss[0].get("title") or "", extra, *(x.get("section_path") or "" for x in ss), *(x["text"] for x in ss)]
            )
        )

    def names_missing(s: dict) -> list[str]:
        chunk_numbers = literal_numbers(s["text"])
        # a table may name a thing by a column abbreviation ("Sw" for Swahili)
        short = [c.split(" / ")[-1] for t in checks.parse_tables(s["text"]) for c in t["columns"]]
        missing = []
        for e in entities:
            numeric = any(c.isdigit() for c in e)
            if numeric:
                size = sizes_in_question([e])
                if size:
                    if not size_in(size[0], s["text"] + "\n" + (s.get("section_path") or "")):
                        missing.append(e)
                elif not entity_in(e, _norm_entity(s["text"] + " " + (s.get("section_path") or "")), chunk_numbers):
                    missing.append(e)
            elif not entity_in(e, doc_text[s.get("document_id")], set()) and not any(
                _abbrev_match(c, e) for c in short
            ):
                missing.append(e)
        return missing

    fits = [s for s in sources if len(names_missing(s)) <= allowed_missing(len(entities))]
    if sources and not fits:
        gaps = min((names_missing(s) for s in sources), key=len)
        # an abstention states no figure (the numbers check would look for it)
        named = ", ".join(f'"{x}"' for x in gaps if not any(c.isdigit() for c in x))
        return Extract(
            f"{lead}: no source names "
            + (
                f"{named} together with the rest of the question."
                if named
                else "the sizes or figures the question gives."
            ),
            True,
            [],
            0.0,
            gaps,
            "question entities absent from the evidence",
        )

    units: list[Unit] = []
    seen_text: set[str] = set()
    fit_ns = {s["n"] for s in fits}
    # every source's units: other documents may only give the second hop (bridged below)
    for s in sources:
        for u in units_of(s):
            key = re.sub(r"\W+", " ", u.text.lower()).strip()
            if key in seen_text:
                continue  # overlap carried between chunks: quote it once, from the better-ranked source
            seen_text.add(key)
            units.append(u)
    if not units or not qterms:
        reason = "no evidence text" if not units else "no content words in the question"
        return Extract(lead + ".", True, [], 0.0, [], reason)
    w = _weights(qterms, units)
    # "Unlike ACT, which averages predictions, what is ...": the contrast is context,
    # the sentence that answers is about the other thing
    for t in contrast:
        if t in w:
            w[t] *= 0.3
    pool = set().union(*(u.terms | u.ctx for u in units))
    missing = [t for t in w if t not in pool]
    unknown = [t for t in missing if unknown_words is not None and any(t in terms(x) for x in unknown_words)]
    n_max = max(s["n"] for s in sources)
    attribute = asked_attribute(question)
    head = attribute[-1] if attribute and attribute[-1] in pool else None
    q_numbers = {t for t in qterms if t.startswith("#")}
    by_n = {s["n"]: s for s in sources}
    table_heads = {
        s["n"]: " ".join(x for t in checks.parse_tables(s["text"]) for x in (t["caption"], *t["header_lines"]))
        for s in sources
    }
    definiendum = defined_term(question)
    # "... called model FLOPs utilization (MFU). This is the ratio of ...": the next sentence defines it
    follows_definiendum = set()
    antecedent: dict = {}
    if definiendum:
        for a, b in zip(units, units[1:]):
            if (
                a.n == b.n
                and re.search(rf"{definiendum}\W*$", a.text)
                and re.match(r"(This|It|That)\s+(is|are|denotes|means)\b", b.text)
            ):
                follows_definiendum.add(id(b))
                b.terms = b.terms | a.terms  # "This" is the term the sentence before names
                antecedent[id(b)] = a.text

    def new_number(u: Unit) -> bool:
        body = _LABEL.sub("", u.text)
        return any(t.startswith("#") and t not in q_numbers for t in terms(body, True))

    def score(u: Unit) -> float:
        cov = _coverage(u.terms, w, u.ctx)
        prior = 1.0 - 0.08 * (u.n - 1) / max(n_max, 1)
        q = 1.0
        if quantity:
            q = (1.25 if u.has_quantity else 1.1) if new_number(u) else 0.7
        a = 1.0 if head is None or head in u.terms else 0.75
        defines = bool(definiendum) and (_defines(u.text, definiendum) or id(u) in follows_definiendum)
        d = 2.0 if defines else 1.0
        if defines:
            cov += 0.3  # a definition rarely repeats the question's words ("what does W denote")
        # a unit that itself names the question's things (Lomax County) beats one from
        # the same document that names others (Harlan County)
        e = 0.6 + 0.4 * named_share(u) if entities else 1.0
        # a table row answers "what / how many", not "how does / why"
        r = 0.5 if u.is_row and not (quantity or attribute) else 1.0
        return cov * prior * q * a * d * e * r * (0.8 if u.is_caption else 1.0)

    named_cache: dict = {}

    def named_share(u: Unit) -> float:
        # the unit with its heading (and a table row with its caption) names them
        if id(u) not in named_cache:
            src = by_n[u.n]
            where = " ".join(
                [
                    u.text,
                    antecedent.get(id(u), ""),
                    src.get("title") or "",
                    src.get("section_path") or "",
                    table_heads.get(u.n, "") if u.is_row else "",
                ]
            )
            nt = _norm_entity(where)
            named_cache[id(u)] = sum(entity_in(x, nt, literal_numbers(where)) for x in entities) / len(entities)
        return named_cache[id(u)]

    def names(ts) -> str:
        # the question's own words, never numbers (an abstention states no figure)
        words = list(dict.fromkeys(surface.get(t, t) for t in ts if not t.startswith("#")))
        return ", ".join(f'"{x}"' for x in words[:3])

    if unknown and len(unknown) / len(w) >= max_unknown_share:
        named = names(unknown)
        return Extract(
            f"{lead}: no document in scope mentions {named}.",
            True,
            [],
            0.0,
            missing,
            "question terms absent from the visible corpus",
        )

    def supported(u: Unit, text: str) -> bool:
        # as the answer will be checked: every sentence of the quote, with its citation
        return checks.check_supports(f"{strip_refs(text)} [{u.n}]", {u.n: by_n[u.n]["text"]})["ok"]

    ranked = sorted(units, key=lambda u: (-score(u), u.n, u.order))
    checked: dict = {}

    def passes(u: Unit) -> bool:
        # the supports check, run lazily: only on the units that could be picked
        if id(u) not in checked:
            checked[id(u)] = supported(u, _row_text(u, set(w)) if u.is_row else u.text)
        return checked[id(u)]

    sizes = sizes_in_question(entities)
    captions = table_heads if sizes else {}

    def states_sizes(u: Unit) -> bool:
        # "How many A100 GPUs trained PaLM 540B?" is not answered by a sentence about a 530B model
        return all(
            size_in(z, u.text + "\n" + (captions.get(u.n, "") if u.is_row else ""))
            or (u.is_row and any(c.strip() == z[0] for _, c in u.cells))
            for z in sizes
        )

    # "how many GPUs": the sentence that answers counts GPUs
    # (when a source of the named document counts them at all: a two-hop question's
    # first hop may not)
    counted = (
        head
        if head
        and re.search(r"\bhow (many|much)\b", question, re.I)
        and any(head in u.terms for u in units if u.n in fit_ns)
        else None
    )

    def eligible(u: Unit) -> bool:
        return u.n in fit_ns and states_sizes(u) and (counted is None or counted in u.terms) and passes(u)

    # The sentence must name what the question names: among the eligible units, only
    # those naming the most of the question's entities may anchor the answer.
    pool_e = [u for u in ranked if eligible(u)]
    top_share = max((named_share(u) for u in pool_e), default=0.0) if entities else 0.0
    best = next((u for u in pool_e if not entities or named_share(u) >= top_share - 1e-9), None)

    # A table cell named by row and column answers outright (before any sentence).
    if quantity or attribute:
        cell = table_cell_answer(question, fits, w, attribute)
        best_score = score(best) if best is not None else 0.0
        # (a caption describes a table; it does not outrank the table's own cell)
        best_n = best.n if best is not None and not best.is_caption else 10**6
        # named by row and column: the cell; by row only: the row, when no sentence does
        # better (a cell from a lower-ranked source than the best sentence must cover as much)
        if (
            cell is not None
            and cell.coverage >= min_coverage
            and ((cell.col_match > 0 and cell.n <= best_n) or cell.coverage + 0.1 >= best_score)
            and all(size_in(z, cell.context) for z in sizes)
            and (counted is None or counted in set(terms(cell.text + " " + cell.context)))
            and checks.check_supports(f"{cell.text} [{cell.n}]", {cell.n: by_n[cell.n]["text"]})["ok"]
        ):
            u = Unit(cell.n, 0, cell.text, set(terms(cell.text, True)), is_row=True)
            return Extract(f"{cell.text} [{cell.n}]", False, [u], cell.coverage, missing, "table cell")
    if best is None:
        return Extract(lead + ".", True, [], 0.0, missing, "no sentence passes the supports check")
    best_cov = _coverage(best.terms, w, best.ctx)
    if definiendum and (_defines(best.text, definiendum) or id(best) in follows_definiendum):
        best_cov = max(best_cov, min_coverage)  # it defines what is asked: enough on its own

    def too_weak(cov: float) -> Extract:
        named = names(missing)
        return Extract(
            lead + (f" (none of them mentions {named})." if named else "."), True, [], cov, missing, "evidence too weak"
        )

    if best_cov < 0.5 * min_coverage:
        return too_weak(best_cov)

    picked = [best]
    # "We call the model with just these two modifications Primer-EZ": the sentence
    # before it says which ones, so it is quoted first
    if re.search(r"\b(these|those|such)\b", best.text, re.I) and max_sentences > 1:
        before = next((u for u in units if u.n == best.n and u.order == best.order - 1), None)
        if before is not None and passes(before):
            picked = [before, best]
    covered = set().union(*(u.terms for u in picked)) & set(w)
    # Bridge terms: distinctive things the first pick names beyond the question (e.g.
    # "barley straw"); a unit from another document that names them is the next hop.
    doc_of = {s["n"]: s.get("document_id") for s in sources}
    bridge = {
        t
        for t in best.terms - set(w)
        if not t.startswith("#") and sum(1 for u in units if t in u.terms) <= max(2, len(units) // 4)
    }
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
            if u.n not in fit_ns and not bridged:
                continue  # another document than the one the question names: only as the next hop
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
            if gain > best_gain and passes(u):
                best_gain, choice = gain, u
        if choice is None:
            break
        picked.append(choice)
        covered |= choice.terms & set(w)
    coverage = max(_coverage(covered, w), best_cov)
    if coverage < min_coverage:
        # judged on what the picks cover together: two hops may each cover half
        return too_weak(coverage)
    if quantity and not any(u.has_number for u in picked):
        return too_weak(coverage)  # a question asking for a figure is not answered without one
    keep_terms = set(w)
    text = " ".join(f"{_row_text(u, keep_terms) if u.is_row else strip_refs(u.text)} [{u.n}]" for u in picked)
    return Extract(text, False, picked, coverage, missing, "ok")


# ---------------------------------------------------------------------------------
# Compression (optional)
# ---------------------------------------------------------------------------------


def compress_sources(
    question: str, sources: list[dict], floor: float, llm=None, template: prompts.Template | None = None
) -> dict:
    """Question-aware summaries of each source with a relevance floor.

    With a model: a JSON {"relevance", "summary"} per source; a malformed reply, or a
    summary carrying a number the passage does not, falls back to the full text and
    is counted. Without one: the passage's sentences and rows that share a question
    term, relevance = their weighted coverage. Sources below the floor are dropped
    from the prompt view only; the numbering (and so the citation list) is unchanged."""
    stats = {
        "enabled": True,
        "summariser": "model" if llm else "extractive",
        "relevance_floor": floor,
        "summarised": 0,
        "dropped": 0,
        "failures": 0,
        "tokens_before": 0,
        "tokens_after": 0,
    }
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
                if (
                    not isinstance(rel, (int, float))
                    or isinstance(rel, bool)
                    or not isinstance(summ, str)
                    or not summ.strip()
                ):
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
    entry = {
        "n": s["n"],
        "document_id": s["document_id"],
        "external_id": s.get("external_id"),
        "chunk_id": s["chunk_id"],
        "title": s.get("title"),
        "section_path": s.get("section_path") or None,
        "pages": cit.get("pages"),
        "lines": cit.get("lines"),
        "cite": cit.get("cite"),
        "chunk_ids": cit.get("chunk_ids"),
        # a retracted source says so (only reachable with include_retracted)
        "retracted": True if cit.get("retracted") is True else None,
    }
    return {k: v for k, v in entry.items() if v is not None}


def llm_label(llm) -> str:
    model = getattr(llm, "model", None)
    return f"{llm.name}:{model}" if model else llm.name


def answer_question(
    question: str,
    rows: list[dict],
    *,
    options: dict,
    template: prompts.Template,
    intents: list[prompts.Intent],
    llm=None,
    compress_llm=None,
    compress_template: prompts.Template | None = None,
    trace: dict | None = None,
    unknown_words: set | None = None,
    selector=None,
) -> dict:
    """The answer object for one question, from its retrieval rows (rank order).
    ``llm`` answers (None: the extractive answerer); ``compress_llm`` summarises when
    compression is on (None: extractive summaries); ``unknown_words`` are the
    question's words that occur nowhere in the caller's visible corpus (None: unknown);
    ``selector`` is the trained sentence selector (answer_sentence; None: none)."""
    opts = options
    t_all = time.perf_counter()
    trace = trace if trace is not None else {"stages": []}
    stages = trace.setdefault("stages", [])
    intent = prompts.classify_intent(question, intents)
    quantity = prompts.wants_quantity(question, intent)
    sources = make_sources(rows, opts["max_sources"])
    # every retrieved chunk's text per document: what the question's named things are
    # looked up in (a table split over two chunks has its caption in the other one)
    context: dict = {}
    for r in rows:
        context[r["document_id"]] = context.get(r["document_id"], "") + "\n" + (r.get("content") or "")

    # Compression (off by default).
    comp = {"enabled": False}
    if sources and opts["compress"]["enabled"]:
        t0 = time.perf_counter()
        comp = compress_sources(
            question,
            sources,
            opts["compress"]["relevance_floor"],
            compress_llm if compress_template is not None else None,
            compress_template,
        )
        stages.append(
            {
                "stage": "compress",
                "status": "ok" if not comp["failures"] else "degraded",
                "ms": _ms(t0),
                "candidates": len(sources),
                "summarised": comp["summarised"],
                "dropped": comp["dropped"],
                "failures": comp["failures"],
            }
        )
    shown = [s for s in sources if s["shown"] != "dropped"]

    # Generation.
    t0 = time.perf_counter()
    use_model = opts["answerer"] == "model" or (opts["answerer"] == "auto" and llm is not None)
    if use_model and llm is None:
        raise AnswerError('answerer "model" asked for, but no model is configured (SCIRAG_LLM_PROVIDER)')
    prompt_tokens = 0
    extract = None
    status = "ok"

    def offline():
        # the offline answerer: the default, and the fallback when the model fails
        return extractive_answer(
            question,
            shown,
            quantity=quantity,
            max_sentences=opts["max_sentences"],
            min_coverage=opts["min_coverage"],
            max_unknown_share=opts["max_unknown_share"],
            unknown_words=unknown_words,
            context=context,
        )

    if not shown:
        text, answerer, abstained = NO_SOURCES, "none", True
        status = "skipped"
    elif use_model:
        system, prompt = prompts.answer_prompt(
            template, question, shown, intent, form_guidance=answer_forms.model_guidance(question)
        )
        prompt_tokens = prompts.approx_tokens(system, prompt)
        try:
            text = llm.complete(prompt, system=system, temperature=0.0, max_tokens=1024).strip()
            answerer = llm_label(llm)
            if not text:
                raise LLMError("empty answer")
        except LLMError as exc:
            # Degrade, do not break: the offline answerer still answers, and the trace says why.
            status = "error"
            extract = offline()
            text, answerer = extract.text, "extractive (model failed)"
            trace["model_error"] = type(exc).__name__
        abstained = checks.is_abstention(text)
    else:
        extract = offline()
        text, answerer, abstained = extract.text, "extractive", extract.abstained
        prompt_tokens = prompts.approx_tokens(*(s["text"] for s in shown))
    form = None
    if not opts["form"]:
        pass
    elif shown and use_model and not answerer.startswith("extractive") and not abstained:
        # the model was asked to lead with the answer's form: read it back
        qtype = answer_forms.question_type(question)
        form = answer_forms.Form(qtype, answer_forms.model_short_answer(question, text), None, None, None)
    elif shown and answerer.startswith("extractive") and form_may_answer(question, abstained, extract.reason):
        # the answer in the question's form: "Yes"/"No", a span, a number; the
        # sentence answer stays below it as the cited support
        form = answer_forms.decide(
            question,
            shown,
            terms,
            sentence_answer=None if abstained else text,
            selector=selector if opts["selector"] else None,
        )
        text, abstained = with_form(text, abstained, form)
        # how the form was decided (scores only, never text): the selector's logit, p(yes)...
        trace["form"] = {"answer_type": form.answer_type, "abstain": form.abstain, **form.details}
    stages.append(
        {
            "stage": "generate",
            "status": status,
            "ms": _ms(t0),
            "candidates": len(shown),
            "answerer": answerer.split(":")[0],
            "prompt_tokens": prompt_tokens,
        }
    )

    # Mechanical checks on what was shown.
    t0 = time.perf_counter()
    chk = checks.run_checks(text, shown)
    withheld = None
    if not abstained and chk["claims"] and len(chk["unsupported"]) == chk["claims"]:
        # No sentence is held by the source it cites: an abstention, not a green check
        # on a wrong answer. The withheld text and its checks stay in the result.
        withheld = {"answer": text, "checks": chk}
        text, abstained = UNSUPPORTED, True
        chk = checks.run_checks(text, shown)
    stages.append(
        {
            "stage": "checks",
            "status": "ok" if withheld is None else "withheld",
            "ms": _ms(t0),
            "candidates": len(shown),
            "citations_ok": chk["citations_ok"],
            "numbers_ok": chk["numbers_ok"],
            "supports_ok": chk["supports_ok"],
        }
    )

    cited = set(chk["cited"])
    result = {
        "answer": text,
        "abstained": abstained,
        "answerer": answerer,
        "intent": intent.intent,
        "answer_type": form.answer_type if form else answer_forms.question_type(question),
        "short_answer": None if abstained or form is None else form.short,
        "confidence": 0.0 if abstained else (form.confidence if form else None),
        "citations": [citation_entry(s) for s in sources if s["n"] in cited],
        "sources": [
            {**citation_entry(s), "shown": s["shown"], **({"relevance": s["relevance"]} if "relevance" in s else {})}
            for s in sources
        ],
        "retrieval": [
            {
                "rank": r["rank"],
                "chunk_id": r["chunk_id"],
                "document_id": r["document_id"],
                "external_id": r.get("external_id"),
                "score": r.get("score"),
                "layers": _json(r.get("layers")),
                "title": r.get("title"),
                "section_path": r.get("section_path"),
                "is_table": bool(r.get("is_table")),
                "citation": _json(r.get("citation")),
                **({"content": r["content"]} if opts["include_content"] else {}),
            }
            for r in rows
        ],
        "prompt_sources": [
            {
                "n": s["n"],
                "chunk_id": s["chunk_id"],
                "document_id": s["document_id"],
                "shown": s["shown"],
                "text": s["text"],
            }
            for s in shown
        ],
        "checks": chk,
        "compression": comp,
    }
    if withheld is not None:
        result["withheld"] = withheld
    if extract is not None:
        result["evidence"] = {
            "coverage": round(extract.coverage, 4),
            "reason": extract.reason,
            "quantity_question": quantity,
        }
    trace["ms"] = round(trace.get("ms", 0) + _ms(t_all), 2)
    result["trace"] = trace
    return result


def with_form(text: str, abstained: bool, form) -> tuple[str, bool]:
    """The sentence answer led by its short form and the sentence that holds it (when
    the sentence answer does not already quote it), or an abstention when the form
    model says the sources do not answer the question."""
    if form.abstain:
        return NOT_ANSWERED, True
    if not form.short:
        return text, abstained
    if abstained:
        text = ""  # a weak sentence match abstained; the form's span and its support answer
    short = form.short.rstrip(" .")
    support = f"{form.support} [{form.n}]" if form.support and form.support not in text else None
    if form.answer_type == "yes_no":
        lead = f"{short}." + (f" {support}" if support else "")
    elif form.short == form.support:
        lead = support  # the whole sentence is the answer: say it once
    else:
        lead = f"{short} [{form.n}]." + (f"\n\n{support}" if support else "")
    return "\n\n".join(x for x in (lead, text) if x), False


def _json(v):
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
    return v


def abstention_without_evidence(reason: str, trace: dict) -> dict:
    return {
        "answer": NO_SOURCES,
        "abstained": True,
        "answerer": "none",
        "intent": None,
        "citations": [],
        "sources": [],
        "retrieval": [],
        "prompt_sources": [],
        "checks": checks.run_checks(NO_SOURCES, []),
        "compression": {"enabled": False},
        "evidence": {"coverage": 0.0, "reason": reason},
        "trace": trace,
    }


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
    cfg = json.loads(
        plpy.execute(plpy.prepare("SELECT scirag.preset_get($1)::text AS c", ["text"]), [opts["preset"]])[0]["c"]
        or "{}"
    )
    aug, ret = cfg.get("augmentation") or {}, cfg.get("retrieval") or {}
    con = cfg.get("consolidation") or {}
    if "max_sources" not in explicit and isinstance(aug.get("top_n_contexts"), int):
        opts["max_sources"] = aug["top_n_contexts"]
    # The preset's evidence stages (its values are validated by scirag.preset_check).
    if "enrich" not in explicit and ret.get("enrichment_enabled"):
        opts["enrich"] = {
            "enabled": True,
            "min_word_count": ret.get("min_word_count", 150),
            "max_word_count": ret.get("max_word_count", 1000),
        }
    if "consolidate" not in explicit and con.get("enabled"):
        opts["consolidate"] = {"enabled": True, **{k: con[k] for k in CONSOLIDATE_KEYS if k in con}}
    if "min_sentences" not in explicit and ret.get("min_sentence_filter_enabled"):
        opts["min_sentences"] = ret.get("min_sentence_count", 5)
    if "profile" not in explicit and isinstance(ret.get("profile"), str):
        opts["profile"] = ret["profile"]
    opts["retrieve"] = {"preset": opts["preset"], **opts["retrieve"]}
    opts["k"] = max(opts["k"], opts["max_sources"])


def sentence_count(text: str) -> int:
    return len(text_rules.paragraph_sentences(text))


def build_evidence(plpy, rows: list[dict], opts: dict, trace: dict) -> list[dict]:
    """The evidence the answerer sees, from the retrieval rows (rank order), through the
    optional stages a preset or the options turn on:

    * min_sentences: prose chunks with fewer sentences are dropped (tables kept);
    * consolidate: scirag.consolidate turns the rows into context groups (coverage
      replacement by the parent section, adjacent merging, growth of short groups),
      ordered by their best-ranked member; a group cites its best member's chunk and
      the group's line span;
    * enrich: a row (or single-chunk group) under min_word_count words takes its
      enclosing section's text (scirag.enrich_chunks, sliding window to max_word_count).

    Every read runs as the caller (row-level security decides what a parent or a
    neighbour may add)."""
    if opts["min_sentences"]:
        t0 = time.perf_counter()
        before = len(rows)
        rows = [r for r in rows if r.get("is_table") or sentence_count(body_of(r)) >= opts["min_sentences"]]
        trace["stages"].append(
            {"stage": "sentence_filter", "status": "ok", "ms": _ms(t0), "candidates": before, "kept": len(rows)}
        )
    if opts["consolidate"]["enabled"] and rows:
        t0 = time.perf_counter()
        co = {k: v for k, v in opts["consolidate"].items() if k != "enabled"}
        plan = plpy.prepare(
            "SELECT group_no, document_id, chunk_ids, replaced_by, section_path, content, "
            "line_start, line_end FROM scirag.consolidate($1, $2::jsonb) ORDER BY group_no",
            ["bigint[]", "text"],
        )
        groups = plpy.execute(plan, [[r["chunk_id"] for r in rows], json.dumps(co)])
        by_id = {r["chunk_id"]: r for r in rows}
        out = []
        for g in groups:
            members = [by_id[c] for c in g["chunk_ids"] if c in by_id]
            if not members:
                continue
            best = min(members, key=lambda r: r["rank"])
            cit = dict(best.get("citation") or {})
            if g["line_start"] is not None and g["line_end"] is not None:
                cit["lines"] = f"{g['line_start']}-{g['line_end']}"
            pages = sorted(
                {
                    p
                    for m in members
                    for p in str((m.get("citation") or {}).get("pages") or "").split("-")
                    if p.isdigit()
                },
                key=int,
            )
            if pages:
                cit["pages"] = pages[0] if pages[0] == pages[-1] else f"{pages[0]}-{pages[-1]}"
            cit["chunk_ids"] = list(g["chunk_ids"])
            out.append(
                {
                    **best,
                    "rank": len(out) + 1,
                    "section_path": g["section_path"] or best.get("section_path"),
                    "content": g["content"],
                    "body": g["content"],
                    "citation": cit,
                    "is_table": all(m.get("is_table") for m in members),
                    "group": {"members": list(g["chunk_ids"]), "replaced_by": g["replaced_by"]},
                }
            )
        trace["stages"].append(
            {"stage": "consolidate", "status": "ok", "ms": _ms(t0), "candidates": len(rows), "groups": len(out)}
        )
        rows = out
    if opts["enrich"]["enabled"] and rows:
        t0 = time.perf_counter()
        single = [r["chunk_id"] for r in rows if len((r.get("group") or {}).get("members") or [r["chunk_id"]]) == 1]
        plan = plpy.prepare(
            "SELECT chunk_id, content, body, enriched FROM scirag.enrich_chunks($1, $2, $3)",
            ["bigint[]", "int4", "int4"],
        )
        got = {
            e["chunk_id"]: e
            for e in plpy.execute(plan, [single, opts["enrich"]["min_word_count"], opts["enrich"]["max_word_count"]])
        }
        n = 0
        for r in rows:
            e = got.get(r["chunk_id"])
            if e and e["enriched"] and r["chunk_id"] in single:
                r["content"], r["body"] = e["content"], e["body"]
                n += 1
        trace["stages"].append(
            {"stage": "enrich", "status": "ok", "ms": _ms(t0), "candidates": len(single), "enriched": n}
        )
    return rows


def selector_in(GD):
    """The trained sentence selector, loaded once per backend (GD); None when its model
    files are not installed, in which case the linear scorers choose alone."""
    from scirag_helpers import answer_sentence

    if "scirag_sentence_selector" not in GD:
        ok = answer_sentence.SentenceSelector.available()
        GD["scirag_sentence_selector"] = answer_sentence.SentenceSelector() if ok else None
    return GD["scirag_sentence_selector"]


def answer_in_db(plpy, GD, question: str, options, llm_factory=None) -> dict:
    """What scirag.answer runs. Retrieval happens through scirag.retrieve as the
    calling role, so row-level security decides what evidence exists; this function
    can only narrow the caller's scope (it turns retraction exclusion on for the call
    and restores the previous value), never widen it."""
    from scirag_helpers import llm as llm_mod

    t_all = time.perf_counter()
    if question is not None and len(question) > MAX_QUESTION_CHARS:
        # refused before any text work (retrieve has the same bound)
        raise AnswerError(f"question is {len(question)} characters long; at most {MAX_QUESTION_CHARS} allowed")
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
            "FROM scirag.retrieve($1, $2, $3, $4::jsonb)",
            ["text", "int4", "text", "text"],
        )
        rows = [
            dict(r) for r in plpy.execute(plan, [question, opts["k"], opts["profile"], json.dumps(opts["retrieve"])])
        ]
        rtrace = plpy.execute("SELECT scirag.last_trace()::text AS t")[0]["t"]
    finally:
        if not opts["include_retracted"]:
            plpy.execute(
                plpy.prepare("SELECT set_config('scirag.exclude_retracted', coalesce($1, ''), true)", ["text"]), [old]
            )
    for r in rows:
        r["layers"], r["citation"] = _json(r["layers"]), _json(r["citation"])
    if rows and any("body" not in r for r in rows):
        # the stored body of each retrieved chunk (read as this function runs: the
        # rows retrieve just returned are readable), never its content re-stripped
        plan = plpy.prepare("SELECT id, body FROM scirag.chunks WHERE id = ANY ($1)", ["bigint[]"])
        bodies = {b["id"]: b["body"] for b in plpy.execute(plan, [[r["chunk_id"] for r in rows]])}
        rows = [{**r, "body": bodies[r["chunk_id"]]} for r in rows if r["chunk_id"] in bodies]
    trace["retrieve"] = json.loads(rtrace) if rtrace else None
    trace["stages"].append(
        {"stage": "retrieve", "status": "ok" if rows else "empty", "ms": _ms(t0), "candidates": len(rows)}
    )
    rows = build_evidence(plpy, rows, opts, trace)

    llm = None
    if opts["answerer"] != "extractive" or opts["compress"]["enabled"]:
        # A caller's own model key for this one call (the server sets it transaction-
        # locally): used on a copy of the environment, never stored, traced or echoed.
        key = plpy.execute("SELECT current_setting('scirag.llm_api_key', true) AS k")[0]["k"]
        if llm_factory is not None:
            llm = llm_factory()
        elif key:
            llm = llm_mod.get_llm({**os.environ, "GOOGLE_API_KEY": key, "SCIRAG_OPENAI_API_KEY": key})
        else:
            llm = llm_mod.get_llm()
    template = prompts.load_template(plpy, "answer", opts["template"])
    compress_template = prompts.load_template(plpy, "compress") if (opts["compress"]["enabled"] and llm) else None
    intents = prompts.load_intents(plpy)
    unknown = unknown_words_in_db(plpy, question) if rows else set()
    result = answer_question(
        question,
        rows,
        options=opts,
        template=template,
        intents=intents,
        llm=None if opts["answerer"] == "extractive" else llm,
        compress_llm=llm,
        compress_template=compress_template,
        trace=trace,
        unknown_words=unknown,
        selector=selector_in(GD) if opts["form"] and opts["selector"] else None,
    )
    trace["ms"] = _ms(t_all)
    return result
