"""The evaluation harness for seed questions: retrieval metrics per ablation config and
judged answers, stored in eval_runs / eval_results / eval_questions / eval_answers
with the corpus fingerprint and git commit (docs/answers-and-evaluation.md).

Retrieval: every configuration runs each answerable question through
scirag.retrieve as the reader role; an item is relevant if it comes from a reference
document or contains an evidence phrase (case and whitespace normalised); hit@5,
hit@10 and MRR over the top 10. Questions tagged unanswerable, and questions whose
reference documents are all outside the caller's scope, are not scored.

Answers: scirag.answer as the reader role, then the mechanical checks (the same
scirag_helpers.checks the answer function uses, recomputed here from what the
answerer was shown), then the blind two-pass judge when a model is configured.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import psycopg
import yaml
from psycopg import sql

from scirag import db
from scirag.evaluation.runs import add_results, finish_run, start_run
from scirag.evaluation.metrics import dedupe, hit_at, mrr, percentile
from scirag_helpers import checks, judge, prompts
from scirag_helpers.answer import llm_label

QUESTIONS_FILE = db.ROOT / "domain" / "questions.yaml"
RETRIEVAL_K = 10


class QuestionError(ValueError):
    """A seed question file that cannot be used (the message names the question and field)."""


@dataclass
class Question:
    id: str
    question: str
    expected_answer: str = ""
    reference_documents: list = field(default_factory=list)
    evidence_phrases: list = field(default_factory=list)
    tags: list = field(default_factory=list)
    answers: list = field(default_factory=list)  # acceptable answer strings (JSONL question sets)

    @property
    def unanswerable(self) -> bool:
        return "unanswerable" in self.tags


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """Seed questions from YAML (domain/questions.yaml) or JSONL (one question per
    line with acceptable answer strings, the papers' development set)."""
    if Path(path).suffix == ".jsonl":
        return load_questions_jsonl(path)
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    items = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise QuestionError(f"{path}: expected a 'questions' list")
    out, seen = [], set()
    for i, q in enumerate(items, 1):
        where = f"{path}: question {i}"
        if not isinstance(q, dict) or not q.get("id") or not q.get("question"):
            raise QuestionError(f"{where}: needs an id and a question")
        if q["id"] in seen:
            raise QuestionError(f"{where}: duplicate id {q['id']}")
        seen.add(q["id"])
        item = Question(
            id=str(q["id"]),
            question=str(q["question"]).strip(),
            expected_answer=str(q.get("expected_answer") or "").strip(),
            reference_documents=[str(x) for x in q.get("reference_documents") or []],
            evidence_phrases=[str(x) for x in q.get("evidence_phrases") or []],
            tags=[str(x) for x in q.get("tags") or []],
        )
        if item.unanswerable and (item.reference_documents or item.evidence_phrases):
            raise QuestionError(f"{where} ({item.id}): an unanswerable question names no evidence")
        if not item.unanswerable and not (item.reference_documents or item.evidence_phrases):
            raise QuestionError(
                f"{where} ({item.id}): give reference_documents or evidence_phrases, or tag it unanswerable"
            )
        out.append(item)
    return out


def load_questions_jsonl(path: Path) -> list[Question]:
    """One JSON object per line: id, question, answers (acceptable strings; empty or
    the tag unanswerable for a question the documents do not answer), paper (the
    manifest id holding the answer), optional tags and where ("Table 3": tagged
    table). An unanswerable question names no paper as its evidence."""
    out, seen = [], set()
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {i}"
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(q, dict) or not q.get("id") or not q.get("question"):
            raise QuestionError(f"{where}: needs an id and a question")
        answers = q.get("answers") or []
        if not isinstance(answers, list) or not all(isinstance(a, str) and a.strip() for a in answers):
            raise QuestionError(f"{where} ({q['id']}): answers must be a list of non-empty strings")
        tags = [str(t) for t in q.get("tags") or []]
        if not answers and "unanswerable" not in tags:
            tags.append("unanswerable")
        if "unanswerable" in tags and answers:
            raise QuestionError(f"{where} ({q['id']}): an unanswerable question has no answers")
        if str(q.get("where") or "").startswith("Table") and "table" not in tags:
            tags.append("table")
        if q["id"] in seen:
            raise QuestionError(f"{where}: duplicate id {q['id']}")
        seen.add(q["id"])
        out.append(
            Question(
                id=str(q["id"]),
                question=str(q["question"]).strip(),
                expected_answer=" | ".join(answers),
                reference_documents=[str(q["paper"])] if answers and q.get("paper") else [],
                evidence_phrases=list(answers),
                tags=tags,
                answers=list(answers),
            )
        )
    if not out:
        raise QuestionError(f"{path}: no questions")
    return out


def load_question_files(paths) -> list[Question]:
    """Several question files as one set (ids must stay unique across them)."""
    out: list[Question] = []
    for p in paths:
        out.extend(load_questions(p))
    ids = [q.id for q in out]
    dup = sorted({x for x in ids if ids.count(x) > 1})
    if dup:
        raise QuestionError(f"duplicate question id(s) across files: {', '.join(dup[:5])}")
    return out


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2212": "-"})


def answer_norm(text: str) -> str:
    """The papers' README normalisation: NFKC, curly quotes folded, a line-end hyphen
    joined, whitespace collapsed; case folded."""
    t = unicodedata.normalize("NFKC", text or "").translate(_QUOTES)
    t = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1-\2", t)
    return " ".join(t.split()).casefold()


def holds_answer(text: str, answers: list[str]) -> bool:
    """An acceptable string occurs in the text (normalised); a string with a digit
    (a cell value) also matches with all whitespace removed, as the papers' README
    advises for cells ("4.2± 0.2", "65 . 99"), but not inside a longer number."""
    t = answer_norm(text)
    flat = re.sub(r"\s+", "", t)
    for a in answers:
        na = answer_norm(a)
        if not na:
            continue
        if not any(c.isdigit() for c in na):
            if na in t:
                return True
            continue
        fa = re.sub(r"\s+", "", na)
        # "65.99" is not in "165.99" nor in "65.991"
        if re.search(rf"(?<![\d.]){re.escape(na)}(?!\d)", t) or re.search(rf"(?<![\d.]){re.escape(fa)}(?!\d)", flat):
            return True
    return False


def sync_questions(writer: psycopg.Connection, dataset: str, questions: list[Question], origin: str) -> None:
    """Upserts the question set into eval_questions (the table BI tools join against)."""
    with writer.cursor() as cur:
        cur.executemany(
            """INSERT INTO scirag.eval_questions (dataset, question_id, question, expected_answer,
                   reference_documents, evidence_phrases, tags, origin)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (dataset, question_id) DO UPDATE SET question = excluded.question,
                 expected_answer = excluded.expected_answer, reference_documents = excluded.reference_documents,
                 evidence_phrases = excluded.evidence_phrases, tags = excluded.tags, origin = excluded.origin,
                 loaded_at = now()""",
            [
                (
                    dataset,
                    q.id,
                    q.question,
                    q.expected_answer,
                    q.reference_documents,
                    q.evidence_phrases,
                    q.tags,
                    origin,
                )
                for q in questions
            ],
        )
    writer.commit()


# ---------------------------------------------------------------------------------
# Relevance and scope
# ---------------------------------------------------------------------------------


def norm(text: str) -> str:
    return " ".join((text or "").lower().split())


def is_relevant(item: dict, q: Question) -> bool:
    """Section 9: from a reference document, or containing an evidence phrase."""
    if item.get("external_id") in q.reference_documents:
        return True
    body = norm(item.get("content") or item.get("text") or "")
    return any(norm(p) and norm(p) in body for p in q.evidence_phrases)


def visible_documents(reader: psycopg.Connection) -> set[str]:
    # readers read documents through the reader API (policies/reader_wall)
    return {r[0] for r in reader.execute("SELECT external_id FROM scirag.documents_visible()")}


def expect_abstain(q: Question, visible: set[str]) -> bool:
    """Unanswerable, or answerable only from documents outside the caller's scope."""
    return q.unanswerable or _out_of_scope(q, visible)


def scope_of(reader: psycopg.Connection) -> dict:
    return reader.execute("SELECT scirag.current_scope()").fetchone()[0]


def reader_connection(dsn: str, licenses: str | None = None) -> psycopg.Connection:
    conn = db.connect(dsn, role=db.READER_ROLE, autocommit=True)
    if licenses is not None:
        conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
    return conn


# ---------------------------------------------------------------------------------
# Retrieval
# ---------------------------------------------------------------------------------


@dataclass
class Config:
    name: str
    profile: str
    options: dict


def retrieval_configs(
    reader: psycopg.Connection, profiles: Iterable[str] | None = None, ablate: bool = True, presets: bool = True
) -> list[Config]:
    """Each profile as stored, then (ablation) the profile with each of its layers off
    in turn, then every named preset when a presets table exists."""
    rows = reader.execute("SELECT name, config FROM scirag.retrieval_profiles ORDER BY name").fetchall()
    wanted = list(profiles) if profiles else [r[0] for r in rows]
    by_name = dict(rows)
    unknown = [p for p in wanted if p not in by_name]
    if unknown:
        raise ValueError(f"unknown retrieval profile(s) {', '.join(unknown)}; have {', '.join(by_name)}")
    out = []
    for name in wanted:
        out.append(Config(name, name, {}))
        layers = list(by_name[name].get("layers") or [])
        if ablate and len(layers) > 1:
            for layer in layers:
                out.append(Config(f"{name}-no_{layer}", name, {"layers": [x for x in layers if x != layer]}))
    if presets and presets_supported(reader):
        for pname, pprofile in reader.execute(
            "SELECT name, coalesce(scirag.preset_resolve(name)->'answer'->>'profile', 'interactive') "
            "FROM scirag.presets ORDER BY name"
        ).fetchall():
            if pprofile in by_name:
                out.append(Config(f"preset:{pname}", pprofile, {"preset": pname}))
    return out


def presets_supported(conn: psycopg.Connection) -> bool:
    """Presets are rows (scirag.presets); they are only an ablation config once
    scirag.retrieve reads options.preset (otherwise the run would silently repeat the
    profile and be labelled as something it is not). The five-argument API function may
    hand the options to the six-argument one (functions/retrieve_resolved), so any
    function named retrieve counts."""
    return bool(
        conn.execute(
            """SELECT to_regclass('scirag.presets') IS NOT NULL
                  AND to_regprocedure('scirag.preset_resolve(text)') IS NOT NULL
                  AND to_regprocedure('scirag.retrieve(text,int,text,jsonb,vector)') IS NOT NULL
                  AND EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = 'scirag'::regnamespace
                              AND proname = 'retrieve' AND prosrc ~ 'preset')"""
        ).fetchone()[0]
    )


def run_retrieval(
    dsn: str,
    questions: list[Question],
    configs: list[Config],
    *,
    dataset: str = "demo",
    k: int = RETRIEVAL_K,
    licenses: str | None = None,
    origin: str = "",
    progress: Callable[[str], None] = db.echo,
) -> list[dict]:
    """One eval run per config; returns the summaries (one dict per config)."""
    summaries = []
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn, licenses) as reader:
        sync_questions(writer, dataset, questions, origin)
        visible = visible_documents(reader)
        scope = scope_of(reader)
        scored = [q for q in questions if not q.unanswerable and not _out_of_scope(q, visible)]
        skipped = {
            "unanswerable": sum(q.unanswerable for q in questions),
            "out_of_scope": sum(1 for q in questions if not q.unanswerable and _out_of_scope(q, visible)),
        }
        for ci, cfg in enumerate(configs, 1):
            config = {
                "profile": cfg.profile,
                "options": cfg.options,
                "k": k,
                "scope": scope,
                "excluded_questions": skipped,
            }
            run_id = start_run(writer, reader, "retrieval", dataset, None, cfg.name, config)
            rows, per, times = [], {"hit@5": [], "hit@10": [], "mrr": []}, []
            for q in scored:
                t0 = time.perf_counter()
                got = reader.execute(
                    """SELECT chunk_id, external_id, content FROM scirag.retrieve(%s, k => %s, profile => %s,
                           options => %s)""",
                    (q.question, k, cfg.profile, json.dumps(cfg.options)),
                ).fetchall()
                ms = (time.perf_counter() - t0) * 1000
                items = [{"chunk_id": str(c), "external_id": e, "content": t} for c, e, t in got]
                ranked = [it["chunk_id"] for it in items]
                relevant = {it["chunk_id"] for it in items if is_relevant(it, q)}
                m = {
                    "hit@5": hit_at(ranked, relevant, 5),
                    "hit@10": hit_at(ranked, relevant, 10),
                    "mrr": mrr(ranked, relevant, k),
                }
                first = next((i + 1 for i, it in enumerate(items) if it["chunk_id"] in relevant), None)
                m["first_relevant_rank"] = first
                for key in per:
                    per[key].append(m[key])
                times.append(ms)
                rows.append((q.id, m, dedupe([it["external_id"] for it in items]), ms))
            add_results(writer, run_id, rows)
            metrics = {key: (statistics.mean(v) if v else 0.0) for key, v in per.items()}
            metrics.update(
                {"p50_ms": percentile(times, 50) if times else 0.0, "p95_ms": percentile(times, 95) if times else 0.0}
            )
            finish_run(writer, run_id, len(scored), metrics)
            summary = {"run": run_id, "config": cfg.name, "questions": len(scored), **metrics}
            summaries.append(summary)
            progress(
                f"[{ci}/{len(configs)}] {cfg.name}: hit@5 {metrics['hit@5']:.3f}  hit@10 "
                f"{metrics['hit@10']:.3f}  MRR {metrics['mrr']:.3f}  ({len(scored)} questions)"
            )
    return summaries


