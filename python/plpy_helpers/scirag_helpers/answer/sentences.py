"""Sentence answers: the offline extractive answerer that quotes, cites and abstains."""

from __future__ import annotations

import re

from scirag_helpers import answer_forms, checks, prompts
from scirag_helpers.answer.options import DEFAULTS
from scirag_helpers.answer.question import (
    _defines,
    _norm_entity,
    allowed_missing,
    asked_attribute,
    contrast_terms,
    defined_term,
    entity_in,
    literal_numbers,
    question_entities,
    size_in,
    sizes_in_question,
    without_how_adjective,
)
from scirag_helpers.answer.tables import _abbrev_match, table_cell_answer
from scirag_helpers.answer.units import _coverage, _LABEL, _row_text, _weights, Extract, strip_refs, Unit, units_of
from scirag_helpers.words import counts_in_words, surface_words, terms


# A sentence whose subject is the sentence before ("This reduced the corpus by 66%")
# or who did it ("They selected the STaR rationales for 70% of the problems"), or what
# follows from it ("Thus, ... the return on investment is roughly 9.24X")
_CONTINUES = re.compile(
    r"\s*(?:(This|These|It|That|They|Doing so)\s+(?!is\b|are\b|was\b|were\b)[a-z]+(ed|es|s)\b"
    r"|(Thus|Therefore|Hence|As a result),)"
)
# ... and, asked why, one that goes on about it ("However, these scalars cannot be
# applied to variable sequence lengths and so we do not include it"): a reason is
# usually given of the thing the sentence before names
_GOES_ON = re.compile(
    r"\s*(?:(?:(?:However|But|Yet|Unfortunately|Moreover|Also|In addition|In practice),?\s+)?"
    r"(?:(?:[Tt]his|[Tt]hese|[Tt]hose|[Ss]uch|[Tt]hat)\s+[a-z][\w-]*\s+|(?:[Ii]t|[Tt]hey|[Tt]his|[Tt]hat)\s+)"
    r"(?:can(?:not)?|could|does|do|did|is|are|was|were|would|may|might|must|has|have|had|only|also|still|show|lead|make|help|allow|require|need|cause|tend|suffer|fail|[a-z]+(?:ed|es|s))\b)"
)
# ... and, asked how, the sentence that answers the problem the one before poses
_SOLVES = re.compile(
    r"\s*To (?:overcome|address|solve|avoid|fix|handle|mitigate|remedy|alleviate|counter|tackle) "
    r"(?:this|these|that|it|them|such)\b"
)
# A sentence that announces a list, and the items that follow it
_ANNOUNCES = re.compile(
    r"(?::|\b(?:as follows|the following|in (?:several|two|three|four|a few|many|various) ways))\s*[.:]?\s*$", re.I
)
_ENUMERATED = re.compile(r"\s*(?:First|Second|Third|Fourth|Fifth|Finally|Lastly)(?:ly)?\b,?")
_MAX_ITEMS = 3  # items a list may add beyond max_sentences
# A clause that finishes a sentence a displayed formula interrupted
_AFTER_FORMULA = re.compile(r"\s*where\s")
# A question asking how something is done (not how many or how well)
_HOW_DONE = re.compile(r"how\b(?!\s+(?:many|much|large|big|small|long|often|well|fast|far|high|low)\b)", re.I)
# A question asking for a reason, and the words a sentence gives one with
# (what a thing is good or bad for is asked like a reason: "What is the advantage of
# X?", "What problem did they find with Y?")
_WHY = re.compile(
    r"(why\b|for what reason|what is the reason|what was the reason|what (?:\w+\s+){0,2}?"
    r"(?:reasons?|problems?|issues?|drawbacks?|disadvantages?|shortcomings?|limitations?|advantages?|benefits?|purpose)\b)",
    re.I,
)
_REASON = re.compile(
    r"\b(because|since|due to|owing to|attributed to|attributable to|as a result of|so that|in order to|to (avoid|address|mitigate|prevent|"
    r"reduce|ensure|allow|enable)|(and|,) so\b|therefore|thus|hence|which means)\b",
    re.I,
)
# A sentence that opens by pointing back at its premise ("For this reason", "Hence")
_REASON_BEFORE = re.compile(
    r"\s*(for (this|that|these|those) reasons?|(this|that) is why|therefore|thus|hence|as a result|"
    r"because of (this|that)|consequently|accordingly)\b",
    re.I,
)


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
    qterms = terms(without_how_adjective(question), True)
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
    q_counts = counts_in_words(question)
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
    # "... we extracted the longest chain of comments in each thread. This reduced the
    # corpus by about 66%.": asked for a figure, the sentence that gives it may name its
    # subject only by "This"; it is read with the sentence before, and quoted after it
    continues: dict = {}
    asked = answer_forms.without_scene(question)
    why = bool(_WHY.match(asked))
    how_done = bool(_HOW_DONE.match(asked))
    lists = answer_forms.question_type(question) == "list"
    goes_on = _CONTINUES if quantity else _GOES_ON if why else _SOLVES if how_done else None
    if goes_on is not None:
        for a, b in zip(units, units[1:]):
            if (
                a.n == b.n
                and b.order == a.order + 1
                and not (a.is_row or b.is_row or id(b) in antecedent)
                and goes_on.match(b.text)
            ):
                b.terms = b.terms | a.terms
                antecedent[id(b)] = a.text
                continues[id(b)] = a
    # "the channel-mixing block is given by: <formula> where we adopt squared ReLU": the
    # clause after a displayed formula finishes the sentence that introduced it, and is
    # read in its light (as the sentence's context, half weight)
    for i, b in enumerate(units):
        if b.is_row or not _AFTER_FORMULA.match(b.text):
            continue
        intro = next(
            (a for a in reversed(units[max(0, i - 2) : i]) if a.n == b.n and a.text.rstrip().endswith(":")), None
        )
        if intro is not None:
            b.ctx = b.ctx | (intro.terms - b.terms)

    def new_number(u: Unit) -> bool:
        body = _LABEL.sub("", u.text)
        return any(t.startswith("#") and t not in q_numbers for t in terms(body, True)) or bool(
            counts_in_words(body) - q_counts
        )

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
        # asked why, a sentence that gives a reason ("because", "so we", "to avoid"); asked
        # how, one that goes on from the problem before it ("To overcome this, we ...")
        c = 1.25 if (why and _REASON.search(u.text)) or (how_done and id(u) in continues) else 1.0
        # asked for a list, the sentence that announces one ("... into four categories:")
        if lists and _ANNOUNCES.search(u.text):
            c *= 1.25
        return cov * prior * q * a * d * e * r * c * (0.8 if u.is_caption else 1.0)

    named_cache: dict = {}
    # A paper calls itself by its name ("SEAL") in its prose, not in every sentence: a
    # name the prose of at least two and half of a document's shown sources holds is
    # what each sentence of that document is about (a row label that retrieval found in
    # its tables, "ARC-c", is not)
    subject: dict = {}
    for d, ss in docs.items():
        prose = [_norm_entity("\n".join(x for x in s["text"].split("\n") if " | " not in x)) for s in ss]
        subject[d] = {
            e
            for e in entities
            if not any(ch.isdigit() for ch in e)
            and sum(entity_in(e, t, set()) for t in prose) >= max(2, (len(ss) + 1) // 2)
        }

    def named_share(u: Unit) -> float:
        # the unit with its heading (and a table row with its caption) names them
        if id(u) not in named_cache:
            src = by_n[u.n]
            own = subject.get(src.get("document_id"), set())
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
            named_cache[id(u)] = sum(x in own or entity_in(x, nt, literal_numbers(where)) for x in entities) / len(
                entities
            )
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
            and checks.check_supports(f"{strip_refs(cell.text)} [{cell.n}]", {cell.n: by_n[cell.n]["text"]})["ok"]
        ):
            # a label's reference marker ("R2D2 [21]") would read as a citation of source 21
            quote = strip_refs(cell.text)
            u = Unit(cell.n, 0, quote, set(terms(quote, True)), is_row=True)
            return Extract(f"{quote} [{cell.n}]", False, [u], cell.coverage, missing, "table cell", cell.value or None)
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
    # "For this reason we do not include it": asked why, the reason is the sentence before
    if (
        re.search(r"\b(these|those|such)\b", best.text, re.I)
        or (why and _REASON_BEFORE.match(best.text))
        or id(best) in continues
    ) and max_sentences > 1:
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
    # "we compare Primer against three Transformer variants:": the list is what follows;
    # "we simplified our setup in several ways. First, ... Second, ...": so are the items
    # a pick announces, each of them (a list cut short would mislead)
    for lead_in in [u for u in picked if _ANNOUNCES.search(u.text)]:
        at = picked.index(lead_in) + 1
        nxt = lead_in.order + 1
        while len(picked) < max_sentences + _MAX_ITEMS:
            after = next((u for u in units if u.n == lead_in.n and u.order == nxt), None)
            colon = nxt == lead_in.order + 1 and lead_in.text.rstrip().endswith(":")
            # (a formula the colon opens is finished by the "where ..." clause after it)
            item = colon or _ENUMERATED.match(after.text) or _AFTER_FORMULA.match(after.text) if after else False
            if after is None or after in picked or not item or not passes(after):
                break
            picked.insert(at, after)
            at += 1
            nxt += 1
    coverage = max(_coverage(covered, w), best_cov)
    if coverage < min_coverage:
        # judged on what the picks cover together: two hops may each cover half
        return too_weak(coverage)
    if quantity and not any(u.has_number for u in picked):
        return too_weak(coverage)  # a question asking for a figure is not answered without one
    keep_terms = set(w)
    text = " ".join(f"{strip_refs(_row_text(u, keep_terms) if u.is_row else u.text)} [{u.n}]" for u in picked)
    return Extract(text, False, picked, coverage, missing, "ok")
