#!/usr/bin/env python3
"""Trains the query adapter (python/plpy_helpers/scirag_helpers/models/query_adapter/)
on the QASPER *train* split only: a 384 x 384 linear map applied to a question's
MiniLM embedding before the vector search, fitted so that the chunk holding a gold
evidence paragraph ranks first among the chunks of the question's own paper.

    scripts/train_query_adapter.py [--papers 888] [--data ../shared/data/qasper]

Why a query-side map: the stored chunk embeddings stay as they are (no re-embedding,
the document side keeps the shipped model's version), the question costs one matrix
product more, and a full matrix on one side is as expressive as any bilinear form.
The map starts at the identity and is pulled back towards it (L2), so it corrects the
general model rather than replacing it.

The papers are loaded through the normal loader into scirag_qasper_train (what
`scirag eval qasper --split train` builds); the questions are embedded with the
shipped embedder. Hyper-parameters are chosen by 5-fold cross-validation over papers
(dense recall@5 inside the paper), then the map is fitted on every train question.
Dev is never read here. numpy only; deterministic (seeded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation import qasper  # noqa: E402
from scirag_helpers import embedder as embedder_mod  # noqa: E402

SEED = 13
FOLDS = 5
BATCH = 32
LEARNING_RATE = 1e-3
# small grid (cross-validated on train): pull towards the identity,
# softmax temperature, passes over the data
GRID = [(lam, tau, epochs) for lam in (0.003, 0.03) for tau in (0.05,) for epochs in (1, 2, 4, 8)]


def collect(dsn: str, items: list[qasper.Item]) -> tuple:
    """Chunk embeddings of the train papers and, per question with text evidence, the
    indices of its paper's chunks and of the ones holding a gold paragraph."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        docs = dict(conn.execute("SELECT external_id, id FROM scirag.documents WHERE source = 'qasper'").fetchall())
        rows = conn.execute(
            "SELECT document_id, content, embedding::text FROM scirag.chunks WHERE embedding IS NOT NULL ORDER BY id"
        ).fetchall()
    emb = np.array([json.loads(r[2]) for r in rows], dtype=np.float32)
    by_doc: dict[int, list[int]] = {}
    for i, r in enumerate(rows):
        by_doc.setdefault(r[0], []).append(i)
    text = [qasper.normalize_answer(r[1]) for r in rows]
    cands, pos, questions, papers = [], [], [], []
    for it in items:
        keys = qasper.evidence_keys(it.answers)
        chunk_ids = by_doc.get(docs.get(qasper.doc_id(it.paper_id)), [])
        hits = [j for j, c in enumerate(chunk_ids) if any(k in text[c] for k in keys)]
        if not keys or not hits:
            continue
        cands.append(np.array(chunk_ids))
        pos.append(hits)
        questions.append(it.question)
        papers.append(it.paper_id)
    return emb, cands, pos, questions, papers


def recall_at(w: np.ndarray | None, q: np.ndarray, emb, cands, pos, idx, k: int = 5) -> float:
    hits = 0
    for i in idx:
        u = q[i] if w is None else w @ q[i]
        s = emb[cands[i]] @ (u / np.linalg.norm(u))
        top = np.argsort(-s, kind="stable")[:k]
        hits += any(t in pos[i] for t in top)
    return hits / max(len(idx), 1)


