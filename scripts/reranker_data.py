"""Training data of the shipped reranker (scripts/train_reranker.py), in pure Python.

No torch here: tests/py/test_reranker_data.py runs these functions in the project's
.venv. Every passage is formatted as the loader stores a chunk (``chunk_content``:
title, section path, blank line, body), so the model is trained on what
scirag.rerank hands it at query time.

Groups: one query, one positive passage and ``negatives`` hard negatives.

* SciFact (CC BY-NC 2.0): the claims of the training part of ``split_scifact``, their
  cited abstracts as positives, negatives from the BM25 top 30 of the corpus (k1 0.9,
  b 0.4: the keyword layer's role; computed here so that training needs no loaded
  database) minus the cited abstracts.
* QASPER train (CC BY 4.0): questions, a window of paragraphs that opens with an
  annotator's evidence paragraph as positive, windows of the same paper without
  evidence as negatives (the paper's BM25 top windows first).
* SciTab (MIT): the training part of ``split_scitab``'s claims, their table as
  positive, the BM25 top tables of other ids as negatives.

Splits are fixed by hashing ids (no random state): held-out claims never reach training.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import random
import re
import sys
import tarfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _helper(name: str):
    """scirag_helpers/NAME.py loaded by path (the package is not installed in .venv-train)."""
    path = ROOT / "python" / "plpy_helpers" / "scirag_helpers" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_scirag_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


_TEXT = _helper("text")
_WORDS = _helper("words")
chunk_content = _TEXT.chunk_content

HELDOUT_BUCKETS = (0, 1, 2)  # 30 % of the claims, by hash: never trained on
MONITOR_BUCKET = 3  # the training curve's checkpoints are scored on some of these claims (never trained on)
# The trainer's defaults (scripts/train_reranker.py), which the blend tuner rebuilds to
# know which QASPER questions the shipped model was trained on.
SEED = 13
NEGATIVES = 3
QASPER_GROUPS = 800


def bucket(dataset: str, ident: str) -> int:
    """0-9, fixed by the id: the same claim lands in the same part on every machine."""
    return int(hashlib.sha256(f"{dataset}:{ident}".encode()).hexdigest(), 16) % 10


def part(dataset: str, ident: str) -> str:
    b = bucket(dataset, ident)
    return "heldout" if b in HELDOUT_BUCKETS else "monitor" if b == MONITOR_BUCKET else "train"


# ---------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = _WORDS.BM25_STOP  # the list the shipped reranker's hard negatives were mined with


def terms(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


class BM25:
    def __init__(self, docs: list[str], k1: float = 0.9, b: float = 0.4):
        self.k1, self.b = k1, b
        self.tf = [Counter(terms(d)) for d in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 1.0
        df = Counter(t for c in self.tf for t in c)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.post: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.post.setdefault(t, []).append(i)

    def top(self, query: str, k: int) -> list[int]:
        scores: dict[int, float] = {}
        for t in set(terms(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.post[t]:
                f = self.tf[i][t]
                norm = f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
                scores[i] = scores.get(i, 0.0) + idf * norm
        return [i for i, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]]


# ---------------------------------------------------------------------------
# SciFact
# ---------------------------------------------------------------------------


def read_scifact(folder: Path):
    corpus = {}
    for line in open(folder / "corpus.jsonl", encoding="utf-8"):
        d = json.loads(line)
        corpus[d["_id"]] = chunk_content((d.get("title") or d["_id"]).strip(), None, d.get("text") or "")
    queries = {}
    for line in open(folder / "queries.jsonl", encoding="utf-8"):
        q = json.loads(line)
        queries[q["_id"]] = q["text"]
    qrels: dict[str, list[str]] = {}
    with open(folder / "qrels" / "train.tsv", encoding="utf-8") as fh:
        next(fh)
        for row in fh:
            qid, did, score = row.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, []).append(did)
    return corpus, queries, qrels


def scifact_groups(folder: Path, rng: random.Random, negatives: int = 3, which: str = "train", pool: int = 30):
    """[(query, positive, [negatives], source)] for the claims of one part."""
    corpus, queries, qrels = read_scifact(folder)
    ids = list(corpus)
    index = BM25([corpus[i] for i in ids])
    out = []
    for qid in sorted(qrels, key=lambda x: int(x) if x.isdigit() else x):
        if part("scifact", qid) != which or qid not in queries:
            continue
        gold = set(qrels[qid])
        hard = [ids[i] for i in index.top(queries[qid], pool) if ids[i] not in gold]
        if len(hard) < negatives:  # a claim sharing few words with the corpus: other abstracts fill in
            hard += [d for d in ids if d not in gold and d not in hard][: negatives - len(hard)]
        for did in sorted(gold)[:2]:
            if did not in corpus or len(hard) < negatives:
                continue
            negs = rng.sample(hard, negatives)
            out.append((queries[qid], corpus[did], [corpus[d] for d in negs], "scifact"))
    return out


def scifact_monitor(folder: Path, limit: int = 40, depth: int = 20):
    """[(query, [candidate passages], set of relevant indexes)]: BM25 top ``depth`` of
    up to ``limit`` monitor claims (the training curve's nDCG@10)."""
    corpus, queries, qrels = read_scifact(folder)
    ids = list(corpus)
    index = BM25([corpus[i] for i in ids])
    out = []
    for qid in sorted(qrels, key=lambda x: int(x) if x.isdigit() else x):
        if part("scifact", qid) != "monitor" or qid not in queries:
            continue
        top = [ids[i] for i in index.top(queries[qid], depth)]
        rel = {j for j, d in enumerate(top) if d in qrels[qid]}
        if rel:
            out.append((queries[qid], [corpus[d] for d in top], rel))
        if len(out) == limit:
            break
    return out


# ---------------------------------------------------------------------------
# QASPER
# ---------------------------------------------------------------------------


def normalize(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def paper_windows(markdown: str, max_chars: int = 900) -> tuple[str, list[tuple[str, str, int]]]:
    """(title, [(section, body, index of its first paragraph)]): each paragraph opens a
    window that takes the following paragraphs of its section while the body stays
    under ``max_chars`` (about 200 tokens: the positive fits the training length)."""
    title, section = "", None
    sections: list[tuple[str | None, list[str]]] = []
    for block in markdown.split("\n\n"):
        block = block.strip()
        if not block:
            continue
        if block.startswith("# ") and not title:
            title = block[2:].strip()
            continue
        if block.startswith("## "):
            section = block[3:].strip()
            sections.append((section, []))
            continue
        if not sections:
            sections.append((None, []))
        sections[-1][1].append(block)
    windows, n = [], 0
    for sec, paras in sections:
        for i, p in enumerate(paras):
            body, j = p, i + 1
            while j < len(paras) and len(body) + 2 + len(paras[j]) <= max_chars:
                body += "\n\n" + paras[j]
                j += 1
            windows.append((sec or "", body, n + i))
        n += len(paras)
    return title, windows


def qasper_groups(archive: Path, rng: random.Random, negatives: int = 3, limit: int | None = 1600):
    """Groups from a QASPER archive (train): a question, a window opening with one of
    its evidence paragraphs, windows of the same paper holding no evidence."""
    papers: dict[str, str] = {}
    questions: list[dict] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = Path(member.name)
            data = tar.extractfile(member).read()
            if name.name == "questions.json":
                questions.extend(json.loads(data))
            elif name.parent.name == "papers" and name.suffix == ".txt":
                papers[name.stem] = data.decode("utf-8")
    questions.sort(key=lambda q: q["question_id"])
    cache: dict[str, tuple] = {}
    out = []
    for q in questions:
        md = papers.get(q["paper_id"])
        if md is None:
            continue
        evidence = {
            normalize(e)
            for a in q["answers"]
            for e in (a.get("evidence") or [])
            if e and not e.startswith("FLOAT SELECTED") and len(e) >= 40
        }
        if not evidence:
            continue
        if q["paper_id"] not in cache:
            title, windows = paper_windows(md)
            cache[q["paper_id"]] = (title, windows, BM25([w[1] for w in windows]) if windows else None)
        title, windows, index = cache[q["paper_id"]]
        norm = [normalize(w[1]) for w in windows]
        first = [normalize(w[1].split("\n\n", 1)[0]) for w in windows]
        pos = [i for i, f in enumerate(first) if f in evidence]
        holds = {i for i, t in enumerate(norm) if any(e in t for e in evidence)}
        neg_pool = [i for i in index.top(q["question"], 12) if i not in holds] if index else []
        rest = [i for i in range(len(windows)) if i not in holds and i not in neg_pool]
        if not pos or len(neg_pool) + len(rest) < negatives:
            continue
        hard = neg_pool[: negatives - 1]
        fill = [i for i in neg_pool[negatives - 1 :] + rest]
        negs = hard + rng.sample(fill, negatives - len(hard))
        p = pos[0]

        def fmt(i, title=title, windows=windows):
            return chunk_content(title, windows[i][0] or None, windows[i][1])

        out.append((q["question"].strip(), fmt(p), [fmt(i) for i in negs], "qasper"))
    rng.shuffle(out)
    return out[:limit] if limit else out


# ---------------------------------------------------------------------------
# SciTab
# ---------------------------------------------------------------------------


def table_text(t: dict) -> str:
    """As scirag.scitab.table_text (the loaded document's text); a test keeps them equal."""
    clean = lambda cell: str(cell).replace("[BOLD]", "").replace("[ITALIC]", "").strip()  # noqa: E731
    lines = [" | ".join(clean(c) for c in t["columns"])] + [" | ".join(clean(c) for c in r) for r in t["rows"]]
    return f"{t['caption']}\n\n" + "\n".join(lines)


def scitab_groups(folder: Path, rng: random.Random, negatives: int = 3, which: str = "train", pool: int = 15):
    tables = [json.loads(line) for line in open(folder / "tables.jsonl", encoding="utf-8")]
    text = {t["table_id"]: chunk_content(t["paper"], None, table_text(t)) for t in tables}
    ids = [t["table_id"] for t in tables]
    index = BM25([text[i] for i in ids])
    out = []
    for line in open(folder / "claims_dev.jsonl", encoding="utf-8"):
        c = json.loads(line)
        if part("scitab", c["id"]) != which or c["table_id"] not in text:
            continue
        hard = [ids[i] for i in index.top(c["claim"], pool) if ids[i] != c["table_id"]]
        if len(hard) < negatives:
            hard += [i for i in ids if i != c["table_id"] and i not in hard][: negatives - len(hard)]
        negs = rng.sample(hard, negatives)
        out.append((c["claim"], text[c["table_id"]], [text[d] for d in negs], "scitab"))
    return out


def assemble(data: Path, seed: int = 13, negatives: int = 3, qasper_limit: int | None = 1600) -> list[tuple]:
    """Every training group, shuffled by ``seed`` (the same seed gives the same list)."""
    rng = random.Random(seed)
    groups = scifact_groups(data / "scifact", rng, negatives)
    groups += qasper_groups(data / "qasper" / "train.tar.gz", rng, negatives, qasper_limit)
    groups += scitab_groups(data / "scitab", rng, negatives)
    rng.shuffle(groups)
    return groups