def _out_of_scope(q: Question, visible: set[str]) -> bool:
    """Every reference document is invisible to the caller (e.g. a restricted memo)."""
    return bool(q.reference_documents) and not (set(q.reference_documents) & visible)


# ---------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------


def templates_from_db(conn: psycopg.Connection) -> tuple[prompts.Template, prompts.Template]:
    out = []
    for kind in ("judge_grounding", "judge_correctness"):
        row = conn.execute(
            "SELECT name, kind, system_text, template FROM scirag.prompt_templates "
            "WHERE kind = %s AND name = 'default'",
            (kind,),
        ).fetchone()
        if not row:
            raise RuntimeError(f"no default {kind} template in scirag.prompt_templates")
        out.append(prompts.Template(*row).validate())
    return out[0], out[1]


def evaluate_answer(
    result: dict, q: Question, expect: bool, llm, grounding_t, correctness_t, label: str | None = None
) -> tuple[dict, judge.Judgment]:
    """Mechanical checks (recomputed from what the answerer was shown, never taken from
    the answer object) and the blind judge."""
    shown = result.get("prompt_sources") or []
    by_n = {s["n"]: s for s in result.get("sources") or []}
    judged_sources = [{**by_n.get(s["n"], {}), **s} for s in shown]
    chk = checks.run_checks(result["answer"], shown, expect_abstain=expect)
    j = judge.judge_answer(
        llm,
        question=q.question,
        answer=result["answer"],
        sources=judged_sources,
        reference=q.expected_answer,
        grounding_template=grounding_t,
        correctness_template=correctness_t,
        model_label=label,
    )
    return chk, j


