"""Question analysis: what the question names (entities, sizes, a defined term) and what it asks for."""

from __future__ import annotations

import re
import unicodedata

from scirag_helpers import prompts
from scirag_helpers.words import NUMBER_WORDS, spell_greek, STOP, terms


_ENTITY_TOKEN = re.compile(r"[A-Za-z0-9][\w.@+/-]*[\w%+]|[A-Za-z0-9]")
_ENTITY_SUFFIX = re.compile(r"-(?:parameters?|params?|based|level|scale|sized?|style|like|only)$", re.I)
_WH = re.compile(r"\b(what|which|how many|how much)\s+", re.I)
_HOW_ADJ = re.compile(r"\bhow (big|large|small|heavy|fast)\b", re.I)
_HOW_ATTR = {"big": "size", "large": "size", "small": "size", "heavy": "weight", "fast": "speed"}
_ATTR_END = frozenset(
    """does do did is are was were has have had can could will would make makes made
of for in on with at to by from that than ends end""".split()
)
_COPULA_ATTR = re.compile(r"(?:is|are|was|were)\s+(?:the|an?)\s+", re.I)
_POSSESSIVE_ATTR = re.compile(
    r"(?:is|are|was|were)\s+(?!(?:the|an?)\s)[^?'’]{1,200}?['’]s\s+([^?]{1,200}?)\s*\??\s*$", re.I
)
_NEGATION = re.compile(r"\b(without|w/o|no)\b", re.I)


