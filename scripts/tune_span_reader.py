#!/usr/bin/env python3
"""Chooses when the answerer cuts its sentence to the span reader's span: the margin over
"no span" and the question types, on QASPER train papers the reader never saw.

    .venv/bin/python scripts/tune_span_reader.py build/span_reader [--papers 300] [--write]

Asks every question of the first --papers train papers (id order: the ones
scripts/train_span_reader.py --hold-out leaves out) as a reader scoped to its paper,
takes the answer form with the whole sentence (answer_forms.decide without a reader),
and scores, for each question type and margin, the QASPER Answer F1 of the span against
that of the sentence. A type is cut for when its spans gain at least one whole
answer's F1 at the margin that gains most over all such types; --write adds the margin, the types and the figures to the folder's
span_reader.json. Needs the project venv and the QASPER train database (loaded as
scripts/train_answerer.py loads it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")] + [str(ROOT / "scripts")]

import train_answerer  # noqa: E402
from scirag.evaluation import qasper  # noqa: E402
from scirag_helpers import answer, answer_forms, span_reader  # noqa: E402

MARGINS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
# A type is cut for only when cutting gains at least one whole answer's F1 over its
# questions: smaller gains are one or two answers' noise.
MIN_GAIN = 1.0
TYPES = tuple(t for t in answer_forms.QTYPES if t != "yes_no")


def gains(rows: list[dict], reader: span_reader.SpanReader) -> dict:
    """{type: {margin: summed F1 gain of cutting}}, and how many answers each type has."""
    model = answer_forms.load_model()
    out = {t: dict.fromkeys(MARGINS, 0.0) for t in TYPES}
    seen = dict.fromkeys(TYPES, 0)
    for r in rows:
        it = r["item"]
        form = answer_forms.decide(it.question, r["shown"], answer.terms, model, r["sentence_answer"], reader=None)
        if form.abstain or form.answer_type not in TYPES or form.short != form.support:
            continue
        seen[form.answer_type] += 1
        span = reader.read(it.question, form.support)
        if span is None or span.text.strip() == form.support.strip():
            continue
        delta = qasper.score(span.text, it.answers)[0] - qasper.score(form.support, it.answers)[0]
        for m in MARGINS:
            if span.margin >= m:
                out[form.answer_type][m] += delta
    return {"gain": out, "answers": seen}


def choose(g: dict, questions: int) -> dict:
    """The margin whose gaining types gain most, those types, and the gain per question."""
    best = None
    for m in MARGINS:
        types = sorted(t for t in TYPES if g["gain"][t][m] >= MIN_GAIN)
        total = sum(g["gain"][t][m] for t in types)
        if best is None or total > best[0]:
            best = (total, m, types)
    total, margin, types = best
    return {"margin": margin, "types": types, "answer_f1_gain": round(total / max(1, questions), 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a span reader folder (scripts/train_span_reader.py --out)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "qasper")
    ap.add_argument("--papers", type=int, default=300, help="first N train papers (the held-out ones)")
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--write", action="store_true", help="add the choice to the folder's span_reader.json")
    args = ap.parse_args()
    papers, items, dsn = train_answerer.train_papers(args.data, args.papers, args.dsn)
    rows = train_answerer.collect(dsn, items, train_answerer.OPTIONS)
    g = gains(rows, span_reader.SpanReader(args.folder))
    choice = choose(g, len(items))
    report = {
        **choice,
        "papers": len(papers),
        "questions": len(items),
        "answers": g["answers"],
        "gain_per_question": {t: {str(m): round(v / len(items), 4) for m, v in g["gain"][t].items()} for t in TYPES},
    }
    print(json.dumps(report, indent=2))
    if args.write:
        path = args.folder / "span_reader.json"
        cfg = json.loads(path.read_text(encoding="utf-8"))
        cfg.update({"margin": choice["margin"], "types": choice["types"]})
        cfg["tuned_on"] = {k: report[k] for k in ("papers", "questions", "answer_f1_gain")}
        path.write_text(json.dumps(cfg) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
