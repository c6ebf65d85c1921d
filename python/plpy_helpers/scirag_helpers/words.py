"""Words: the one stop-word list and the one word normaliser.

Every part that turns text into words for matching takes its stop words and its
normaliser from here: the answerer's scoring and coverage (``terms``), the supports
check (``support_terms``), HyDE's offline probe (``probe_terms``), the answer-form
features (``FORM_STOP``), entity resolution in the graph (``entity_name``) and the
reranker's training-data BM25 (``BM25_STOP``, scripts/reranker_data.py).

``STOP`` is the list. The other lists are **named sub-lists** of it, kept apart on
purpose because a part was tuned or trained with exactly that list, and each is
written as the words of ``STOP`` it keeps (``_within`` refuses a word that ``STOP``
does not hold) plus, where a part needs them, named extra words:

* ``SUPPORT_STOP``: the supports check's connective words plus ``SUPPORT_EXTRA`` (the
  words an answer uses to point into a table or a report: "row", "column", "shows");
  the check was tuned with it (the papers' answer figures, docs/answers.md);
* ``PROBE_STOP``: the HyDE probe's list (the common English function words plus
  ``PROBE_EXTRA``); the pseudo-relevance feedback passage was measured with it;
* ``FORM_STOP``: the 48 words of the answer-form features; models/answer_forms.json
  was trained with them, so changing one changes every feature vector (retrain first:
  tests/py/test_words.py pins the list and the features);
* ``BM25_STOP``: the reranker training-data BM25's 27 words (the hard negatives of
  the shipped reranker were mined with it);
* ``ENTITY_STOP``: the articles entity resolution drops from a name.

This module imports nothing of scirag's (scripts/reranker_data.py loads it by path
in the training venv).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

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
besides roughly according meant acronym team
""".split()
)


def _within(words: str, extra: frozenset = frozenset()) -> frozenset:
    """A named sub-list: words of STOP (checked here, at import), plus extra words."""
    out = frozenset(words.split())
    outside = sorted(out - STOP)
    if outside:
        raise ValueError(f"not in scirag_helpers.words.STOP: {outside}")
    return out | extra


# Words an answer uses to point into a table or at a report ("each row", "the table shows").
SUPPORT_EXTRA = frozenset("each row column value reported reports shows table".split())
SUPPORT_STOP = _within(
    """
a about above after all also an and any are as at be because been being between both but by can could did do
does during for from had has have how however in into is it its may more most much no not of on one or
other over per same so some such than that the their them then there these they this those through to under
up was we were what when where which while who why will with would yet reaches reach
achieves achieve gets get uses use used using show given""",
    SUPPORT_EXTRA,
)

PROBE_EXTRA = frozenset("based each ours theirs yours".split())
PROBE_STOP = _within(
    """a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during few for from further had has have having he
her here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or
other our out over own same she should so some such than that the their them then there these they this
those through to too under until up very was we were what when where which while who whom why will with would you
your also however thus may might must shall using used use""",
    PROBE_EXTRA,
)

FORM_STOP = _within(
    "a an the of in on for to and or with by as at from is are was were be been this that these those it its "
    "we our they their which what who how do does did can could has have had will would should may might"
)

BM25_STOP = _within(
    "a an and are as at be by for from has have in is it its of on or that the their this to was were with"
)

ENTITY_STOP = _within("the a an of")