def run_answers(
    dsn: str,
    questions: list[Question],
    *,
    dataset: str = "demo",
    options: dict | None = None,
    config_name: str | None = None,
    licenses: str | None = None,
    llm=None,
    origin: str = "",
    progress: Callable[[str], None] = db.echo,
    every: int = 1,
) -> dict:
    """One answer-evaluation run over the questions; returns its summary."""
    options = dict(options or {})
    label = llm_label(llm) if llm is not None else None
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn, licenses) as reader:
        sync_questions(writer, dataset, questions, origin)
        grounding_t, correctness_t = templates_from_db(writer)
        visible = visible_documents(reader)
        config = {
            "answer_options": options,
            "scope": scope_of(reader),
            "judge": label or judge.SKIPPED,
            "judge_temperature": 0.0,
        }
        name = config_name or _config_name(options)
        run_id = start_run(writer, reader, "answer", dataset, None, name, config)
        rows, results, answerers = [], [], set()
        started = time.monotonic()
        for i, q in enumerate(questions, 1):
            expect = expect_abstain(q, visible)
            t0 = time.perf_counter()
            result = reader.execute("SELECT scirag.answer(%s, %s)", (q.question, json.dumps(options))).fetchone()[0]
            ms = (time.perf_counter() - t0) * 1000
            answerers.add(result["answerer"])
            chk, j = evaluate_answer(result, q, expect, llm, grounding_t, correctness_t, label)
            shown_ids = {s["chunk_id"] for s in result.get("prompt_sources") or []}
            shown_items = [r for r in result.get("retrieval") or [] if r["chunk_id"] in shown_ids]
            hit = None if expect else any(is_relevant(it, q) for it in shown_items)
            correct, holds = answer_scores(result, q, expect, chk["abstained"])
            evidence_docs = sorted({r["document_id"] for r in result.get("retrieval") or []})
            row = {
                "question_id": q.id,
                "tags": q.tags,
                "expect_abstain": expect,
                "answer": result["answer"],
                "answerer": result["answerer"],
                "intent": result.get("intent"),
                "abstained": chk["abstained"],
                "citations": json.dumps(result.get("citations") or []),
                "evidence_documents": evidence_docs,
                "evidence_hit": hit,
                "sources_shown": len(result.get("prompt_sources") or []),
                "prompt_tokens": _prompt_tokens(result),
                "citations_ok": chk["citations_ok"],
                "invalid_citations": chk["invalid_citations"],
                "numbers_ok": chk["numbers_ok"],
                "ungrounded_numbers": chk["ungrounded_numbers"],
                "abstention_ok": bool(chk["abstention_ok"]),
                "uncited_sentences": chk["uncited_sentences"],
                "answer_correct": correct,
                "cited_holds_answer": holds,
                "supports_ok": chk["supports_ok"],
                "unsupported": chk["unsupported"],
                "judge_status": j.status,
                "judge_model": j.model,
                "grounding_status": j.grounding_status,
                "correctness_status": j.correctness_status,
                "groundedness": j.scores.get("groundedness"),
                "citation_accuracy": j.scores.get("citation_accuracy"),
                "completeness": j.scores.get("completeness"),
                "correctness": j.scores.get("correctness"),
                "judge_error": "; ".join(j.errors) or None,
                "judge_rationale": json.dumps(j.rationale) if j.rationale else None,
                "ms": ms,
            }
            insert_answer_row(writer, run_id, row)
            rows.append(row)
            results.append(
                (
                    q.id,
                    {
                        k: row[k]
                        for k in (
                            "citations_ok",
                            "numbers_ok",
                            "supports_ok",
                            "abstention_ok",
                            "abstained",
                            "expect_abstain",
                            "evidence_hit",
                            "answer_correct",
                            "cited_holds_answer",
                            "judge_status",
                        )
                    }
                    | {k: v for k, v in j.scores.items()},
                    dedupe([r["external_id"] for r in result.get("retrieval") or []]),
                    ms,
                )
            )
            if i % every == 0 or i == len(questions):
                rate = i / max(time.monotonic() - started, 1e-9)
                progress(
                    f"  [{i}/{len(questions)}] {q.id}: {'abstained' if chk['abstained'] else 'answered'}"
                    f"{'' if chk['abstention_ok'] else ' (abstention wrong)'}, citations "
                    f"{'ok' if chk['citations_ok'] else 'BAD'}, numbers {'ok' if chk['numbers_ok'] else 'BAD'}, "
                    f"supports {'ok' if chk['supports_ok'] else 'BAD'}"
                    + ("" if correct is None else f", {'correct' if correct else 'WRONG'}")
                    + ", "
                    f"judge {j.status} ({rate:.1f} q/s)"
                )
        add_results(writer, run_id, results)
        metrics = aggregate(rows)
        writer.execute(
            "UPDATE scirag.eval_runs SET config = config || %s WHERE id = %s",
            (json.dumps({"answerers": sorted(answerers)}), run_id),
        )
        finish_run(writer, run_id, len(rows), metrics)
    return {
        "run": run_id,
        "config": name,
        "dataset": dataset,
        "questions": len(rows),
        **metrics,
        "correct_by_tag": correct_by_tag(rows),
    }


