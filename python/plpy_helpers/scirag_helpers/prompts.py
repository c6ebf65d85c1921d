"""Prompt assembly for answers, compression and the blind judge.

Templates are rows (``scirag.prompt_templates``) at run time; the shipped defaults
are the files in ``domain/prompts/`` that the Sqitch change ``schema/answer``
inserts, and tests read the same files. A template is ``string.Template`` text
with ``$SLOTS``; each kind has required slots and, for the judge, forbidden ones
(the grounding pass must never be able to show the reference answer).

Nothing here talks to a database or a model: callers pass rows in.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parents[3] / "domain" / "prompts"

# kind -> (required slots, forbidden slots)
SLOTS = {
    "answer": ({"SOURCES", "QUESTION"}, set()),
    "judge_grounding": ({"QUESTION", "ANSWER", "SOURCES"}, {"REFERENCE"}),
    "judge_correctness": ({"ANSWER", "REFERENCE"}, {"SOURCES", "QUESTION"}),
    "compress": ({"QUESTION", "PASSAGE"}, set()),
}

ABSTAIN_LEAD = "The sources do not contain"

# The question intents, in the order they are tried (priority). Their rules are the
# rows of scirag.answer_intents (shipped from domain/prompts/intents.json, which
# must hold exactly these); classify_intent below is the one classifier, called by
# the answerer and, through scirag.classify_intent, by the reranker's intent bias.
INTENTS = ("CRITIQUE", "COMPARISON", "DEFINITION", "QUANTITY", "MECHANISM", "APPLICATION", "STUDY_DETAIL", "GENERAL")


class PromptError(ValueError):
    """A template that breaks the contract of its kind (missing or forbidden slot)."""


@dataclass(frozen=True)
class Template:
    name: str
    kind: str
    system: str
    body: str

    def slots(self) -> set[str]:
        return {
            m.group("named") or m.group("braced")
            for m in string.Template.pattern.finditer(self.body)
            if m.group("named") or m.group("braced")
        }

    def validate(self) -> "Template":
        if self.kind not in SLOTS:
            raise PromptError(f"template {self.name}: unknown kind {self.kind!r}")
        required, forbidden = SLOTS[self.kind]
        have = self.slots() | {m.group(1) for m in re.finditer(r"\$\{?([A-Z_]+)", self.system)}
        missing = required - self.slots()
        if missing:
            raise PromptError(
                f"template {self.name} ({self.kind}) lacks slot(s) {', '.join(sorted('$' + s for s in missing))}"
            )
        bad = forbidden & have
        if bad:
            raise PromptError(
                f"template {self.name} ({self.kind}) must not use {', '.join(sorted('$' + s for s in bad))}"
            )
        return self

    def render(self, **values: object) -> tuple[str, str]:
        """(system, prompt). Only the template is substituted, never the values, so a
        source containing "$16.00" is shown as it is."""
        text = string.Template(self.body).substitute({k: str(v) for k, v in values.items()})
        return self.system.strip(), text


@dataclass(frozen=True)
class Intent:
    intent: str
    priority: int
    cues: tuple[str, ...]
    guidance: str
    _compiled: tuple = field(default=(), compare=False, repr=False)

    def matches(self, question: str) -> bool:
        pats = self._compiled or tuple(re.compile(c, re.I) for c in self.cues)
        return any(p.search(question) for p in pats)


# -- shipped defaults (files) --------------------------------------------------------


def default_template(kind: str, folder: Path = PROMPTS_DIR) -> Template:
    system = (folder / f"{kind}.system.txt").read_text(encoding="utf-8").strip()
    body = (folder / f"{kind}.txt").read_text(encoding="utf-8").rstrip("\n")
    return Template("default", kind, system, body).validate()


def default_intents(folder: Path = PROMPTS_DIR) -> list[Intent]:
    return intents_from_rows(json.loads((folder / "intents.json").read_text(encoding="utf-8")))


def intents_from_rows(rows) -> list[Intent]:
    out = [
        Intent(
            r["intent"],
            int(r["priority"]),
            tuple(r["cues"] or ()),
            r["guidance"],
            tuple(re.compile(c, re.I) for c in (r["cues"] or ())),
        )
        for r in rows
    ]
    return sorted(out, key=lambda i: (i.priority, i.intent))


# -- rows (inside PostgreSQL) ----------------------------------------------------------


def load_template(plpy, kind: str, name: str = "default") -> Template:
    plan = plpy.prepare(
        "SELECT name, kind, system_text, template FROM scirag.prompt_templates WHERE kind = $1 AND name = $2",
        ["text", "text"],
    )
    rows = plpy.execute(plan, [kind, name])
    if not rows:
        raise PromptError(f"no prompt template {name!r} of kind {kind!r} in scirag.prompt_templates")
    r = rows[0]
    return Template(r["name"], r["kind"], r["system_text"], r["template"]).validate()


def load_intents(plpy) -> list[Intent]:
    rows = plpy.execute("SELECT intent, priority, cues, guidance FROM scirag.answer_intents")
    return intents_from_rows(rows)


# -- intent and question shape ---------------------------------------------------------


def classify_intent(question: str, intents: list[Intent]) -> Intent:
    """The first intent (by priority) whose cue matches; the cue-less one is the fallback."""
    fallback = None
    for it in intents:
        if not it.cues:
            fallback = fallback or it
            continue
        if it.matches(question):
            return it
    return fallback or Intent(
        "GENERAL", 1000, (), "Answer directly and concisely from the sources, citing every claim."
    )


_QUANTITY = re.compile(
    r"\bhow (much|many|long|far|dry|wet|high|low|large|big|heavy|fast|hot)\b"
    r"|\b(amount|number|rate|yield|cost|price|content|ratio|concentration|percentage|percent|share|fraction"
    r"|temperature|moisture|density|durability|loading|dose|factor|potential|emissions?|capacity|efficiency"
    r"|energy|tonnes?|tons?|kg|grams?|litres?|liters?|metres?|meters?|m3|mg|gj|kwh|dollars?|\$"
    r"|accuracy|score|error|perplexity|f1|bleu|precision|recall|dimension|speed-?up)\b"
    # a reader who hedges ("roughly what return ...") asks for a figure
    r"|\b(?:roughly|approximately) (?:what|how)\b",
    re.I,
)


def wants_quantity(question: str, intent: Intent | None = None) -> bool:
    """Does the question ask for a number (so sentences carrying numbers and units win)?"""
    return (intent is not None and intent.intent == "QUANTITY") or bool(_QUANTITY.search(question))


# -- source blocks -----------------------------------------------------------------------


def position_of(citation: dict) -> str:
    if citation.get("pages"):
        return f"p. {citation['pages']}"
    if citation.get("lines"):
        return f"lines {citation['lines']}"
    return ""


def breadcrumb(title: str, section_path: str | None) -> str:
    path = (section_path or "").strip()
    if title and (path == title or path.startswith(title + " > ")):
        path = path[len(title) :].lstrip(" >")
    return " > ".join(p for p in (title, path) if p)


def source_block(n: int, src: dict, text_key: str = "text") -> str:
    """VulcanLab's augmentation block: "[S1] Source: Title > Section > Sub (external-id,
    p. 6)" then the text (a citation [S1] or [1] names the same source)."""
    cit = src.get("citation") or {}
    where = ", ".join(x for x in (src.get("external_id") or cit.get("external_id"), position_of(cit)) if x)
    head = f"[S{n}] Source: {breadcrumb(src.get('title') or '', src.get('section_path'))}"
    if src.get("is_table"):
        head += " (table)"
    if where:
        head += f" ({where})"
    return f"{head}\n{src[text_key].strip()}"


