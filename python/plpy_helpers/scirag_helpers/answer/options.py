"""Options of scirag.answer: defaults, validation, the abstention texts, and when the answer form may answer."""

from __future__ import annotations

import json

from scirag_helpers import answer_forms, prompts

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
    for key in ("include_retracted", "include_content", "form"):
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