def fit(q, emb, cands, pos, idx, lam: float, tau: float, epochs: int, seed: int = SEED) -> np.ndarray:
    """Adam on: -log (sum of softmax over the paper's chunks at the gold chunks) +
    lam * ||W - I||^2, gradients written out (v = Wq / |Wq|, s = E v / tau)."""
    rng = np.random.default_rng(seed)
    dim = q.shape[1]
    eye = np.eye(dim, dtype=np.float64)
    w = eye.copy()
    m, v2 = np.zeros_like(w), np.zeros_like(w)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(idx)
        for b in range(0, len(order), BATCH):
            batch = order[b : b + BATCH]
            grad = np.zeros_like(w)
            for i in batch:
                u = w @ q[i]
                n = np.linalg.norm(u)
                vec = u / n
                e = emb[cands[i]]
                s = e @ vec / tau
                p = np.exp(s - s.max())
                p /= p.sum()
                pp = np.zeros_like(p)
                pp[pos[i]] = p[pos[i]] / p[pos[i]].sum()
                g_v = (p - pp) @ e / tau
                g_u = (g_v - vec * (vec @ g_v)) / n
                grad += np.outer(g_u, q[i])
            grad = grad / len(batch) + 2 * lam * (w - eye)
            step += 1
            m = 0.9 * m + 0.1 * grad
            v2 = 0.999 * v2 + 0.001 * grad**2
            w -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v2 / (1 - 0.999**step)) + 1e-8)
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "qasper")
    ap.add_argument("--papers", type=int, default=888, help="the first N train papers (by id)")
    ap.add_argument(
        "--hold-out", type=int, default=0, help="leave the first N papers out, to measure the whole system on them"
    )
    ap.add_argument("--dsn", default=None, help="QASPER train database (default: scirag_qasper_train)")
    ap.add_argument("--out", type=Path, default=Path(embedder_mod.ADAPTER_DIR))
    args = ap.parse_args()

    papers, items = qasper.read_split(args.data / "train.tar.gz")
    papers, items = qasper.select(papers, items, args.papers, 0)
    held = set(sorted(papers)[: args.hold_out])
    items = [it for it in items if it.paper_id not in held]
    dsn = qasper.qasper_dsn(args.dsn, "train")
    qasper.build(dsn, papers)
    emb, cands, pos, questions, qpapers = collect(dsn, items)
    db.echo(f"{len(questions)} train questions with a gold chunk, {len(set(qpapers))} papers, {len(emb)} chunks")
    t0 = time.monotonic()
    q = embedder_mod.Embedder(threads=2).embed(questions).astype(np.float64)
    emb = emb.astype(np.float64)

    paper_ids = sorted(set(qpapers))
    fold_of = {p: i % FOLDS for i, p in enumerate(paper_ids)}
    folds = [[i for i, p in enumerate(qpapers) if fold_of[p] == f] for f in range(FOLDS)]
    everyone = list(range(len(questions)))
    base = float(np.mean([recall_at(None, q, emb, cands, pos, te) for te in folds]))
    table = []
    for lam, tau, epochs in GRID:
        scores = []
        for f, te in enumerate(folds):
            tr = [i for g, fold in enumerate(folds) if g != f for i in fold]
            w = fit(q, emb, cands, pos, tr, lam, tau, epochs)
            scores.append(recall_at(w, q, emb, cands, pos, te))
        row = {"lambda": lam, "tau": tau, "epochs": epochs, "recall_at_5": round(float(np.mean(scores)), 4)}
        table.append(row)
        db.echo(f"cv {row} (identity {base:.4f}) [{time.monotonic() - t0:.0f} s]")
    best = max(table, key=lambda r: (r["recall_at_5"], -r["epochs"]))
    w = fit(q, emb, cands, pos, everyone, best["lambda"], best["tau"], best["epochs"])

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "adapter.npy"
    np.save(path, w.astype(np.float32))
    card = {
        "what": "linear map applied to the MiniLM query embedding before the vector search",
        "embedder": embedder_mod.VERSION,
        "trained_on": f"QASPER train, papers {args.hold_out + 1}-{args.papers} by id (dev never read)",
        "questions": len(questions),
        "papers": len(paper_ids),
        "chunks": len(emb),
        "objective": "softmax over the chunks of the question's paper, gold chunks positive; L2 to the identity",
        "grid": table,
        "chosen": best,
        "cv_dense_recall_at_5": {"identity": round(base, 4), "adapter": best["recall_at_5"]},
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "date": date.today().isoformat(),
        "command": f"scripts/train_query_adapter.py --papers {args.papers} --hold-out {args.hold_out}",
    }
    (args.out / "adapter.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    db.echo(f"wrote {path} (cv dense recall@5 {base:.4f} -> {best['recall_at_5']:.4f})")


if __name__ == "__main__":
    main()
