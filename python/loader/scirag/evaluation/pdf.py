"""PDF fidelity against hand-checked ground truth (issue 10).

A folder in the format of ../shared/data/papers holds PDFs, manifest.jsonl,
tables.jsonl, headings.jsonl and questions.jsonl (its README defines them).
The scoring core here is pure Python over chunk records, so it runs on
chunks straight from the chunker (fast iteration) and on chunks read back
from the database (the `scirag eval pdf` command) alike.

Metrics, per paper and overall:
  table_strict       ground-truth tables whose caption start and all spot cells
                     (row label and value on one row line) are in one table chunk
  table_cells        the same without the caption
  false_tables       share of table chunks holding no ground-truth caption and no
                     spot value (chunks outside the ground truth are left out)
  heading_recall     ground-truth headings matched in order against the section
                     headings the chunker produced
  heading_parent_ok  numbered sub-headings (3.1, A.2) whose path element right
                     above them is their parent heading
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "−": "-"})


def norm(text: str) -> str:
    """NFKC, folded quotes, lower case, a line-end hyphen joined, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text or "").translate(QUOTES).lower()
    text = re.sub(r"-\s*\n\s*", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def squash(text: str) -> str:
    """norm() with all whitespace removed: the robust form for cells and labels."""
    return re.sub(r"\s+", "", norm(text))


@dataclass
class ChunkRecord:
    """What scoring needs from one chunk (from the chunker or from the database)."""

    kind: str  # section | prose | table | ...
    content: str
    section_path: str = ""
    heading: str | None = None
    is_table: bool = False
    page_start: int | None = None
    page_end: int | None = None


@dataclass
class GroundTruth:
    tables: dict[str, list[dict]] = field(default_factory=dict)  # paper -> tables
    headings: dict[str, list[str]] = field(default_factory=dict)  # paper -> headings
    questions: dict[str, list[dict]] = field(default_factory=dict)  # paper -> questions
    manifest: list[dict] = field(default_factory=list)


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
    return rows


def load_ground_truth(folder: Path) -> GroundTruth:
    folder = Path(folder)
    if not (folder / "manifest.jsonl").exists():
        raise ValueError(f"{folder}: no manifest.jsonl (expected the layout of shared/data/papers)")
    gt = GroundTruth(manifest=_jsonl(folder / "manifest.jsonl"))
    for t in _jsonl(folder / "tables.jsonl"):
        gt.tables.setdefault(t["paper"], []).append(t)
    for h in _jsonl(folder / "headings.jsonl"):
        gt.headings[h["paper"]] = list(h["headings"])
    for q in _jsonl(folder / "questions.jsonl"):
        gt.questions.setdefault(q["paper"], []).append(q)
    return gt


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------


def _row_lines(content: str) -> list[str]:
    """Table chunk lines, squashed, with cell separators removed for label matching."""
    text = re.sub(r"-\s*\n\s*(?=\S)", "-", content)
    return [squash(line).replace("|", "") for line in text.split("\n") if line.strip()]


def cell_found(lines: list[str], cell: dict) -> bool:
    """The row label and, after it, the value on one line."""
    label, value = squash(cell["row"]), squash(cell["value"])
    for line in lines:
        at = line.find(label)
        if at >= 0 and value in line[at + len(label) :]:
            return True
    return False


def table_hits(table: dict, chunks: list[ChunkRecord]) -> tuple[bool, bool]:
    """(strict, cells) for one ground-truth table."""
    caption = squash(table["caption_start"])
    strict = cells = False
    for c in chunks:
        if not c.is_table:
            continue
        lines = _row_lines(c.content)
        if all(cell_found(lines, cell) for cell in table["cells"]):
            cells = True
            if caption in squash(c.content):
                strict = True
                break
    return strict, cells


_TABLE_LABEL = re.compile(r"\btable\s*([a-z]?\d+)\s*[:.]", re.IGNORECASE)


def false_table_share(tables: list[dict], chunks: list[ChunkRecord]) -> tuple[int, int]:
    """(false, counted) table chunks.  A chunk outside the ground truth (its
    caption names a table the ground truth does not list, or it lies past the
    last listed table of a paper whose list is known to be partial) is not counted."""
    known = {squash(t["table"]).replace("table", "") for t in tables}
    captions = [squash(t["caption_start"]) for t in tables]
    values = [squash(cell["value"]) for t in tables for cell in t["cells"]]
    values = [v for v in values if len(v) >= 2]
    last_page = max((t["page"] for t in tables), default=0)
    partial = False
    for c in chunks:
        for m in _TABLE_LABEL.finditer(c.content if c.is_table else ""):
            if (
                m.group(1).lower() not in known
                and m.group(1).isdigit()
                and known
                and all(k.isdigit() and int(k) < int(m.group(1)) for k in known if k.isdigit())
            ):
                partial = True
    false = counted = 0
    for c in chunks:
        if not c.is_table:
            continue
        labels = {m.group(1).lower() for m in _TABLE_LABEL.finditer(c.content)}
        if labels and not labels & known:
            continue
        if partial and (c.page_start or 0) > last_page:
            continue
        counted += 1
        text = squash(c.content)
        if not any(cap in text for cap in captions) and not any(v in text for v in values):
            false += 1
    return false, counted


# ---------------------------------------------------------------------------
# Headings
# ---------------------------------------------------------------------------

_HEAD_NUMBER = re.compile(r"^(?:appendix\s+)?((?:\d{1,2}|[a-z])(?:\.\d{1,2})*)\.?\s+(?=\S)", re.IGNORECASE)


def split_number(heading: str) -> tuple[str | None, str]:
    """'3.1 Residual Learning' -> ('3.1', 'residual learning'); 'Appendix A. Foo' -> ('a', 'foo')."""
    text = norm(heading)
    m = _HEAD_NUMBER.match(text)
    if m and not (len(m.group(1)) == 1 and m.group(1).isalpha() and len(text.split()) < 2):
        return m.group(1).lower(), text[m.end() :].strip()
    return None, text


def heading_matches(truth: str, element: str) -> bool:
    """Case-insensitive; a section number split from its title still matches."""
    if norm(truth) == norm(element):
        return True
    tn, tt = split_number(truth)
    en, et = split_number(element)
    if not tt or squash(tt) != squash(et):
        return False
    return tn is None or en is None or tn == en


def section_sequence(chunks: list[ChunkRecord]) -> list[list[str]]:
    """Section paths (as element lists) of the section chunks, in reading order."""
    return [c.section_path.split(" > ") for c in chunks if c.kind == "section" and c.section_path]


def heading_scores(headings: list[str], chunks: list[ChunkRecord]) -> tuple[int, int, int]:
    """(matched, numbered sub-headings, of those with the right parent)."""
    paths = section_sequence(chunks)
    matched_at: dict[int, int] = {}
    pos = 0
    for i, h in enumerate(headings):
        for j in range(pos, len(paths)):
            if heading_matches(h, paths[j][-1]):
                matched_at[i] = j
                pos = j + 1
                break
    numbered = parent_ok = 0
    for i, h in enumerate(headings):
        number, _ = split_number(h)
        if not number or "." not in number:
            continue
        numbered += 1
        parent_number = number.rsplit(".", 1)[0]
        parent = next((p for p in headings[:i][::-1] if split_number(p)[0] == parent_number), None)
        j = matched_at.get(i)
        if parent is None or j is None or len(paths[j]) < 2:
            continue
        if heading_matches(parent, paths[j][-2]):
            parent_ok += 1
    return len(matched_at), numbered, parent_ok


# ---------------------------------------------------------------------------
# One paper, many papers
# ---------------------------------------------------------------------------


def score_paper(paper: str, chunks: list[ChunkRecord], gt: GroundTruth) -> dict:
    """Counts (not ratios) so papers can be summed before dividing."""
    tables = gt.tables.get(paper, [])
    strict = cells = 0
    missing = []
    for t in tables:
        s, c = table_hits(t, chunks)
        strict += s
        cells += c
        if not s:
            missing.append(t["table"])
    false, counted = false_table_share(tables, chunks)
    headings = gt.headings.get(paper, [])
    matched, numbered, parent_ok = heading_scores(headings, chunks)
    return {
        "paper": paper,
        "tables": len(tables),
        "table_strict_n": strict,
        "table_cells_n": cells,
        "table_chunks": counted,
        "false_tables_n": false,
        "headings": len(headings),
        "headings_matched": matched,
        "numbered_sub": numbered,
        "parent_ok_n": parent_ok,
        "tables_missed": missing,
    }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def ratios(counts: dict) -> dict:
    return {
        "table_strict": _ratio(counts["table_strict_n"], counts["tables"]),
        "table_cells": _ratio(counts["table_cells_n"], counts["tables"]),
        "false_tables": _ratio(counts["false_tables_n"], counts["table_chunks"]),
        "heading_recall": _ratio(counts["headings_matched"], counts["headings"]),
        "heading_parent_ok": _ratio(counts["parent_ok_n"], counts["numbered_sub"]),
    }


def total(per_paper: list[dict]) -> dict:
    keys = [
        "tables",
        "table_strict_n",
        "table_cells_n",
        "table_chunks",
        "false_tables_n",
        "headings",
        "headings_matched",
        "numbered_sub",
        "parent_ok_n",
    ]
    return {k: sum(p[k] for p in per_paper) for k in keys}


def records_from_chunks(chunks) -> list[ChunkRecord]:
    """ChunkRecords from scirag.chunk.Chunk objects."""
    return [
        ChunkRecord(c.kind, c.content, c.section_path, c.heading, c.is_table, c.page_start, c.page_end) for c in chunks
    ]


def answer_in(answers: list[str], texts: list[str]) -> bool:
    keys = [squash(a) for a in answers]
    joined = [squash(t) for t in texts]
    return any(k and k in t for k in keys for t in joined)


# ---------------------------------------------------------------------------
# `scirag eval pdf`: load the folder into its own database, score, store
# ---------------------------------------------------------------------------

PDF_EVAL_DB = "scirag_eval_pdf"
QA_K = 5


def eval_dsn(dsn: str | None) -> str:
    from scirag import db

    return db.benchmark_dsn(dsn, PDF_EVAL_DB)


def _cpu_seconds() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _peak_rss_mb() -> float:
    import resource

    # the loader and its (ended) parse workers; Linux reports KiB
    kib = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return kib / 1024.0


def load_folder(dsn: str, folder: Path, engine: str, target_tokens: int, overlap_tokens: int) -> dict:
    """Deploys dsn's database, replaces its documents with the folder's, and
    measures ingestion: pages per second and the process's peak memory."""
    import time

    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    db.init_db(dsn)
    with db.connect(dsn) as admin:
        # The database is this command's own: a new parse replaces the last one.
        admin.execute("DELETE FROM scirag.documents")
        admin.commit()
    import scirag.ingest.pipeline as ingest_module

    # The PDF path alone (parse + chunk) on the CPU clock of the loading thread:
    # the steadier figure when other work shares the machine; embedding and
    # storing are measured with it in the totals.
    # (parsing runs in the ingester's parse worker, which reports its CPU per document)
    parse_cpu = [0.0]
    real_chunk = ingest_module.chunk_document

    def timed(fn):
        def run(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                parse_cpu[0] += time.thread_time() - t0

        return run

    with db.connect(dsn, role=db.LOADER_ROLE) as conn:
        ingester = Ingester(conn, target_tokens=target_tokens, overlap_tokens=overlap_tokens)
        ingester.embedder  # noqa: B018  (the model loads before the clock starts, as it always did)
        started, cpu = time.monotonic(), _cpu_seconds()
        ingest_module.chunk_document = timed(real_chunk)
        try:
            counts = ingest_manifest(conn, folder / "manifest.jsonl", ingester)
        finally:
            ingest_module.chunk_document = real_chunk
            parse_cpu[0] += ingester.parser.cpu_seconds
            ingester.close()
        seconds, cpu = time.monotonic() - started, _cpu_seconds() - cpu + ingester.parser.cpu_seconds
        pages, parsers = conn.execute(
            "SELECT coalesce(sum(pages), 0), array_agg(DISTINCT parser) FROM scirag.documents"
        ).fetchone()
        reports = conn.execute(
            """SELECT external_id, status, reason FROM scirag.ingest_reports
               WHERE run_id = %s AND (status <> 'added' OR reason IS NOT NULL)""",
            (counts["run_id"],),
        ).fetchall()
    # Wall time depends on what else runs on the machine; CPU time of this
    # process (parse, chunk, embed; all threads) is the steadier figure.
    return {
        "pages": int(pages),
        "seconds": round(seconds, 1),
        "pages_per_s": round(pages / seconds, 2) if seconds else None,
        "cpu_seconds": round(cpu, 1),
        "pages_per_cpu_s": round(pages / cpu, 2) if cpu else None,
        "parse_cpu_seconds": round(parse_cpu[0], 1),
        "parse_pages_per_cpu_s": round(pages / parse_cpu[0], 2) if parse_cpu[0] else None,
        "peak_mb": round(_peak_rss_mb()),
        "parsers": parsers or [],
        "added": counts["added"],
        "failed": counts["failed"],
        "problems": [list(r) for r in reports],
        "engine": engine,
    }


def chunks_by_paper(conn) -> dict[str, list[ChunkRecord]]:
    out: dict[str, list[ChunkRecord]] = {}
    for ext, kind, content, path, heading, is_table, p0, p1 in conn.execute(
        """SELECT d.external_id, c.kind, c.content, c.section_path, c.heading, c.is_table,
                      c.page_start, c.page_end
               FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
               ORDER BY d.external_id, c.ordinal"""
    ):
        out.setdefault(ext, []).append(ChunkRecord(kind, content, path or "", heading, is_table, p0, p1))
    return out


def run_eval(
    dsn: str,
    folder: Path,
    *,
    engine: str | None = None,
    profile: str = "interactive",
    target_tokens: int = 800,
    overlap_tokens: int = 150,
    reload: bool = True,
) -> dict:
    """Loads (unless reload is False), scores per paper and overall, stores an
    eval_runs row of kind 'pdf' with per-paper and per-question eval_results."""
    import os

    from scirag import db
    from scirag.evaluation.qa import reader_connection
    from scirag.evaluation.runs import add_results, finish_run, start_run
    from scirag.ingest.pdf.engines import PDF_ENGINE_ENV, pdf_engine_name

    folder = Path(folder)
    gt = load_ground_truth(folder)
    engine = pdf_engine_name(engine)
    os.environ[PDF_ENGINE_ENV] = engine  # the ingester parses through parse_file
    load = load_folder(dsn, folder, engine, target_tokens, overlap_tokens) if reload else {"engine": engine}

    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn) as reader:
        stored = chunks_by_paper(writer)
        per_paper, qa_rows = [], []
        hits = 0
        for entry in gt.manifest:
            pid = entry["id"]
            counts = score_paper(pid, stored.get(pid, []), gt)
            q_hits = 0
            for q in gt.questions.get(pid, []):
                got = reader.execute(
                    "SELECT external_id, content FROM scirag.retrieve(%s, k => %s, profile => %s)",
                    (q["question"], QA_K, profile),
                ).fetchall()
                hit = answer_in(q["answers"], [c for _, c in got])
                q_hits += hit
                qa_rows.append(
                    (q["id"], {"hit@5": int(hit), "paper": pid}, list(dict.fromkeys(e for e, _ in got)), None)
                )
            counts["questions"], counts["qa_hits"] = len(gt.questions.get(pid, [])), q_hits
            hits += q_hits
            per_paper.append(counts)
        overall = total(per_paper)
        n_q = sum(p["questions"] for p in per_paper)
        metrics = {
            **ratios(overall),
            "qa_hit5": round(hits / n_q, 4) if n_q else None,
            **{
                k: load[k]
                for k in ("pages_per_s", "pages_per_cpu_s", "parse_pages_per_cpu_s", "peak_mb", "pages", "seconds")
                if k in load
            },
        }
        config = {
            "engine": engine,
            "profile": profile,
            "target_tokens": target_tokens,
            "overlap_tokens": overlap_tokens,
            "folder": str(folder),
            "load": load,
        }
        run_id = start_run(writer, reader, "pdf", folder.name, None, engine, config)
        rows = [
            (
                f"paper:{p['paper']}",
                {
                    **ratios(p),
                    **{k: v for k, v in p.items() if k != "paper"},
                    "qa_hit5": _ratio(p["qa_hits"], p["questions"]),
                },
                [p["paper"]],
                None,
            )
            for p in per_paper
        ]
        add_results(writer, run_id, rows + qa_rows)
        finish_run(writer, run_id, n_q, {k: v for k, v in metrics.items() if v is not None})
    return {"run_id": run_id, "metrics": metrics, "papers": per_paper, "load": load}


def report_rows(result: dict) -> list[dict]:
    rows = []
    for p in result["papers"]:
        rows.append(
            {
                "paper": p["paper"],
                **ratios(p),
                "qa_hit5": _ratio(p["qa_hits"], p["questions"]),
                "missed": ",".join(t.replace("Table ", "T") for t in p["tables_missed"]),
            }
        )
    m = result["metrics"]
    rows.append(
        {
            "paper": "ALL",
            **{k: m.get(k) for k in REPORT_METRICS},
        }
    )
    return rows


# the figures of a report row, per paper and for ALL
REPORT_METRICS = ("table_strict", "table_cells", "false_tables", "heading_recall", "heading_parent_ok", "qa_hit5")
REPORT_COLUMNS = ["paper", *REPORT_METRICS, "missed"]
