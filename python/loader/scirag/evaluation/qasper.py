"""QASPER as an answer benchmark: questions NLP researchers asked about whole papers.

Each split archive (``train.tar.gz``, ``dev.tar.gz``: ``papers/ID.txt`` as Markdown and
``questions.json``) is loaded through the normal loader into a database of its own
(``scirag_qasper_<split>``), once. Every question is asked as a reader scoped to its
own paper (``scirag.documents``), and the short answer is scored with the standard
QASPER Answer F1, written here from its definition: lower-case, strip punctuation and
the articles a/an/the, token F1; yes/no answers compare as "Yes"/"No", unanswerable
ones as "Unanswerable"; the best annotator counts, and the question's type is the type
of that annotator's answer. Nothing of the data is copied into the repository.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from pathlib import Path

from scirag import db
from scirag_helpers import checks

from scirag.evaluation.qasper_data import (  # noqa: F401  (the metric and the data, re-exported)
    TYPES,
    UNANSWERABLE,
    Item,
    evidence_keys,
    gold_type,
    holds_answer,
    normalize_answer,
    read_split,
    reference,
    score,
    token_f1,
    token_recall,
)

DB_PREFIX = "scirag_qasper"
_TITLE = re.compile(r"^#\s+(.+)$", re.M)


def select(papers: dict[str, str], items: list[Item], limit_papers: int | None, offset: int = 0):
    """The first ``limit_papers`` papers (in id order, after ``offset``) that have questions."""
    asked = sorted({it.paper_id for it in items if it.paper_id in papers})
    chosen = set(asked[offset : offset + limit_papers] if limit_papers else asked[offset:])
    return {p: papers[p] for p in chosen}, [it for it in items if it.paper_id in chosen]


def doc_id(paper_id: str) -> str:
    return f"qasper-{paper_id}"


def manifest_lines(papers: dict[str, str]) -> list[dict]:
    lines = []
    for pid in sorted(papers):
        text = papers[pid]
        m = _TITLE.search(text)
        lines.append(
            {
                "id": doc_id(pid),
                "text": text,
                "format": "markdown",
                "title": m.group(1).strip() if m else f"QASPER paper {pid}",
                "source": "qasper",
                "license": "public",
            }
        )
    return lines


def qasper_dsn(dsn: str | None, split: str) -> str:
    return db.benchmark_dsn(dsn, f"{DB_PREFIX}_{split}")


def build(dsn: str, papers: dict[str, str]) -> None:
    """Loads the papers through the normal loader (once per paper set; progress on
    stderr). A rerun with more papers ingests only the ones missing."""
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    lines = manifest_lines(papers)
    db.init_db(dsn)
    with db.connect(dsn, role=db.LOADER_ROLE) as conn:
        have = {r[0] for r in conn.execute("SELECT external_id FROM scirag.documents WHERE source = 'qasper'")}
        conn.commit()
        todo = [ln for ln in lines if ln["id"] not in have]
        if not todo:
            return
        tag = hashlib.sha256(json.dumps([ln["id"] for ln in todo]).encode()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / f"scirag-qasper-{tag}"
        folder.mkdir(exist_ok=True)
        manifest = folder / "manifest.jsonl"
        with open(manifest, "w", encoding="utf-8") as fh:
            for line in todo:
                fh.write(json.dumps(line) + "\n")
        db.echo(f"ingesting {len(todo)} QASPER papers into {db.conninfo_to_dict(dsn).get('dbname')} (once)")
        ingest_manifest(conn, manifest, Ingester(conn))


# ---------------------------------------------------------------------------------
# Asking
# ---------------------------------------------------------------------------------


def prediction(result: dict) -> str:
    """The answer text scored: the short answer when the answerer gives one, else the
    answer without its citation markers; an abstention is "Unanswerable"."""
    if result.get("abstained"):
        return UNANSWERABLE
    short = result.get("short_answer")
    if short:
        return short
    return " ".join(checks.strip_citations(result.get("answer") or "").split())


def evidence_hit(result: dict, answers: list[dict], k: int = 5) -> bool | None:
    """A gold evidence paragraph (any annotator's) inside the top-k retrieved chunks;
    None when no annotator gave text evidence (unanswerable, figures only)."""
    gold = evidence_keys(answers)
    if not gold:
        return None
    top = [normalize_answer(r.get("content") or "") for r in (result.get("retrieval") or [])[:k]]
    return any(g in t for g in gold for t in top)


def ask_all(
    dsn: str,
    items: list[Item],
    options: dict,
    progress=db.echo,
    every: int = 50,
) -> list[dict]:
    """Every question as a reader scoped to its own paper; one row per question."""
    from scirag.evaluation.qa import reader_connection

    opts = {**options, "include_content": True}
    rows = []
    with reader_connection(dsn) as reader:
        started = time.monotonic()
        for i, it in enumerate(items, 1):
            reader.execute("SELECT set_config('scirag.documents', %s, false)", (doc_id(it.paper_id),))
            t0 = time.perf_counter()
            result = reader.execute("SELECT scirag.answer(%s, %s)", (it.question, json.dumps(opts))).fetchone()[0]
            ms = (time.perf_counter() - t0) * 1000
            pred = prediction(result)
            f1, kind = score(pred, it.answers)
            rows.append(
                {
                    "question_id": it.question_id,
                    "paper_id": it.paper_id,
                    "f1": round(f1, 4),
                    "type": kind,
                    "gold_type": gold_type(it.answers),
                    "unanswerable_gold": any(a.get("unanswerable") for a in it.answers),
                    "abstained": bool(result.get("abstained")),
                    "answer_type": result.get("answer_type"),
                    "confidence": result.get("confidence"),
                    "prediction": pred,
                    "evidence_hit": evidence_hit(result, it.answers),
                    "answer_holds_gold": None
                    if result.get("abstained")
                    else holds_answer(" ".join(checks.strip_citations(result.get("answer") or "").split()), it.answers),
                    "retrieved": [
                        r.get("external_id") or str(r.get("chunk_id")) for r in result.get("retrieval") or []
                    ],
                    "ms": round(ms, 1),
                }
            )
            if progress and (i % every == 0 or i == len(items)):
                rate = i / max(time.monotonic() - started, 1e-9)
                progress(f"qasper: {i}/{len(items)} questions ({rate:.1f}/s, ETA {(len(items) - i) / rate:.0f} s)")
    return rows


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def _se(xs: list[float]) -> float | None:
    """Standard error of the mean: how far the mean moves with the questions drawn (two
    runs over the same questions are compared question by question: scirag.eval_compare)."""
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return round((sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) ** 0.5, 4)


def _median(xs) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return round((xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2), 1)


def auroc(pos: list[float], neg: list[float]) -> float | None:
    """Probability that a positive's score beats a negative's (ties count half): a right
    answer's confidence against a wrong one's here, P(unanswerable) in train_answerer."""
    if not pos or not neg:
        return None
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    # rank-sum with average ranks for ties: linear after the sort
    total, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        avg = (i + j + 1) / 2
        total += avg * sum(1 for k in range(i, j) if ranked[k][1])
        i = j
    n1, n0 = len(pos), len(neg)
    return round((total - n1 * (n1 + 1) / 2) / (n1 * n0), 4)


def summarize(rows: list[dict], right_at: float = 0.5) -> dict:
    """Answer F1 overall (with its standard error) and per type, abstention precision/recall on unanswerable
    questions, evidence recall@5, latency, and how well confidence separates right
    (F1 >= right_at) from wrong answers (AUROC)."""
    out = {
        "questions": len(rows),
        "answer_f1": _mean(r["f1"] for r in rows),
        "answer_f1_se": _se([r["f1"] for r in rows]),
    }
    for t in TYPES:
        sel = [r["f1"] for r in rows if r["type"] == t]
        out[f"f1_{t}"] = _mean(sel)
        out[f"n_{t}"] = len(sel)
    abst = [r for r in rows if r["abstained"]]
    unans = [r for r in rows if r["unanswerable_gold"]]
    out["abstention_precision"] = _mean(1.0 if r["unanswerable_gold"] else 0.0 for r in abst)
    out["abstention_recall"] = _mean(1.0 if r["abstained"] else 0.0 for r in unans)
    out["evidence_recall_at_5"] = _mean(None if r["evidence_hit"] is None else float(r["evidence_hit"]) for r in rows)
    # the last step apart from retrieval: of the answered questions with a written gold
    # answer, how often the answer's own text (short answer and cited sentence) holds it
    out["answer_holds_gold"] = _mean(
        None if r.get("answer_holds_gold") is None else float(r["answer_holds_gold"]) for r in rows
    )
    out["p50_ms"] = _median(r["ms"] for r in rows)
    conf = [r for r in rows if r.get("confidence") is not None and not r["abstained"]]
    out["confidence_auroc"] = auroc(
        [r["confidence"] for r in conf if r["f1"] >= right_at], [r["confidence"] for r in conf if r["f1"] < right_at]
    )
    return out


def store(dsn: str, split: str, config_name: str, options: dict, rows: list[dict], summary: dict) -> int:
    """One eval run (kind answer, dataset qasper) with a row per question."""
    from scirag.evaluation.qa import reader_connection
    from scirag.evaluation.runs import start_run

    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn) as reader:
        run_id = start_run(writer, reader, "answer", "qasper", split, config_name, {"answer_options": options})
        with writer.cursor() as cur:
            cur.executemany(
                "INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved, ms) VALUES (%s, %s, %s, %s, %s)",
                [
                    (
                        run_id,
                        r["question_id"],
                        json.dumps({k: v for k, v in r.items() if k not in ("question_id", "retrieved", "ms")}),
                        r["retrieved"][:10],
                        r["ms"],
                    )
                    for r in rows
                ],
            )
        writer.execute(
            "UPDATE scirag.eval_runs SET finished_at = now(), n_questions = %s, metrics = %s WHERE id = %s",
            (len(rows), json.dumps(summary), run_id),
        )
        writer.commit()
    return run_id
