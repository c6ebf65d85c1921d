"""Training examples for the span reader (scripts/train_span_reader.py), from QASPER train.

One example is (question, sentence, answer span or None). A positive is a sentence of an
annotator's evidence paragraph that holds the annotator's extractive answer, with the
span from the first to the last of its spans in that sentence (a list answer,
"A, B and C", is one span, the way the metric reads a list: the annotator's spans
joined). A negative is another sentence of the same evidence paragraphs, which the
reader must leave whole: at run time it reads the sentence the answerer chose, which
holds the answer only about a third of the time. Sentences are cut by the answerer's
own splitter (scirag_helpers.text.paragraph_sentences), so training sees what the
answerer sees.

Papers are taken in QASPER's id order (as scirag.evaluation.qasper.select takes them);
the first ``hold_out`` are left out, so the answer runs over them measure the reader
unseen. Reads the archive only: no database.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag.evaluation import qasper_data  # noqa: E402
from scirag_helpers import text as textmod  # noqa: E402

SEED = 13
MAX_SPAN_WORDS = 40  # longer gold spans are sentences, which the reader need not cut
MIN_SENTENCE_CHARS = 12  # the answerer's own floor (answer_forms.sentence_table)


def span_in(sentence: str, spans: list[str]) -> tuple[int, int] | None:
    """(start, end) characters of the stretch of ``sentence`` from the first to the last
    of ``spans`` it holds, or None when it holds none of them whole."""
    found = []
    for s in spans:
        s = " ".join(s.split())
        at = sentence.find(s) if s else -1
        if at >= 0:
            found.append((at, at + len(s)))
    if not found:
        return None
    start, end = min(a for a, _ in found), max(b for _, b in found)
    if len(sentence[start:end].split()) > MAX_SPAN_WORDS:
        return None
    return start, end


def examples(archive: Path, hold_out: int, seed: int = SEED) -> tuple[list[tuple], dict]:
    """(question, sentence, (start, end) or None) examples of the papers after the first
    ``hold_out``, and their counts."""
    papers, items = qasper_data.read_split(archive)
    asked = sorted({it.paper_id for it in items if it.paper_id in papers})
    kept = set(asked[hold_out:])
    rng = random.Random(seed)
    out: list[tuple] = []
    seen: set = set()
    counts = {"papers": len(kept), "questions": 0, "positives": 0, "negatives": 0}
    for it in items:
        if it.paper_id not in kept:
            continue
        used = False
        for ans in it.answers:
            spans = [s for s in ans.get("extractive_spans") or [] if s and s.strip()]
            if not spans:
                continue
            sents = [
                s
                for e in ans.get("evidence") or []
                if e and not e.startswith("FLOAT SELECTED")
                for s in textmod.paragraph_sentences(e)
                if len(s) >= MIN_SENTENCE_CHARS
            ]
            labelled = [(s, span_in(s, spans)) for s in sents]
            if not any(at for _, at in labelled):
                continue
            for s, at in labelled:
                if at and (it.question_id, s, at) not in seen:
                    seen.add((it.question_id, s, at))
                    out.append((it.question, s, at))
                    counts["positives"] += 1
            misses = [s for s, at in labelled if not at and (it.question_id, s, None) not in seen]
            if misses:
                s = rng.choice(misses)
                seen.add((it.question_id, s, None))
                out.append((it.question, s, None))
                counts["negatives"] += 1
            used = True
        counts["questions"] += used
    return out, counts
