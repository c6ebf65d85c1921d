"""QASPER's data and its metric, with no database import (the trainers in .venv-train
read the split archives through it too).

Each split archive (``train.tar.gz``, ``dev.tar.gz``) holds ``papers/ID.txt`` (the paper
as Markdown) and ``questions.json``. The standard QASPER Answer F1 is written here from
its definition: lower-case, strip punctuation and the articles a/an/the, token F1;
yes/no answers compare as "Yes"/"No", unanswerable ones as "Unanswerable"; the best
annotator counts, and the question's type is the type of that annotator's answer.
"""

from __future__ import annotations

import collections
import json
import re
import string
import tarfile
from dataclasses import dataclass
from pathlib import Path

UNANSWERABLE = "Unanswerable"
TYPES = ("extractive", "abstractive", "yes_no", "unanswerable")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


# ---------------------------------------------------------------------------------
# The metric
# ---------------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (the SQuAD/QASPER rule)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred and not ref:
        return 1.0
    common = collections.Counter(pred) & collections.Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def token_recall(text: str, gold: str) -> float:
    """How much of ``gold`` (normalised tokens, with multiplicity) ``text`` holds."""
    ref = collections.Counter(normalize_answer(gold).split())
    if not ref:
        return 0.0
    have = collections.Counter(normalize_answer(text).split())
    return sum((ref & have).values()) / sum(ref.values())


def holds_answer(text: str, answers: list[dict], at: float = 0.5) -> bool | None:
    """Whether ``text`` holds at least ``at`` of some annotator's written answer (an
    extractive or abstractive one): the answer's sentence was the right one, however
    many words more it has. None when no annotator wrote an answer (yes/no and
    unanswerable questions)."""
    golds = [t for t, kind in map(reference, answers) if kind in ("extractive", "abstractive") and t]
    if not golds:
        return None
    return any(token_recall(text, g) >= at for g in golds)


def reference(answer: dict) -> tuple[str, str]:
    """One annotator's answer as (text, type)."""
    if answer.get("unanswerable"):
        return UNANSWERABLE, "unanswerable"
    if answer.get("extractive_spans"):
        return ", ".join(answer["extractive_spans"]), "extractive"
    if answer.get("free_form_answer"):
        return answer["free_form_answer"], "abstractive"
    if answer.get("yes_no") is not None:
        return ("Yes" if answer["yes_no"] else "No"), "yes_no"
    return "", "abstractive"


def score(prediction: str, answers: list[dict]) -> tuple[float, str]:
    """Answer F1 against the best annotator, and that annotator's answer type."""
    best, kind = -1.0, "abstractive"
    for a in answers:
        text, t = reference(a)
        f1 = token_f1(prediction, text)
        if f1 > best:
            best, kind = f1, t
    return max(best, 0.0), kind


def evidence_keys(answers: list[dict]) -> list[str]:
    """The gold text evidence of every annotator as keys a chunk must contain: the
    first 200 normalised characters of each paragraph (figures and tables, given as
    "FLOAT SELECTED", and fragments under 20 characters are left out)."""
    keys = [
        normalize_answer(e)[:200]
        for a in answers
        for e in a.get("evidence") or []
        if e and not e.startswith("FLOAT SELECTED")
    ]
    return [k for k in keys if len(k) >= 20]


def gold_type(answers: list[dict]) -> str:
    """The majority annotator type (for reporting abstention and per-type counts)."""
    kinds = collections.Counter(reference(a)[1] for a in answers)
    return kinds.most_common(1)[0][0] if kinds else "abstractive"


# ---------------------------------------------------------------------------------
# The data
# ---------------------------------------------------------------------------------


@dataclass
class Item:
    paper_id: str
    question_id: str
    question: str
    answers: list[dict]


def read_split(archive: Path) -> tuple[dict[str, str], list[Item]]:
    """Papers (id -> Markdown) and questions of one split archive, read in memory."""
    if not archive.is_file():
        raise FileNotFoundError(f"QASPER archive not found: {archive}")
    papers: dict[str, str] = {}
    items: list[Item] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = Path(member.name)
            data = tar.extractfile(member).read()
            if name.name == "questions.json":
                for q in json.loads(data):
                    items.append(Item(q["paper_id"], q["question_id"], q["question"].strip(), q["answers"]))
            elif name.parent.name == "papers" and name.suffix == ".txt":
                papers[name.stem] = data.decode("utf-8")
    if not items:
        raise ValueError(f"{archive}: no questions.json inside")
    return papers, items
