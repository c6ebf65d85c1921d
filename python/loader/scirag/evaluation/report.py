"""`scirag eval report`: one self-contained HTML file (inline SVG, no scripts, no
network) from the evaluation views: retrieval ablation bars (latest run of each
config), metric history (every run over time), answer-quality tables and bars, and
per-question answer checks, each with its corpus fingerprint and git commit."""

from __future__ import annotations

import datetime as dt
import html
import json
from pathlib import Path

import psycopg

from scirag import db

REPORTS = db.ROOT / "reports"
PALETTE = ["#2f6db5", "#e0802b", "#3a9a5b", "#b8434a", "#7d5bb5", "#8c6d3f", "#d36fb0", "#6f7f8f", "#b0b02c", "#2cb0b0"]


def esc(v) -> str:
    return html.escape("" if v is None else str(v))


def fmt(v, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return esc(v)


# ---------------------------------------------------------------------------------
# SVG charts
# ---------------------------------------------------------------------------------


def bar_chart(
    groups: list[str], series: list[str], values: dict, *, vmax: float = 1.0, title: str = "", width: int = 860
) -> str:
    """Grouped vertical bars: one group per config, one bar per metric."""
    if not groups:
        return ""
    left, top, plot_h = 44, 28, 200
    label_h = min(130, 12 + 6 * max(len(g) for g in groups))
    n_leg = len(legend_rows(series, left, width - 10))
    height = top + plot_h + label_h + 16 * n_leg + 6
    gw = (width - left - 10) / len(groups)
    bw = max(4.0, min(26.0, (gw - 10) / max(len(series), 1)))
    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{esc(title)}">',
        f'<text x="{left}" y="16" class="title">{esc(title)}</text>',
    ]
    for t in range(0, 5):
        v = vmax * t / 4
        y = top + plot_h - plot_h * t / 4
        out.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{v:g}</text>'
        )
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + (gw - bw * len(series)) / 2
        for si, s in enumerate(series):
            v = values.get((g, s))
            if v is None:
                continue
            h = plot_h * max(0.0, min(v, vmax)) / vmax
            x = x0 + si * bw
            out.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[si % len(PALETTE)]}"><title>{esc(g)} {esc(s)}: {v:.3f}</title></rect>'
            )
        cx = left + gi * gw + gw / 2
        out.append(
            f'<text transform="translate({cx:.1f},{top + plot_h + 10}) rotate(40)" class="label">{esc(g)}</text>'
        )
    out.append(legend(series, left, top + plot_h + label_h + 10, width - 10))
    out.append("</svg>")
    return "\n".join(out)


def line_chart(
    series: dict[str, list[tuple[dt.datetime, float]]], *, vmax: float = 1.0, title: str = "", width: int = 860
) -> str:
    """Metric history: one line per config, runs in time order (each run a point)."""
    pts = [t for s in series.values() for t, _ in s]
    if not pts:
        return ""
    left, top, plot_h = 44, 28, 200
    height = top + plot_h + 36 + 16 * len(legend_rows(list(series), left, width - 10))
    t0, t1 = min(pts), max(pts)
    # x is the run's position in time order (runs come in bursts: even spacing reads better)
    order = {t: i for i, t in enumerate(sorted(set(pts)))}
    span = max(len(order) - 1, 1)

    def xy(t, v):
        x = left + (width - left - 20) * (order[t] / span if len(order) > 1 else 0.5)
        return x, top + plot_h - plot_h * max(0.0, min(v, vmax)) / vmax

    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{esc(title)}">',
        f'<text x="{left}" y="16" class="title">{esc(title)}</text>',
    ]
    for t in range(0, 5):
        v = vmax * t / 4
        y = top + plot_h - plot_h * t / 4
        out.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{v:g}</text>'
        )
    out.append(
        f'<text x="{left}" y="{top + plot_h + 16}" class="tick">{esc(t0.strftime("%Y-%m-%d %H:%M"))}</text>'
        f'<text x="{width - 20}" y="{top + plot_h + 16}" class="tick" text-anchor="end">'
        f"{esc(t1.strftime('%Y-%m-%d %H:%M'))}</text>"
    )
    names = list(series)
    for i, name in enumerate(names):
        coords = [xy(t, v) for t, v in sorted(series[name])]
        color = PALETTE[i % len(PALETTE)]
        if len(coords) > 1:
            out.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
                + '"/>'
            )
        for (x, y), (t, v) in zip(coords, sorted(series[name])):
            out.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"><title>{esc(name)} '
                f"{esc(t.strftime('%Y-%m-%d %H:%M'))}: {v:.3f}</title></circle>"
            )
    out.append(legend(names, left, top + plot_h + 40, width - 10))
    out.append("</svg>")
    return "\n".join(out)


