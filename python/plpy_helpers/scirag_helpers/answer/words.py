"""Terms: the light word normaliser (stop words, stems, synonyms) shared by scoring and coverage."""

from __future__ import annotations

import re

from scirag_helpers import checks


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