def _norm_entity(text: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", spell_greek(unicodedata.normalize("NFKC", text or "").lower()))


def question_entities(question: str) -> list[str]:
    """The things a question names: words with a capital letter after its first word
    (Reptile, Mini-ImageNet, TPUv3, GPUs), and words with a digit (5-shot, 540B,
    hits@10, 13.25). A source that names none of them is about something else."""
    out: list[str] = []
    toks = []
    for tok in _ENTITY_TOKEN.findall(question or ""):
        # "Reptile/FOMAML" names two things (a paper writes them apart); "w/o", "1/2"
        # and "hits@1/10" are one
        parts = tok.split("/")
        if len(parts) > 1 and all(re.fullmatch(r"[A-Za-z][\w.+-]+", p) for p in parts):
            toks.extend(parts)
        else:
            toks.append(tok)
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


def without_how_adjective(question: str) -> str:
    """ "How big is the index?" without "big": the adjective is the question's own word
    (asked_attribute reads it as "size"), not a word the answer must hold."""
    return _HOW_ADJ.sub("how", question or "")


def asked_attribute(question: str) -> list[str]:
    """The terms of what the question asks for: the words after what / which / how
    many up to its verb or preposition ("what one-shot TriviaQA accuracy does" ->
    accuracy), the last one being the head."""
    m = _WH.search(question or "")
    if not m:
        # "How big is the index?" asks for its size, as a table's column names it
        how = _HOW_ADJ.search(question or "")
        return terms(_HOW_ATTR[how.group(1).lower()]) if how else []
    rest = question[m.end() :]
    # "what is Reptile's learning rate?": the attribute is what the possessive owns
    pos = _POSSESSIVE_ATTR.match(rest)
    if pos:
        owned = []
        for w in pos.group(1).split():
            if w.lower().strip(",.?") in _ATTR_END:
                break
            owned.append(w)
        return [t for t in terms(" ".join(owned)) if t]
    # "what is the learning rate of X": the attribute follows the copula and comes
    # before the preposition (a bare "what is X?" asks for a definition, not an attribute)
    cop = _COPULA_ATTR.match(rest)
    if cop:
        rest = rest[cop.end() :]
    words = []
    ended = False
    for w in re.sub(r"\([^)]*\)", " ", rest).split():
        if w.lower().strip(",.?") in _ATTR_END:
            ended = True
            break
        words.append(w)
    if cop and not ended:
        return []
    return [t for t in terms(" ".join(words)) if t]


_HOW_MANY = re.compile(r"\bhow many\b", re.I)
_WORD_SPAN = re.compile(r"\S+")
_COUNT_DIGITS = re.compile(r"^\d[\d,.]*[kKmMbB]?$")
# "one" counts too here ("one shared layer"); NUMBER_WORDS leaves it out for counts read
# in running text, where it is as often a pronoun
_COUNT_WORDS = NUMBER_WORDS | {"one"}
COUNT_REACH = 4  # words from the number to the thing counted: "60,000 unique English tweets"
MAX_COUNTED_CHARS = 2000  # the span reader's bound on a sentence


def counted(question: str, sentence: str) -> str | None:
    """For a "how many X?" question, the words of the sentence from a number to the X it
    counts, as written there ("36 layers", "60,000 unique tweets"): the number with its
    unit. None when the question asks no count or no number in the sentence counts X.
    Measured through answer_forms.decide on QASPER train: papers 1-400 (where the rule
    was written) 5 answers cut, 4 better; papers 401-888, 8 cut, 7 better (+0.0011 and
    +0.0013 Answer F1 a question)."""
    if not _HOW_MANY.search(question or ""):
        return None
    asked = set(asked_attribute(question))
    if not asked:
        return None
    text = (sentence or "")[:MAX_COUNTED_CHARS]
    words = [(m.start(), m.end(), m.group()) for m in _WORD_SPAN.finditer(text)]
    for i, (start, _, word) in enumerate(words):
        bare = word.strip("(),;:.")
        if not (_COUNT_DIGITS.match(bare) or bare.lower() in _COUNT_WORDS):
            continue
        for _, end, after in words[i + 1 : i + 1 + COUNT_REACH]:
            if asked & set(terms(after)):
                return text[start:end].rstrip(",;:.)")
    return None


_DEF_Q = re.compile(
    r"^\s*(?:how is|how are|what is|what are|what does|what do)\s+(?:the\s+|an?\s+)?(.+?)"
    r"\s*(?:defined|mean|means|denote|denotes|stand for|refer to)?\s*\??\s*$",
    re.I,
)
# "what is meant by X?", "what kind of data structure is an FM-index?"
_DEF_MEANT = re.compile(
    r"^\s*(?:what is meant by|what (?:kind|type|sort) of (?:[\w-]+\s+){1,3}(?:is|are))\s+(?:the\s+|an?\s+)?(.+?)\s*\??\s*$",
    re.I,
)
# where a reader says which paper or method the term belongs to ("... in the STaR
# method", "... proposed in the PaLM paper", "... in Primer"): context, not the term
_DEF_WHERE = re.compile(
    r"\s+(?:(?:proposed|introduced|used|described|defined)\s+)?(?:in|by|for)\s+(?:the\s+)?"
    r"[A-Z][\w.-]*(?:\s+(?:paper|method|model|work|approach|framework|setting|experiments?))?\s*(?=\??\s*$)"
)
_RELATIVE = re.compile(r"\s+(?:that|which|who)\s")
_QUOTED = re.compile(r"['‘\"“]([^'’\"”]{2,60})['’\"”]")


def defined_term(question: str) -> str | None:
    """What a definition question asks about ("How is model FLOPs utilization (MFU)
    defined?" -> "MFU"; "what does the W element denote?" -> "W"): a term the reader
    quotes, else an acronym in parentheses, else the last capitalised word, else the
    phrase; a trailing "in the X paper" only says where to look."""
    last = re.split(r",\s*(?=(?:how|what)\b)", question or "", flags=re.I)[-1]
    last = _DEF_WHERE.sub("", last)
    # "What is MFU, the efficiency metric?": the apposition describes the term;
    # "What is the FM-index that SEAL relies on?": the clause says whose it is
    last = re.sub(r",\s+(?:the|an?)\s+[^,?]*(?=\??\s*$)", "", last)
    clause = _RELATIVE.search(last)  # one scan: the clause runs to the question's end
    if clause:
        last = last[: clause.start()]
    meant = _DEF_MEANT.search(last)
    m = meant or _DEF_Q.search(last)
    if not m or not (
        meant
        or re.search(r"\b(defined|mean|means|denote|denotes|stand for|refer to)\b|^\s*what (is|are)\b", last, re.I)
    ):
        return None
    phrase = m.group(1)
    quoted = _QUOTED.search(phrase)
    acr = re.search(r"\(([A-Za-z][\w-]*)\)", phrase)
    if quoted and not acr and not prompts.wants_quantity(last):
        # "what does 'rationalization' mean", "what is meant by 'ponder time'"
        return re.escape(quoted.group(1).strip())
    phrase = re.sub(r"\s+(?:metric|method|model|term|measure|approach)$", "", phrase.strip())
    if prompts.wants_quantity(last) or re.search(r"\b(of|for|in|on|per)\b", phrase) or len(phrase.split()) > 4:
        return None  # "what is the ash content of barley straw" asks for a value, not a definition
    if acr:
        return re.escape(acr.group(1))
    poss = re.fullmatch(r"([A-Z][\w-]*)['’]s\s+([a-z][\w-]*)", phrase.strip())
    if poss:  # "PonderNet's prediction": "the prediction of PonderNet is", "PonderNet's prediction is"
        owner, thing = map(re.escape, poss.groups())
        return rf"(?:{thing}s? of {owner}|{owner}['’]s {thing})"
    caps = [w for w in re.findall(r"[A-Za-z][\w-]*", phrase) if any(c.isupper() for c in w)]
    word = caps[-1] if caps else phrase.split()[-1] if phrase.split() else None
    return re.escape(word) if word else None


# Verbs that report a result or a possession, not what a thing is or does
_SCORED = (
    r"(?:achieves|outperforms|improves|reaches|obtains|performs|scores|beats|matches|yields|surpasses|"
    r"exceeds|falls|gets|has|does|shows|results|remains|seems|appears)"
)


# "The FM-index is more than 7 times lighter": how it compares, not what it is
_NOT_WHAT = r"(?!\s+(?:not|also|still|only|about|roughly|nearly|almost|much|far|more|less|\d|\w+er\s+than)\b)"


def _defines(sentence: str, term: str) -> bool:
    """The sentence defines the term: "MFU is the ratio ...", "w is the ... vector",
    "X, which denotes ...", "we define X as"."""
    t = term  # a regular expression (defined_term)
    return bool(
        re.search(
            rf"(?<![\w-]){t}(?![\w-])(?:\s+\([^)]*\))?\s+(is|are|denotes?|refers to|is defined as|means)\b{_NOT_WHAT}"
            # what it does, in the present ("MuZero Reanalyze revisits its past time-steps"),
            # not how it scored ("... achieves 731%")
            rf"|(?<![\w-]){t}(?![\w-])(?:\s+\([^)]*\))?\s+(?!{_SCORED}\b)[a-z]{{3,}}[^s\W]s\b"
            rf"|(?<![\w-]){t}\)?\s*:\s*\w"
            rf"|\bdefine[sd]?\b[^.;]{{0,40}}(?<![\w-]){t}(?![\w-])"
            # named after it is described: "the number of steps, called the “ponder time”"
            rf"|\b(?:called|termed|dubbed|known as|we call|referred to as)\s+(?:the\s+|an?\s+)?[\"“'‘]?{t}(?![\w-])"
            # "rationalization, where a model is tasked with ...", "X, i.e. ..."
            rf"|(?<![\w-]){t},?\s+(?:where|in which|i\.\s?e\.|that is)\s"
            rf"|\b(?:is|are)\s+(?:the|an?)\s+{t}(?![\w-])",
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
