"""Mechanical answer checks that need no model (the same code for scirag.answer and
``scirag eval answer``):

* citations: every [n] names a source the answerer was given, and an answer that is
  not an abstention cites at least one (citing nothing is not a way to pass);
* numbers: every number in the answer appears in a source the answer cites;
* abstention: an answer to an unanswerable question says the sources lack it.

The checks read the answer text and the sources exactly as the answerer saw them
(the prompt view); they never trust what an answerer says about itself.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# [3]  [1, 4]  [2-3]  [1][2]  [S2]  -- the bracket forms models actually produce
_CITE = re.compile(r"\[\s*S?\d+(?:\s*(?:[,;]|-|–|and)\s*S?\d+)*\s*\]")
_CITE_NUM = re.compile(r"S?(\d+)(?:\s*(?:-|–)\s*S?(\d+))?")

# A number not glued to a word or to another number: "PM2.5", "CH4" and "m3" carry no
# claim of their own, while "120,300", "0.263" and "58 %" do.
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w])")

_ABSTAIN = re.compile(
    r"\b(the |these |available |provided )*sources? (do|does|did)(n'?t| not) (contain|include|provide|report|give|say|mention|cover|state|address)"
    r"|\bnot (contained|found|reported|given|covered|stated) in the (provided |available |given )?sources"
    r"|\b(no|none of the) (provided |available |given )?sources? (contain|include|provide|report|give|mention|cover)"
    r"|\bcannot be answered from the (provided |available |given )?sources"
    r"|\bthe sources are silent\b", re.I)

_SENTENCE = re.compile(r"(?<=[.!?\]])\s+(?=[A-Z(\"'\[])|\n+")
_LEADING_CITES = re.compile(r"^((?:\s*\[[^\]]*\])+)\s*")


def citation_numbers(text: str) -> list[int]:
    """Every source number cited, in order of appearance (ranges expanded)."""
    out: list[int] = []
    for m in _CITE.finditer(text or ""):
        for a, b in _CITE_NUM.findall(m.group(0)):
            lo = int(a)
            hi = int(b) if b else lo
            if hi < lo or hi - lo > 50:
                hi = lo
            out.extend(range(lo, hi + 1))
    return out


def strip_citations(text: str) -> str:
    return _CITE.sub(" ", text or "")


def normalize_number(tok: str) -> str:
    try:
        d = Decimal(tok.replace(",", ""))
    except InvalidOperation:
        return tok
    d = d.normalize()
    s = format(d, "f")
    return s


def numbers_in(text: str) -> list[str]:
    """Normalised numbers in text ("120,300" -> "120300", "0.40" -> "0.4")."""
    return [normalize_number(m.group(1)) for m in _NUMBER.finditer(strip_citations(text))]


def says_missing(text: str) -> bool:
    """Does the text say, anywhere, that the sources lack something?"""
    return bool(_ABSTAIN.search(text or ""))


def is_abstention(text: str) -> bool:
    """An abstention leads with "the sources do not contain ..." (it may go on to cite
    what the sources do say), or says so and cites nothing at all. A cited answer that
    only notes a missing detail further on is an answer, not an abstention."""
    ss = sentences(text)
    if not ss:
        return False
    return says_missing(ss[0]) or (says_missing(text) and not citation_numbers(text))


def sentences(text: str) -> list[str]:
    """Sentences of an answer; citations written after the full stop ("... year. [1]")
    stay with the sentence they close."""
    out: list[str] = []
    for part in _SENTENCE.split(text or ""):
        part = (part or "").strip()
        if not part:
            continue
        m = _LEADING_CITES.match(part)
        if m and out and _CITE.search(m.group(1)):
            out[-1] = out[-1] + " " + m.group(1).strip()
            part = part[m.end():].strip()
            if not part:
                continue
        out.append(part)
    return out


def uncited_claims(text: str) -> list[str]:
    """Sentences that state something (four words or more), are not an abstention
    and carry no citation: the standing order is to cite every claim."""
    out = []
    for s in sentences(text):
        if len(re.findall(r"[A-Za-z]{2,}", s)) < 4 or says_missing(s) or _CITE.search(s):
            continue
        # a citation may close the paragraph after the sentence's full stop
        out.append(s)
    return out


def check_citations(text: str, provided: set[int]) -> dict:
    cited = citation_numbers(text)
    invalid = sorted({n for n in cited if n not in provided})
    abstained = is_abstention(text)
    ok = not invalid and (bool(cited) or abstained)
    return {"ok": ok, "cited": sorted(set(cited)), "invalid": invalid,
            "reason": None if ok else ("cites a source that was not provided" if invalid
                                       else "states something without citing any source")}


def check_numbers(text: str, sources_by_n: dict[int, str]) -> dict:
    cited = {n for n in citation_numbers(text) if n in sources_by_n}
    pool: set[str] = set()
    for n in cited:
        pool.update(numbers_in(sources_by_n[n]))
    found = numbers_in(text)
    ungrounded = sorted({x for x in found if x not in pool}, key=lambda x: (len(x), x))
    return {"ok": not ungrounded, "numbers": len(found), "ungrounded": ungrounded}


def check_abstention(text: str, expect_abstain: bool | None) -> dict:
    abstained = is_abstention(text)
    if expect_abstain is None:
        return {"ok": None, "abstained": abstained, "expected": None}
    return {"ok": abstained == expect_abstain, "abstained": abstained, "expected": expect_abstain}


def run_checks(answer_text: str, sources: list[dict], expect_abstain: bool | None = None,
               text_key: str = "text") -> dict:
    """All mechanical checks at once. ``sources`` are the numbered sources as shown to
    the answerer: dicts with ``n`` and the shown text under ``text_key``."""
    by_n = {int(s["n"]): s.get(text_key) or "" for s in sources}
    cit = check_citations(answer_text, set(by_n))
    num = check_numbers(answer_text, by_n)
    abst = check_abstention(answer_text, expect_abstain)
    return {
        "citations_ok": cit["ok"], "cited": cit["cited"], "invalid_citations": cit["invalid"],
        "numbers_ok": num["ok"], "numbers": num["numbers"], "ungrounded_numbers": num["ungrounded"],
        "abstained": abst["abstained"], "abstention_expected": abst["expected"], "abstention_ok": abst["ok"],
        "uncited_sentences": len(uncited_claims(answer_text)),
    }
