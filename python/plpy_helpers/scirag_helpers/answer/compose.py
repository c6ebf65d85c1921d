"""The answer object: generation (model or offline), the answer form, the checks, the result."""

from __future__ import annotations

import json
import time

from scirag_helpers import answer_forms, checks, prompts
from scirag_helpers.llm import LLMError
from scirag_helpers.answer.compress import compress_sources
from scirag_helpers.answer.question import defined_term
from scirag_helpers.answer.options import AnswerError, form_may_answer, NO_SOURCES, NOT_ANSWERED, UNSUPPORTED
from scirag_helpers.answer.sentences import extractive_answer
from scirag_helpers.answer.sources import make_sources
from scirag_helpers.answer.units import strip_refs
from scirag_helpers.words import terms


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
) -> dict:
    """The answer object for one question, from its retrieval rows (rank order).
    ``llm`` answers (None: the extractive answerer); ``compress_llm`` summarises when
    compression is on (None: extractive summaries); ``unknown_words`` are the
    question's words that occur nowhere in the caller's visible corpus (None: unknown)."""
    opts = options
    t_all = time.perf_counter()
    trace = trace if trace is not None else {"stages": []}
    stages = trace.setdefault("stages", [])
    intent = prompts.classify_intent(question, intents)
    # "What is MFU, the efficiency metric ...?" names a quantity word but asks what MFU is
    quantity = prompts.wants_quantity(question, intent) and defined_term(question) is None
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
    elif (
        shown
        and answerer.startswith("extractive")
        and not abstained
        and extract.reason == "table cell"
        # a yes/no question is answered Yes or No (below), the cell quoted as support
        and answer_forms.question_type(question) != "yes_no"
    ):
        # a cell named by its row and column answers as it is: no sentence ranking
        # leads it (the ranking was trained on prose and put the caption first); the
        # short answer is the cell, and the confidence how much of the question the
        # row, column and caption hold (on the nine papers' 204 spot cells it tells
        # right from wrong cells better than the sentence model's score)
        qtype = answer_forms.question_type(question)
        unit = extract.units[0]
        form = answer_forms.Form(qtype, extract.short or unit.text, unit.text, unit.n, round(extract.coverage, 4))
    elif shown and answerer.startswith("extractive") and form_may_answer(question, abstained, extract.reason):
        # the answer in the question's form: "Yes"/"No", a span, a number; the
        # sentence answer stays below it as the cited support
        form = answer_forms.decide(question, shown, terms, sentence_answer=None if abstained else text)
        text, abstained = with_form(text, abstained, form)
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
    # a sentence's own reference markers ("Polu et al. [2022]", "[21]") would read as
    # citations of numbered sources, as in the sentence answer (strip_refs)
    short = strip_refs(form.short).rstrip(" .")
    quoted = strip_refs(form.support or "")
    support = f"{quoted} [{form.n}]" if quoted and quoted not in text else None
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