def legend_rows(names: list[str], x: float, width: float) -> list[list[tuple[float, int, str]]]:
    rows, cur, cx = [], [], x
    for i, n in enumerate(names):
        w = 22 + 7 * len(n)
        if cur and cx + w > width:
            rows.append(cur)
            cur, cx = [], x
        cur.append((cx, i, n))
        cx += w
    if cur:
        rows.append(cur)
    return rows


def legend(names: list[str], x: float, y: float, width: float = 860) -> str:
    out = []
    for r, row in enumerate(legend_rows(names, x, width)):
        yy = y + 16 * r
        for cx, i, n in row:
            out.append(
                f'<rect x="{cx:.0f}" y="{yy - 9}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
                f'<text x="{cx + 14:.0f}" y="{yy}" class="tick">{esc(n)}</text>'
            )
    return "".join(out)


def table(columns: list[str], rows: list[dict], headers: dict | None = None) -> str:
    head = "".join(f"<th>{esc((headers or {}).get(c, c))}</th>" for c in columns)
    body = "\n".join("<tr>" + "".join(f"<td>{fmt(r.get(c))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


# ---------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------


def fetch(conn: psycopg.Connection, query: str, params=()) -> list[dict]:
    cur = conn.execute(query, params)
    cols = [d.name for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def collect(dsn: str) -> dict:
    with db.connect(dsn, role=db.LOADER_ROLE, autocommit=True) as conn:
        retrieval = fetch(
            conn,
            """SELECT m.*, r.corpus_fingerprint, r.scope_licenses FROM scirag.eval_config_metrics m
                                   JOIN scirag.eval_runs r ON r.id = m.run_id
                                   WHERE m.finished_at IS NOT NULL ORDER BY m.started_at""",
        )
        answers = fetch(
            conn,
            """SELECT m.*, r.corpus_fingerprint, r.scope_licenses, r.config FROM scirag.eval_answer_metrics m
                                 JOIN scirag.eval_runs r ON r.id = m.run_id
                                 WHERE r.finished_at IS NOT NULL ORDER BY m.started_at""",
        )
        per_question = []
        if answers:
            latest = {}
            for a in answers:
                latest[(a["dataset"], a["config_name"])] = a["run_id"]
            per_question = fetch(
                conn,
                """SELECT a.run_id, r.dataset, r.config_name, a.question_id, a.tags,
                                                 a.expect_abstain, a.abstained, a.abstention_ok, a.citations_ok,
                                                 a.numbers_ok, a.ungrounded_numbers, a.evidence_hit, a.judge_status,
                                                 to_jsonb(a)->'supports_ok' AS supports_ok,
                                                 to_jsonb(a)->'answer_correct' AS answer_correct,
                                                 to_jsonb(a)->'cited_holds_answer' AS cited_holds_answer,
                                                 a.groundedness, a.citation_accuracy, a.completeness, a.correctness
                                          FROM scirag.eval_answers a JOIN scirag.eval_runs r ON r.id = a.run_id
                                          WHERE a.run_id = ANY (%s) ORDER BY a.run_id, a.question_id""",
                (list(latest.values()),),
            )
        changes = fetch(conn, CHANGES_SQL)
    return {"retrieval": retrieval, "answers": answers, "per_question": per_question, "changes": changes}


# Each configuration's latest run against the one before it, question by question.
CHANGES_SQL = """
WITH last_two AS (
  SELECT kind, dataset, config_name, (array_agg(id ORDER BY started_at DESC, id DESC))[1:2] AS ids
  FROM scirag.eval_runs WHERE finished_at IS NOT NULL
  GROUP BY kind, dataset, config_name HAVING count(*) >= 2)
SELECT l.kind, l.dataset, l.config_name, l.ids[2] AS run_a, l.ids[1] AS run_b, c.*
FROM last_two l, scirag.eval_compare(l.ids[2], l.ids[1]) c
ORDER BY l.dataset, l.config_name, l.kind, c.metric"""


# ---------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin-top:20px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:12.5px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}
th{background:#f4f4f4}td{font-variant-numeric:tabular-nums}
.chart{display:block;margin:6px 0 10px;max-width:100%;height:auto}.chart .title{font-weight:600;font-size:13px}
.chart .tick,.chart .label{font-size:11px;fill:#444}.chart .grid{stroke:#e6e6e6}
.note{color:#555;font-size:12.5px}code{background:#f4f4f4;padding:0 3px}
"""


def fingerprint_line(fp: dict | None, commit: str | None, scope: list[str] | None = None) -> str:
    fp = fp or {}
    # the fingerprint counts only what the run could see: say which license classes that was
    bits = [f"scope {', '.join(scope)}"] if scope else []
    bits += [f"{fp.get('documents', '?')} documents", f"{fp.get('chunks', '?')} chunks"]
    if any(k in fp for k in ("kg_entities", "kg_relationships", "kg_communities")):
        bits.append(
            f"graph {fp.get('kg_entities', 0)}/{fp.get('kg_relationships', 0)}/{fp.get('kg_communities', 0)}"
            " entities/relationships/communities"
        )
    bits.append("embeddings " + ", ".join(fp.get("embedding_versions") or []))
    bits.append(f"latest ingestion {fp.get('latest_ingestion', '?')}")
    return f"corpus: {esc('; '.join(bits))}; git commit <code>{esc(commit or 'unknown')}</code>"


def render(data_by_db: dict[str, dict]) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>scirag evaluation report</title>"
        f"<style>{CSS}</style></head><body>",
        f"<h1>scirag evaluation report</h1><p class='note'>Generated {esc(now)} from the views "
        "<code>scirag.eval_config_metrics</code> and <code>scirag.eval_answer_metrics</code>. "
        "Retrieval: hit@5, hit@10 and MRR over the top 10 through <code>scirag.retrieve</code>; an item is "
        "relevant if it comes from a reference document or contains an evidence phrase; unanswerable "
        "questions and questions outside the caller's scope are not scored. Answers: mechanical checks "
        "(no model) and the blind two-pass judge (0-2) when a model was configured.</p>",
    ]
    for dbname, data in data_by_db.items():
        parts.append(f"<h2>Database <code>{esc(dbname)}</code></h2>")
        parts.append(retrieval_section(data["retrieval"]))
        parts.append(answer_section(data["answers"], data["per_question"]))
        parts.append(changes_section(data.get("changes") or []))
    parts.append("</body></html>")
    return "\n".join(parts)


def retrieval_section(runs: list[dict]) -> str:
    if not runs:
        return "<p class='note'>No retrieval runs yet: <code>scirag eval retrieval</code>.</p>"
    out = []
    for dataset in sorted({r["dataset"] for r in runs}):
        rs = [r for r in runs if r["dataset"] == dataset]
        latest: dict[str, dict] = {}
        for r in rs:
            latest[r["config_name"]] = r
        kind = rs[-1]["kind"]
        metrics = ["hit_at_5", "hit_at_10", "mrr"] if kind == "retrieval" else ["ndcg_at_10", "recall_at_100", "mrr"]
        names = {
            "hit_at_5": "hit@5",
            "hit_at_10": "hit@10",
            "mrr": "MRR",
            "ndcg_at_10": "nDCG@10",
            "recall_at_100": "Recall@100",
        }
        configs = list(latest)
        values = {(c, names[m]): latest[c][m] for c in configs for m in metrics if latest[c][m] is not None}
        out.append(f"<h3>Retrieval ({esc(kind)}): {esc(dataset)}, latest run per configuration</h3>")
        out.append(bar_chart(configs, [names[m] for m in metrics], values, title=f"{dataset}: ablation"))
        rows = [dict(latest[c], **{names[m]: latest[c][m] for m in metrics}) for c in configs]
        out.append(
            table(
                [
                    "run_id",
                    "config_name",
                    "n_questions",
                    *[names[m] for m in metrics],
                    "p50_ms",
                    "corpus_documents",
                    "corpus_chunks",
                    "started_at",
                    "git_commit",
                ],
                rows,
            )
        )
        out.append(
            f"<p class='note'>{fingerprint_line(rs[-1]['corpus_fingerprint'], rs[-1]['git_commit'], rs[-1].get('scope_licenses'))}</p>"
        )
        for m in metrics:
            series: dict[str, list] = {}
            for r in rs:
                if r[m] is not None:
                    series.setdefault(r["config_name"], []).append((r["started_at"], float(r[m])))
            if sum(len(v) for v in series.values()) > len(series):  # history needs repeated runs
                out.append(line_chart(series, title=f"{dataset}: {names[m]} history"))
        if all(len([r for r in rs if r["config_name"] == c]) == 1 for c in configs):
            out.append("<p class='note'>Metric history appears once a configuration has been run more than once.</p>")
    return "\n".join(out)


def changes_section(rows: list[dict]) -> str:
    """Each configuration's latest run against the one before (scirag.eval_compare): did
    the last change move a metric by more than the spread of single questions?"""
    out = ["<h3>Since the previous run, question by question</h3>"]
    if not rows:
        out.append(
            "<p class='note'>Once a configuration has been run twice, its latest run is compared here "
            "with the one before on the questions both scored (<code>scirag.eval_compare</code>).</p>"
        )
        return "\n".join(out)
    out.append(
        "<p class='note'>The latest run of each configuration against the one before it, on the questions "
        "both scored (<code>scirag.eval_compare</code>): the mean paired difference (after - before) and "
        "its standard error; |z| below 2 is within the spread of single questions. Not for times (ms): they drift "
        "with the machine between runs, so even the same code shows a difference there.</p>"
    )
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kind"], r["dataset"], r["config_name"], r["run_a"], r["run_b"]), []).append(r)
    for (kind, dataset, config, run_a, run_b), rs in groups.items():
        out.append(f"<p><b>{esc(dataset)}</b> ({esc(kind)}), {esc(config)}: run {run_a} &rarr; run {run_b}</p>")
        out.append(
            table(
                ["metric", "n", "mean_a", "mean_b", "diff", "se", "z", "better", "worse"],
                rs,
                {"mean_a": "before", "mean_b": "after", "better": "up", "worse": "down"},
            )
        )
    return "\n".join(out)


def answer_section(runs: list[dict], per_question: list[dict]) -> str:
    if not runs:
        return "<p class='note'>No answer runs yet: <code>scirag eval answer</code>.</p>"
    out = []
    rate_cols = [
        "citations_ok_rate",
        "numbers_ok_rate",
        "abstention_ok_rate",
        "abstained_when_unanswerable",
        "abstained_when_answerable",
        "evidence_hit_rate",
    ]
    # answer correctness and the supports check (schema/eval_answer_checks; absent on older databases)
    rate_cols += [
        c for c in ("supports_ok_rate", "answer_correct_rate", "cited_holds_answer_rate") if any(c in r for r in runs)
    ]
    judge_cols = ["groundedness", "citation_accuracy", "completeness", "correctness"]
    for dataset in sorted({r["dataset"] for r in runs}):
        rs = [r for r in runs if r["dataset"] == dataset]
        latest: dict[str, dict] = {}
        for r in rs:
            latest[r["config_name"]] = r
        configs = list(latest)
        out.append(f"<h3>Answers: {esc(dataset)}, latest run per configuration</h3>")
        vals = {(c, m): _f(latest[c][m]) for c in configs for m in rate_cols if latest[c][m] is not None}
        out.append(bar_chart(configs, rate_cols, vals, title=f"{dataset}: mechanical checks (share of answers)"))
        if any(latest[c]["judged"] for c in configs):
            jv = {(c, m): _f(latest[c][m]) for c in configs for m in judge_cols if latest[c][m] is not None}
            out.append(bar_chart(configs, judge_cols, jv, vmax=2.0, title=f"{dataset}: judge scores (0-2)"))
        else:
            out.append(
                "<p class='note'>Judge: skipped (no model configured). Set SCIRAG_LLM_PROVIDER "
                "(google, openai, or recorded) and re-run <code>scirag eval answer</code>.</p>"
            )
        out.append(
            table(
                [
                    "run_id",
                    "config_name",
                    "n_questions",
                    "n_unanswerable",
                    *rate_cols,
                    "judged",
                    "judge_failed",
                    "judge_skipped",
                    *judge_cols,
                    "prompt_tokens_mean",
                    "p50_ms",
                    "git_commit",
                ],
                [{k: _f(v) for k, v in latest[c].items()} for c in configs],
            )
        )
        out.append(
            f"<p class='note'>{fingerprint_line(rs[-1]['corpus_fingerprint'], rs[-1]['git_commit'], rs[-1].get('scope_licenses'))}</p>"
        )
        series: dict[str, list] = {}
        for r in rs:
            if r["abstention_ok_rate"] is not None:
                series.setdefault(r["config_name"], []).append((r["started_at"], _f(r["abstention_ok_rate"])))
        if sum(len(v) for v in series.values()) > len(series):
            out.append(line_chart(series, title=f"{dataset}: abstention correctness history"))
        pq = [p for p in per_question if p["dataset"] == dataset]
        if pq and len(pq) <= 60:
            out.append("<h3>Per question (latest runs)</h3>")
            out.append(
                table(
                    [
                        "config_name",
                        "question_id",
                        "expect_abstain",
                        "abstained",
                        "abstention_ok",
                        "citations_ok",
                        "numbers_ok",
                        "supports_ok",
                        "answer_correct",
                        "cited_holds_answer",
                        "ungrounded_numbers",
                        "evidence_hit",
                        "judge_status",
                        "groundedness",
                        "correctness",
                    ],
                    [dict(p, ungrounded_numbers=", ".join(p["ungrounded_numbers"] or [])) for p in pq],
                )
            )
        elif pq:
            out.append(f"<p class='note'>{len(pq)} per-question rows in <code>scirag.eval_answers</code>.</p>")
    return "\n".join(out)


def _f(v):
    try:
        from decimal import Decimal

        if isinstance(v, Decimal):
            return float(v)
    except ImportError:  # pragma: no cover
        pass
    return v


def existing_databases(base_dsn: str, names: list[str]) -> list[str]:
    with psycopg.connect(db.with_dbname(base_dsn, "postgres"), autocommit=True) as admin:
        have = {r[0] for r in admin.execute("SELECT datname FROM pg_database")}
    return [n for n in names if n in have]


def write_report(dsns: list[str], out: Path | None = None) -> Path:
    data = {}
    for dsn in dsns:
        data[db.conninfo_to_dict(dsn).get("dbname", dsn)] = collect(dsn)
    out = out or REPORTS / "eval-report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    json_out = out.with_suffix(".json")
    json_out.write_text(json.dumps(data, default=str, indent=1), encoding="utf-8")
    return out