def source_blocks(sources: list[dict], text_key: str = "text") -> str:
    return "\n\n".join(source_block(s["n"], s, text_key) for s in sources)


# -- the four prompts ------------------------------------------------------------------------


def answer_prompt(
    template: Template, question: str, sources: list[dict], intent: Intent, form_guidance: str = ""
) -> tuple[str, str]:
    """The answer prompt; ``form_guidance`` (answer_forms.model_guidance) asks for the
    answer's form first: yes/no, a number, short names, the shortest phrase."""
    return template.render(
        QUESTION=question.strip(),
        SOURCES=source_blocks(sources),
        INTENT=intent.intent,
        GUIDANCE=" ".join(x for x in (intent.guidance, form_guidance) if x),
        N_SOURCES=len(sources),
    )


def grounding_prompt(template: Template, question: str, answer: str, sources: list[dict]) -> tuple[str, str]:
    """The grounding pass: question, answer and exactly the sources the answerer saw.
    There is deliberately no parameter through which a reference answer could enter."""
    if template.kind != "judge_grounding":
        raise PromptError("grounding_prompt needs a judge_grounding template")
    template.validate()
    return template.render(
        QUESTION=question.strip(),
        ANSWER=answer.strip(),
        SOURCES=source_blocks(sources) if sources else "(no sources were provided)",
    )


def correctness_prompt(template: Template, answer: str, reference: str) -> tuple[str, str]:
    """The correctness pass: the answer and the expert reference, nothing else."""
    if template.kind != "judge_correctness":
        raise PromptError("correctness_prompt needs a judge_correctness template")
    template.validate()
    return template.render(ANSWER=answer.strip(), REFERENCE=reference.strip())


def compress_prompt(template: Template, question: str, passage: str) -> tuple[str, str]:
    return template.render(QUESTION=question.strip(), PASSAGE=passage.strip())


def approx_tokens(*texts: str) -> int:
    """Word-and-punctuation tokens (the chunker's measure), for prompt-size accounting."""
    return sum(len(re.findall(r"\w+|[^\w\s]", t or "")) for t in texts)
