"""Compression (optional): question-aware summaries of the sources before answering."""

from __future__ import annotations


from scirag_helpers import checks, prompts
from scirag_helpers.llm import LLMError, parse_json_response
from scirag_helpers.answer.units import _coverage, _weights, units_of
from scirag_helpers.words import terms


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