def correct_by_tag(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """(right, scored) answers per question tag (number, yes_no, table, ...), for the
    summary printed after a run; eval_answers holds the same per question."""
    out: dict[str, list[int]] = {}
    for r in rows:
        if r["answer_correct"] is None:
            continue
        for t in r["tags"] or []:
            c = out.setdefault(t, [0, 0])
            c[0] += bool(r["answer_correct"])
            c[1] += 1
    return {t: (c[0], c[1]) for t, c in sorted(out.items())}


def answer_scores(result: dict, q: Question, expect: bool, abstained: bool) -> tuple[bool | None, bool | None]:
    """(answer correct, cited chunk holds the answer) against the question's acceptable
    strings; None when there are none or an abstention is expected. An abstention on
    an answerable question is wrong and cites nothing that holds the answer."""
    if expect or not q.answers:
        return None, None
    if abstained:
        return False, False
    cited = {c["chunk_id"] for c in result.get("citations") or []}
    verdict = yes_no_verdict(q.answers)
    if verdict:
        # "no" is inside "not" and "know": a yes/no answer is right when it says its
        # verdict first (cited support is judged as for any other answer)
        first = re.match(r"\W*(\w+)", answer_norm(result["answer"]))
        return bool(first and first.group(1) == verdict), bool(cited)
    # the chunk as stored (retrieval view), not only the part the answerer was shown
    texts = [r.get("content") or "" for r in result.get("retrieval") or [] if r["chunk_id"] in cited]
    texts += [s.get("text") or "" for s in result.get("prompt_sources") or [] if s["chunk_id"] in cited]
    return holds_answer(result["answer"], q.answers), any(holds_answer(t, q.answers) for t in texts)


def yes_no_verdict(answers: list[str]) -> str | None:
    """ "yes" or "no" when a question's acceptable answers are that verdict alone."""
    said = {answer_norm(a).strip(" .!") for a in answers}
    return said.pop() if len(said) == 1 and said <= {"yes", "no"} else None


def insert_answer_row(writer: psycopg.Connection, run_id: int, row: dict) -> None:
    cols = list(row)
    writer.execute(
        sql.SQL("INSERT INTO scirag.eval_answers ({}) VALUES ({})").format(
            sql.SQL(", ").join(map(sql.Identifier, ["run_id", *cols])),
            sql.SQL(", ").join(sql.Placeholder() * (len(cols) + 1)),
        ),
        [run_id, *[row[c] for c in cols]],
    )
    writer.commit()


def _prompt_tokens(result: dict) -> int | None:
    for s in (result.get("trace") or {}).get("stages", []):
        if s.get("stage") == "generate":
            return s.get("prompt_tokens")
    return None


def _config_name(options: dict) -> str:
    parts = [options.get("answerer", "auto")]
    if options.get("profile"):
        parts.append(options["profile"])
    if options.get("preset"):
        parts.append(f"preset:{options['preset']}")
    for key in ("consolidate", "enrich"):
        if options.get(key):
            parts.append(key)
    comp = options.get("compress")
    if comp and (comp is True or comp.get("enabled", True)):
        floor = comp.get("relevance_floor", 0.0) if isinstance(comp, dict) else 0.0
        parts.append(f"compress@{floor:g}")
    return "+".join(parts)


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return statistics.mean(vals) if vals else None


def aggregate(rows: list[dict]) -> dict:
    """Run-level numbers stored in eval_runs.metrics (so eval_metrics charts them too)."""
    unans = [r for r in rows if r["expect_abstain"]]
    ans = [r for r in rows if not r["expect_abstain"]]
    m = {
        "citations_ok": _mean(r["citations_ok"] for r in rows),
        "numbers_ok": _mean(r["numbers_ok"] for r in rows),
        "supports_ok": _mean(r["supports_ok"] for r in rows),
        "answer_correct": _mean(r["answer_correct"] for r in ans),
        "cited_holds_answer": _mean(r["cited_holds_answer"] for r in ans),
        "abstention_ok": _mean(r["abstention_ok"] for r in rows),
        "abstained_when_unanswerable": _mean(r["abstained"] for r in unans),
        "abstained_when_answerable": _mean(r["abstained"] for r in ans),
        "evidence_hit": _mean(r["evidence_hit"] for r in ans),
        "uncited_sentences": _mean(r["uncited_sentences"] for r in rows),
        "judged": sum(r["judge_status"] == "ok" for r in rows),
        "judge_failed": sum(r["judge_status"] == "failed" for r in rows),
        "judge_skipped": sum(r["judge_status"].startswith("skipped") for r in rows),
        "groundedness": _mean(r["groundedness"] for r in rows),
        "citation_accuracy": _mean(r["citation_accuracy"] for r in rows),
        "completeness": _mean(r["completeness"] for r in rows),
        "correctness": _mean(r["correctness"] for r in rows),
        "prompt_tokens": _mean(r["prompt_tokens"] for r in rows),
        "p50_ms": percentile([r["ms"] for r in rows], 50) if rows else None,
        "n_unanswerable": len(unans),
    }
    return {k: v for k, v in m.items() if v is not None}
