"""Evaluation runs: write eval_runs/eval_results rows with the run's scope, the corpus fingerprint within it and the git commit."""

from __future__ import annotations

import json
import subprocess

import psycopg

from scirag.db import ROOT


def git_commit() -> str | None:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def start_run(
    writer: psycopg.Connection,
    reader: psycopg.Connection,
    kind: str,
    dataset: str,
    split: str | None,
    config_name: str,
    config: dict,
) -> int:
    """The one way an evaluation run starts (every kind: retrieval, answer, beir,
    table, pdf). The scope and the corpus fingerprint come from ``reader``, the
    connection the evaluation retrieves through, so the fingerprint counts only what
    that run could see; the row is written by ``writer`` (the loader) with the git
    commit. Readers later see the run only within that scope (policies/eval_scope)."""
    scope = reader.execute("SELECT scirag.eval_scope()").fetchone()[0]
    run_id = writer.execute(
        """INSERT INTO scirag.eval_runs (kind, dataset, split, config_name, config, corpus_fingerprint,
                                         scope_licenses, scope_sources, git_commit)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
        (
            kind,
            dataset,
            split,
            config_name,
            json.dumps(config),
            json.dumps(scope["fingerprint"]),
            scope["licenses"],
            scope["sources"],
            git_commit(),
        ),
    ).fetchone()[0]
    writer.commit()
    return run_id


def add_results(writer: psycopg.Connection, run_id: int, rows: list[tuple[str, dict, list[str], float]]) -> None:
    with writer.cursor() as cur:
        cur.executemany(
            "INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved, ms) VALUES (%s, %s, %s, %s, %s)",
            [(run_id, qid, json.dumps(m), retrieved, ms) for qid, m, retrieved, ms in rows],
        )
    writer.commit()


def finish_run(writer: psycopg.Connection, run_id: int, n: int, metrics: dict) -> None:
    writer.execute(
        "UPDATE scirag.eval_runs SET finished_at = now(), n_questions = %s, metrics = %s WHERE id = %s",
        (n, json.dumps(metrics), run_id),
    )
    writer.commit()


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(widths[c]) for c in columns))


def _fmt(v) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v if v is not None else "")
