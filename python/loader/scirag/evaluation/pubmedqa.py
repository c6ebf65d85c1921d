"""PubMedQA as an answer-evaluation set: each question's abstract (CONTEXTS, one
section per LABEL) is ingested as a document into a database of its own
(``scirag_pubmedqa``, like ``scirag eval beir``), built at run time from the shared
data file; nothing of it is copied into the repository.

Each question becomes a seed question: the reference document is its own abstract,
the expected answer is the expert decision (yes/no/maybe) with its LONG_ANSWER
(seen only by the correctness judge). The LONG_ANSWER is the abstract's conclusion
and is not part of CONTEXTS, so answers must be built from the results.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from scirag import db
from scirag.evaluation.qa import Question

# The shared data folder beside the repository, as the other benchmarks expect it.
DATA = Path(os.environ.get("SCIRAG_PUBMEDQA") or db.ROOT.parent / "shared" / "data" / "pubmedqa" / "pqal_dev.json")
DB_NAME = "scirag_pubmedqa"
DATASET = "pubmedqa"


def pubmedqa_dsn(dsn: str | None) -> str:
    return db.benchmark_dsn(dsn, DB_NAME)


def read(path: Path = DATA, limit: int | None = None) -> list[tuple[str, dict]]:
    if not Path(path).is_file():
        raise FileNotFoundError(f"PubMedQA file not found: {path} (set SCIRAG_PUBMEDQA or pass --data)")
    items = sorted(json.loads(Path(path).read_text(encoding="utf-8")).items())
    return items[:limit] if limit else items


def doc_id(pmid: str) -> str:
    return f"pmid-{pmid}"


def document_text(pmid: str, item: dict) -> str:
    parts = [f"# {title(pmid, item)}", ""]
    labels = item.get("LABELS") or []
    for i, ctx in enumerate(item["CONTEXTS"]):
        label = labels[i] if i < len(labels) else "ABSTRACT"
        parts += [f"## {label.capitalize()}", "", ctx.strip(), ""]
    return "\n".join(parts)


def title(pmid: str, item: dict) -> str:
    # The dataset has no titles; the question must not leak into the document.
    return f"PubMed abstract {pmid}" + (f" ({item['YEAR']})" if item.get("YEAR") else "")


def manifest_lines(items: list[tuple[str, dict]]) -> list[dict]:
    return [
        {
            "id": doc_id(pmid),
            "text": document_text(pmid, it),
            "format": "markdown",
            "title": title(pmid, it),
            "year": int(it["YEAR"]) if str(it.get("YEAR", "")).isdigit() else None,
            "source": "pubmedqa",
            "license": "public",
        }
        for pmid, it in items
    ]


def questions(items: list[tuple[str, dict]]) -> list[Question]:
    out = []
    for pmid, it in items:
        decision = (it.get("final_decision") or "").strip().lower()
        out.append(
            Question(
                id=f"pubmedqa-{pmid}",
                question=it["QUESTION"].strip(),
                expected_answer=f"{decision.capitalize()}. {it.get('LONG_ANSWER', '').strip()}",
                reference_documents=[doc_id(pmid)],
                evidence_phrases=[],
                tags=["pubmedqa", decision]
                + (["numeric"] if any(ch.isdigit() for ch in it.get("LONG_ANSWER", "")) else []),
            )
        )
    return out


def build(dsn: str, path: Path = DATA, limit: int | None = None) -> list[Question]:
    """Creates scirag_pubmedqa (once), ingests the abstracts (once per file and limit;
    progress on stderr) and returns the questions."""
    items = read(path, limit)
    lines = manifest_lines(items)
    tag = hashlib.sha256(json.dumps(lines, sort_keys=True).encode()).hexdigest()[:16]
    db.init_db(dsn)
    with db.connect(dsn, role=db.LOADER_ROLE) as conn:
        done = conn.execute(
            "SELECT 1 FROM scirag.ingest_runs WHERE manifest LIKE %s AND finished_at IS NOT NULL",
            (f"%scirag-pubmedqa-{tag}%",),
        ).fetchone()
        conn.commit()
        if done:
            return questions(items)
        from scirag.ingest.pipeline import Ingester, ingest_manifest

        folder = Path(tempfile.gettempdir()) / f"scirag-pubmedqa-{tag}"
        folder.mkdir(exist_ok=True)
        manifest = folder / "manifest.jsonl"
        with open(manifest, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")
        db.echo(f"ingesting {len(lines)} PubMedQA abstracts into {db.conninfo_to_dict(dsn).get('dbname')} (once)")
        ingest_manifest(conn, manifest, Ingester(conn))
    return questions(items)