# A count written out before what it counts ("three different random seeds", "five
# iterations"). "one" is a pronoun as often as a count, a word before a singular ("a
# two step system", "two-level") names a kind, and a count after "the" or "these"
# ("the three tasks") refers back to things already counted.
NUMBER_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
million billion""".split()
)
_COUNT = re.compile(
    r"(?<![\w-])(?<!the )(?<!these )(?<!those )(?<!all )(?<!both )("
    + "|".join(sorted(NUMBER_WORDS))
    + r")\s+(?:[a-z]+\s+){0,2}?[a-z]{2,}[^su\W]s\b",
    re.I,
)


def counts_in_words(text: str) -> set[str]:
    """The counts a text writes out in words before a plural ("three seeds")."""
    return {m.group(1).lower() for m in _COUNT.finditer(text or "")}


def normalize_number(tok: str) -> str:
    """A number as one string ("120,300" -> "120300", "0.40" -> "0.4")."""
    try:
        d = Decimal(tok.replace(",", ""))
    except InvalidOperation:
        return tok
    d = d.normalize()
    s = format(d, "f")
    return s


# Units and chemical names written two ways; maize/corn is one crop. Each pattern comes
# with the plain strings one of which any match holds, so a text holding none of them
# skips the pattern (most texts hold few: a substring test is far cheaper than a scan).
_PHRASES = [
    (needles, re.compile(pat), rep)
    for needles, pat, rep in (
        (("cubic met", "m³"), r"cubic met(?:re|er)s?|m³", " m3 "),
        (("fine partic", "pm"), r"fine particulate matter|fine particulates?|fine particles|pm\s?2\.5", " pm25 "),
        (("pm",), r"\bpm\s?10\b", " pm10 "),
        (("carbon dioxide", "co2", "co₂"), r"carbon dioxide|\bco2\b|co₂", " co2 "),
        (("ch4", "ch₄"), r"\bch4\b|ch₄", " methane "),
        (("soil organic carbon",), r"soil organic carbon", " soil carbon "),
        (("per cent", "percent", "%"), r"\bper cent\b|\bpercent(?:age)?s?\b|%", " percent "),
        (
            ("annual", "year", "yr"),
            r"\bannual(?:ly)?\b|\beach year\b|\ba year\b|\bper year\b|/\s?yr\b|\byr\b",
            " year ",
        ),
    )
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
# (word starts, whole words, the term both become)
_CHANGE = [
    (("declin", "decreas", "drop", "fall"), ("fell",), "decrea"),
    (("increas", "rise", "rising", "grow"), ("rose", "grew"), "increa"),
]
_WORD = re.compile(r"[a-z][a-z0-9]*|\d+(?:\.\d+)?")
_LETTER_SUFFIX = re.compile(r"\b([a-z][a-z0-9]+)-([a-z])\b(?![-'’])")


def stem(w: str) -> str:
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
    if w.endswith(("ability", "ibility")):
        w = w[:-5] + "le"
    # Truncation joins derivational forms (durable/durability, pellet/pelleting).
    return w[:6]


# Greek letters as a reader types them: "beta1" asks about the paper's "β1"
_GREEK = str.maketrans(
    dict(
        zip(
            "αβγδεϵζηθικλμνξπρστυφϕχψω",
            "alpha beta gamma delta epsilon epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
            "upsilon phi phi chi psi omega".split(),
        )
    )
)


def spell_greek(text: str) -> str:
    """Lower-case Greek letters spelled out ("β1" -> "beta1"); lower-case the text first."""
    return text.translate(_GREEK)


def terms(text: str, with_numbers: bool = False) -> list[str]:
    """Normalised content terms, in order (duplicates kept). With ``with_numbers``
    numbers count too (as "#80"): a number the question names is a strong cue."""
    t = spell_greek((text or "").lower().replace("’", "'"))
    for needles, pat, rep in _PHRASES:
        if any(x in t for x in needles):
            t = pat.sub(rep, t)
    # "ARC-c" and "ARC-e", "GPT-J": a one-letter suffix names a different thing, so it
    # stays joined to its stem (apart, the letter would be dropped and both read "arc")
    t = _LETTER_SUFFIX.sub(r"\1\2", t)
    out = []
    for w in _WORD.findall(t.replace("-", " ")):
        w = _WORD_SYNONYMS.get(w, w)
        for starts, whole, canon in _CHANGE:
            if w.startswith(starts) or w in whole:
                w = canon
                break
        if w in STOP or (len(w) < 2 and not w.isdigit()):
            continue
        if w.replace(".", "").isdigit():
            if with_numbers:
                out.append("#" + normalize_number(w))
            continue  # otherwise numbers are scored separately (quantity preference)
        out.append(stem(w))
    return out


def surface_words(question: str) -> dict[str, str]:
    """term -> the word the question used for it (to name what is missing)."""
    out: dict[str, str] = {}
    for w in re.findall(r"[A-Za-z][A-Za-z0-9-]*", question or ""):
        for t in terms(w):
            out.setdefault(t, w)
    return out


_SUPPORT_WORD = re.compile(r"[a-z][a-z0-9]*")


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit(word: str) -> set[str]:
    """Every string one deletion, swap of neighbours, substitution or insertion away
    from a lower-case word (about 54 per letter): the spellings a typo of a real word
    ("algorihm", "appart") most often comes from."""
    w = word.lower()
    splits = [(w[:i], w[i:]) for i in range(len(w) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    out |= {a + c + b for a, b in splits for c in _LETTERS}
    out.discard(w)
    return out


def support_terms(text: str) -> set[str]:
    """The supports check's key terms of a text (citations already removed): content
    words, lower-cased and cut to 5 letters (a crude stem that joins plural and derived
    forms), without SUPPORT_STOP."""
    words = _SUPPORT_WORD.findall(text.lower().replace("-", " "))
    return {w[:5] for w in words if w not in SUPPORT_STOP and len(w) > 1}


_PROBE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]+")


def probe_terms(text: str) -> list[str]:
    """HyDE's offline probe terms: words of three letters or more, lower-cased, hyphens
    kept, without PROBE_STOP."""
    return [w.lower() for w in _PROBE_WORD.findall(text) if w.lower() not in PROBE_STOP and len(w) > 2]


def entity_name(name: str) -> str:
    """An entity name as resolution compares it (stronger than the database key):
    parentheticals and ENTITY_STOP dropped, plural words made singular."""
    s = re.sub(r"\([^)]*\)", " ", name.lower())
    words = [w for w in re.split(r"[^a-z0-9]+", s) if w and w not in ENTITY_STOP]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)
