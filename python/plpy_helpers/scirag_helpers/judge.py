"""The blind two-pass answer judge (reference/sci-rag-methodology.txt section 9).

* Grounding pass: the question, the answer and exactly the sources the answerer was
  shown. It scores groundedness, citation accuracy and completeness against those
  sources only. It never sees the reference answer: ``grounding_prompt`` has no
  parameter for one, and the template table refuses a $REFERENCE slot.
* Correctness pass: the answer against the expert reference, in a separate call,
  without the sources (and without the question).

Both run at temperature 0. Scores clamp to 0-2. A malformed reply (not JSON, not an
object, a missing key, a non-numeric score such as "2" or true) is a failed pass with
no score: never a coerced one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scirag_helpers import prompts
from scirag_helpers.llm import LLMError, parse_json_response

GROUNDING_KEYS = ("groundedness", "citation_accuracy", "completeness")
CORRECTNESS_KEYS = ("correctness",)
SKIPPED = "skipped (no model configured)"


class MalformedJudgment(ValueError):
    """The judge replied with something that is not a valid score object."""


@dataclass
class Judgment:
    status: str  # ok | failed | skipped (no model configured)
    model: str | None = None
    grounding_status: str | None = None  # ok | failed | None (skipped)
    correctness_status: str | None = None
    scores: dict = field(default_factory=dict)
    rationale: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def clamp_score(value) -> float:
    """A JSON number clamped to the 0-2 rubric; anything else is malformed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MalformedJudgment(f"score {value!r} is not a number")
    return float(min(2.0, max(0.0, value)))


def parse_scores(text: str, keys: tuple[str, ...]) -> tuple[dict, str | None]:
    try:
        obj = parse_json_response(text)
    except LLMError as exc:
        raise MalformedJudgment(str(exc)) from None
    if not isinstance(obj, dict):
        raise MalformedJudgment(f"reply is a JSON {type(obj).__name__}, not an object")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise MalformedJudgment(f"reply lacks {', '.join(missing)}")
    scores = {k: clamp_score(obj[k]) for k in keys}
    rationale = obj.get("rationale")
    return scores, rationale if isinstance(rationale, str) else None


def _run_pass(llm, system: str, prompt: str, keys: tuple[str, ...]):
    text = llm.complete(prompt, system=system, temperature=0.0, json_mode=True, max_tokens=512)
    return parse_scores(text, keys)


def judge_answer(
    llm,
    *,
    question: str,
    answer: str,
    sources: list[dict],
    reference: str,
    grounding_template: prompts.Template,
    correctness_template: prompts.Template,
    model_label: str | None = None,
) -> Judgment:
    """Both passes for one answer. ``sources`` are the numbered sources exactly as the
    answerer saw them (dicts with ``n``, title/section/citation and ``text``)."""
    if llm is None:
        return Judgment(status=SKIPPED)
    j = Judgment(status="ok", model=model_label or getattr(llm, "name", None))
    system, prompt = prompts.grounding_prompt(grounding_template, question, answer, sources)
    try:
        scores, why = _run_pass(llm, system, prompt, GROUNDING_KEYS)
        j.scores.update(scores)
        j.rationale["grounding"] = why
        j.grounding_status = "ok"
    except (MalformedJudgment, LLMError) as exc:
        j.grounding_status = "failed"
        j.errors.append(f"grounding: {exc}")
    system, prompt = prompts.correctness_prompt(correctness_template, answer, reference)
    try:
        scores, why = _run_pass(llm, system, prompt, CORRECTNESS_KEYS)
        j.scores.update(scores)
        j.rationale["correctness"] = why
        j.correctness_status = "ok"
    except (MalformedJudgment, LLMError) as exc:
        j.correctness_status = "failed"
        j.errors.append(f"correctness: {exc}")
    if j.grounding_status != "ok" or j.correctness_status != "ok":
        j.status = "failed"
    return j
