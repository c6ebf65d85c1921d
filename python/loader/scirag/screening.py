"""Title-and-abstract screening with active learning.

A record's features are TF-IDF weights of its title and abstract (word unigrams and
bigrams, sublinear term frequency, fit over every record of the set: a screening set
is known in full before screening starts). A linear model is retrained on the
decisions taken so far as decisions arrive, and the record it finds most likely
relevant is shown next (certainty-based sampling); see ``Model``.

The stopping rule the reviewer sees: the number of consecutive irrelevant decisions
since the last inclusion, with a suggestion to stop once it reaches
``stop_after(records)`` = max(50, 5 % of the records).

``simulate`` replays a reviewer from known labels; ``metrics`` computes WSS@95,
recall after 10 % / 20 % screened, the records needed to find every inclusion and
where the stopping rule would have stopped (with the recall there).
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

MAX_RECORDS = 200_000
MAX_FIELD_CHARS = 20_000


@dataclass
class Dataset:
    name: str
    record_ids: list[str]
    titles: list[str]
    texts: list[str]  # title and abstract
    labels: np.ndarray  # 1 included, 0 excluded


def load_dataset(path: Path) -> Dataset:
    """A screening CSV (gzip or plain): record_id, title, abstract, label_included."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"screening dataset {path}: no such file")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"screening dataset {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    csv.field_size_limit(10_000_000)
    reader = csv.DictReader(io.StringIO(text))
    need = {"title", "abstract", "label_included"}
    missing = need - set(reader.fieldnames or [])
    if missing:
        raise ValueError(f"screening dataset {path}: missing column(s) {', '.join(sorted(missing))}")
    ids, titles, texts, labels = [], [], [], []
    for i, row in enumerate(reader):
        if i >= MAX_RECORDS:
            raise ValueError(f"screening dataset {path}: more than {MAX_RECORDS} records")
        label = (row.get("label_included") or "").strip()
        if label not in ("0", "1"):
            raise ValueError(f"screening dataset {path}: row {i + 2}: label_included {label!r} is not 0 or 1")
        ids.append((row.get("record_id") or str(i)).strip())
        title = (row.get("title") or "")[:MAX_FIELD_CHARS]
        abstract = (row.get("abstract") or "")[:MAX_FIELD_CHARS]
        titles.append(title)
        texts.append(f"{title} {abstract}".strip())
        labels.append(int(label))
    y = np.asarray(labels, dtype=np.int8)
    if y.sum() < 2 or (y == 0).sum() < 2:
        raise ValueError(f"screening dataset {path}: needs at least 2 included and 2 excluded records")
    name = path.name.removesuffix(".gz").removesuffix(".csv")
    return Dataset(name, ids, titles, texts, y)


MINILM_WEIGHT = 0.5  # --minilm's suggested weight: chosen on NSAIDS, Triptans, ADHD (docs/campaigns.md)
MINILM_MAX_WEIGHT = 4.0


def features(
    texts: list[str],
    minilm: float = 0.0,
    embeddings: np.ndarray | None = None,
    cache_dir=None,
    titles: list[str] | None = None,
):
    """Sparse TF-IDF matrix (rows L2-normalised) of the records' texts; with ``titles``
    (one per text) each title's words and bigrams are counted once more (the title
    weighted twice; no bigram joins the two copies); with ``minilm``
    > 0 the records' MiniLM embeddings (the project's one embedder, unit length) are
    appended as ``minilm`` x 384 more columns (for the SVM; naive Bayes cannot take
    their negative values). ``embeddings``: those vectors when already known (one row
    per text); otherwise they are computed (and kept in ``cache_dir`` when given)."""
    if titles is not None and len(titles) != len(texts):
        raise ValueError(f"titles: expected {len(texts)}, got {len(titles)}")
    X = _tfidf(texts, titles)
    if minilm <= 0:
        return X
    if not minilm <= MINILM_MAX_WEIGHT:
        raise ValueError(f"MiniLM weight {minilm:g}: choose 0 to {MINILM_MAX_WEIGHT:g}")
    from scipy.sparse import csr_matrix, hstack

    E = minilm_embeddings(texts, cache_dir) if embeddings is None else np.asarray(embeddings, dtype=np.float32)
    if E.shape != (len(texts), 384):
        raise ValueError(f"MiniLM embeddings: expected {len(texts)} x 384, got {' x '.join(map(str, E.shape))}")
    return hstack([X, csr_matrix(E * np.float32(minilm))], format="csr", dtype=np.float32)


def minilm_embeddings(texts: list[str], cache_dir=None) -> np.ndarray:
    """The records' MiniLM embeddings (unit-length 384-d rows). With ``cache_dir`` they
    are kept there in a file named by a hash of the embedder version and the texts, so
    a rerun over the same set reads them instead of embedding again (about 8 records a
    second on one core)."""
    import hashlib

    from scirag_helpers.embedder import VERSION, Embedder

    path = None
    if cache_dir is not None:
        h = hashlib.sha256(VERSION.encode())
        for t in texts:
            h.update(t.encode())
            h.update(b"\0")
        path = Path(cache_dir) / f"minilm-{h.hexdigest()[:24]}.npy"
        if path.is_file():
            E = np.load(path)
            if E.shape == (len(texts), 384):
                return E
    E = Embedder(threads=1).embed(texts)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, E)
        tmp.replace(path)
    return E


def _tfidf(texts: list[str], titles: list[str] | None = None):
    from sklearn.feature_extraction.text import TfidfVectorizer

    def vectorizer(**prune):
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, dtype=np.float32, **prune)
        if titles is None:
            return vec
        words = vec.build_analyzer()  # the same words and bigrams, of the text and of the title apart
        return TfidfVectorizer(
            analyzer=lambda d: words(d[0]) + words(d[1]), sublinear_tf=True, dtype=np.float32, **prune
        )

    docs = texts if titles is None else list(zip(texts, titles))
    try:
        return vectorizer(min_df=1, max_df=0.95).fit_transform(docs)
    except ValueError:  # a tiny campaign whose every term is in more than 95 % of the records, or no words
        pass
    try:
        return vectorizer().fit_transform(docs)
    except ValueError:
        from scipy.sparse import csr_matrix

        return csr_matrix((len(texts), 1), dtype=np.float32)


@dataclass
class Model:
    """The screener's classifier; ``name`` goes into every decision it makes.

    A squared-hinge linear SVM (C 0.11) over the TF-IDF features, with the included
    class up-weighted (``svm_ratio``: the included records' total weight relative to
    the excluded ones'); these are the settings of ASReview LAB's ELAS u4 model, taken
    as they are. Optionally a multinomial naive Bayes (alpha 3.822, ``nb_ratio`` 1.2:
    ELAS u3's settings) is retrained beside it and its standardised score added at
    ``nb_weight``; likewise a logistic regression (C ``lr_c``, the SVM's class
    weights) at ``lr_weight``; ``fuse="rank"`` adds the models' reciprocal ranks
    (``reciprocal_rank``) instead of their standardised scores. ``balance="double"``
    trains on ASReview's double-balance resample instead of class weights.
    ``retrain``: how often ``simulate`` retrains (``retrain_every``); a campaign
    retrains at every request. The SVM and the logistic regression are fitted on
    ``compact(X)`` (the same scores, faster). The default (the SVM alone) is the
    candidate a leave-one-set-out choice picks on the eight screening sets;
    scripts/tune_screening.py reports what that choice gives on sets it did not see
    (docs/campaigns.md)."""

    svm_c: float = 0.11
    svm_ratio: float = 9.8
    nb_alpha: float = 3.822
    nb_ratio: float = 1.2
    nb_weight: float = 0.0
    lr_weight: float = 0.0
    lr_c: float = 1.0
    balance: str = "weights"  # or "double": resample the training set (ASReview's double balance)
    retrain: str = "every"  # in a simulation: after "every" decision, or "taper" (see retrain_every)
    fuse: str = "score"  # how the models' scores combine: "score" (standardised, weighted) or "rank" (RRF)
    seed: int = 0
    name: str = ""

    def __post_init__(self):
        if self.balance not in ("weights", "double"):
            raise ValueError(f"balance {self.balance!r}: choose weights or double")
        if self.fuse not in ("score", "rank"):
            raise ValueError(f"fuse {self.fuse!r}: choose score or rank")
        if self.retrain not in RETRAIN:
            raise ValueError(f"retrain {self.retrain!r}: choose {' or '.join(RETRAIN)}")
        if not self.name:
            self.name = "tfidf12-svm"
            if self.nb_weight:
                self.name += f"+nb{self.nb_weight:g}"
            if self.lr_weight:
                self.name += f"+lr{self.lr_weight:g}"
            if self.balance == "double":
                self.name += "-double"
            if self.fuse == "rank" and (self.nb_weight or self.lr_weight):
                self.name += "-rrf"
        self._rng = np.random.default_rng(self.seed)

    def _linear_view(self, X):
        """``compact(X)``, kept for the X last seen (a simulation passes the same one
        every time)."""
        if getattr(self, "_view_of", None) is not X:
            self._view_of, self._view = X, compact(X)
        return self._view

    @staticmethod
    def weights(y: np.ndarray, ratio: float) -> np.ndarray:
        n1, n0 = int(y.sum()), int((y == 0).sum())
        w = np.where(y == 1, 1.0, n1 / (ratio * n0))
        return w * (len(y) / w.sum())

    def scores(self, X, train_idx: np.ndarray, y: np.ndarray, pool_idx: np.ndarray) -> np.ndarray:
        """Decision values for the pool (higher = more likely relevant)."""
        from sklearn.svm import LinearSVC

        train_idx = np.asarray(train_idx)
        if self.balance == "double":
            rows = double_balance(y, self._rng)
            fit_idx, fit_y, fit_w = train_idx[rows], y[rows], None
        else:
            fit_idx, fit_y, fit_w = train_idx, y, self.weights(y, self.svm_ratio)
        V = self._linear_view(X)
        Xt = V[fit_idx]
        Xp = V[pool_idx]
        svm = LinearSVC(C=self.svm_c, loss="squared_hinge")
        svm.fit(Xt, fit_y, sample_weight=fit_w)
        parts = [(1.0, svm.decision_function(Xp))]
        if self.lr_weight:
            from sklearn.linear_model import LogisticRegression

            lr = LogisticRegression(
                C=self.lr_c, solver="liblinear", dual=True
            )  # dual: fast when words outnumber records
            lr.fit(Xt, fit_y, sample_weight=fit_w)
            parts.append((self.lr_weight, lr.decision_function(Xp)))
        if self.nb_weight:
            Xn = X[train_idx]
            w = self.weights(y, self.nb_ratio)
            c1 = np.asarray(Xn[y == 1].T @ w[y == 1]).ravel() + self.nb_alpha
            c0 = np.asarray(Xn[y == 0].T @ w[y == 0]).ravel() + self.nb_alpha
            log_ratio = np.log(c1 / c1.sum()) - np.log(c0 / c0.sum())
            parts.append((self.nb_weight, np.asarray(X[pool_idx] @ log_ratio).ravel()))
        if self.fuse == "rank" and len(parts) > 1:
            return sum(w * reciprocal_rank(v) for w, v in parts)
        return sum(w * _standardise(v) for w, v in parts)


def compact(X):
    """The same records for the SVM and the logistic regression, fitted faster: the
    columns that only one record has (most bigrams) are merged into one column per
    record holding their norm. Every dot product between two records is unchanged, and
    an L2-regularised linear model (its weights a combination of the training rows)
    depends on its records only through those, so both models give the same scores
    (to rounding); fitting costs about a third less. Naive Bayes is not such a model:
    it keeps the original columns."""
    from scipy.sparse import csc_matrix, csr_matrix, diags, hstack

    C = csc_matrix(X, dtype=np.float64)  # liblinear's own type: no copy at every fit
    counts = np.diff(C.indptr)
    single = counts == 1
    if not single.any():
        return csr_matrix(C)
    rest = C[:, np.flatnonzero(~single)].tocsr()
    S = C[:, np.flatnonzero(single)].tocsr()
    norm = np.sqrt(np.asarray(S.multiply(S).sum(axis=1)).ravel()).astype(C.dtype)
    out = hstack([rest, diags(norm, format="csr")], format="csr")
    out.eliminate_zeros()
    return out


def double_balance(y: np.ndarray, rng: np.random.Generator, a=2.155, alpha=0.94, b=0.789, beta=1.0) -> np.ndarray:
    """Rows of a resampled training set (ASReview's "double" balance strategy, its
    default parameters): the few included records are repeated and the excluded ones
    drawn, so that the included share grows as a power of their scarcity, the
    training set keeping its size. Returns positions into ``y``."""
    ones, zeros = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n = len(y)
    w1 = a * (len(ones) / len(zeros)) ** (-alpha)
    w0 = 1 - (1 - b) * (1 + math.log(n)) ** (-beta)
    share = w1 * len(ones) * n / (w1 * len(ones) + w0 * len(zeros))
    n1 = int(math.floor(share)) + int(rng.random() < share - math.floor(share))
    n1 = max(1, min(n - 2, n1))

    def fill(src: np.ndarray, k: int) -> np.ndarray:
        copies, rest = divmod(k, len(src))
        return np.concatenate([np.tile(src, copies), rng.choice(src, rest, replace=False)])

    rows = np.concatenate([fill(ones, n1), fill(zeros, n - n1)])
    rng.shuffle(rows)
    return rows


RETRAIN = ("every", "taper")


def retrain_every(n_labeled: int, retrain: str = "every") -> int:
    """Decisions between retrainings in a simulation: "every": after each decision
    (as ASReview LAB does); "taper": every one for the first 400, then one
    retraining per 0.5 % growth of the training set (a 2,000-record set screened to
    the end costs about 650 fits instead of 2,000)."""
    return 1 if retrain == "every" else max(1, n_labeled // 200)


RRF_K = 60  # reciprocal rank fusion's usual constant (Cormack, Clarke and Buettcher 2009)


def reciprocal_rank(v: np.ndarray) -> np.ndarray:
    """1 / (RRF_K + rank) of each score, rank 1 the highest (ties: the earlier first)."""
    ranks = np.empty(len(v))
    ranks[np.argsort(-v, kind="stable")] = np.arange(1, len(v) + 1)
    return 1.0 / (RRF_K + ranks)


def _standardise(v: np.ndarray) -> np.ndarray:
    sd = float(v.std())
    return (v - v.mean()) / sd if sd > 0 else v - v.mean()


def stop_after(n_records: int) -> int:
    """The suggested stop: this many consecutive irrelevant decisions."""
    return max(50, math.ceil(0.05 * n_records))


def next_records(model: Model, X, labeled: dict[int, int], n: int = 1) -> tuple[list[int], np.ndarray]:
    """The ``n`` unscreened records the model finds most likely relevant (by index), and
    their scores. With fewer than one decision of each kind the records come in order."""
    total = X.shape[0]
    done = np.fromiter(labeled.keys(), dtype=np.int64, count=len(labeled))
    pool = np.setdiff1d(np.arange(total), done)
    if len(pool) == 0:
        return [], np.empty(0)
    y = np.fromiter(labeled.values(), dtype=np.int8, count=len(labeled))
    if y.sum() == 0 or (y == 0).sum() == 0:
        return pool[:n].tolist(), np.zeros(min(n, len(pool)))
    s = model.scores(X, done, y, pool)
    order = np.argsort(-s, kind="stable")[:n]
    return pool[order].tolist(), s[order]


def simulate(X, labels: np.ndarray, prior: list[int], model: Model | None = None, to_end: bool = False) -> list[int]:
    """Replay a reviewer who answers from ``labels``: start from the ``prior`` records,
    then screen the model's top record, retrain (``retrain_every``), repeat. Stops once
    every included record is found (or at the end with ``to_end``). Returns the
    screening order."""
    model = model or Model()
    labeled = {int(i): int(labels[i]) for i in prior}
    order = [int(i) for i in prior]
    found, total = sum(labeled.values()), int(labels.sum())
    n = len(labels)
    queue: list[int] = []
    while len(order) < n and (to_end or found < total):
        if not queue:
            queue, _ = next_records(model, X, labeled, retrain_every(len(labeled), model.retrain))
        i = queue.pop(0)
        labeled[i] = int(labels[i])
        order.append(i)
        found += labels[i]
    return order


def priors(labels: np.ndarray, seed: int) -> list[int]:
    """One included and one excluded record, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    inc = np.flatnonzero(labels == 1)
    exc = np.flatnonzero(labels == 0)
    return [int(rng.choice(inc)), int(rng.choice(exc))]


def metrics(order: list[int], labels: np.ndarray) -> dict:
    """WSS@95, recall after 10 % / 20 % screened, records needed for all inclusions.
    Priors count as screened records."""
    n = len(labels)
    total = int(labels.sum())
    hits = np.cumsum(labels[np.asarray(order, dtype=np.int64)])
    target = math.ceil(0.95 * total)
    at95 = int(np.searchsorted(hits, target) + 1)
    at_all = int(np.searchsorted(hits, total) + 1) if hits[-1] >= total else None

    stop_at, run = None, 0
    for pos, i in enumerate(order[2:], start=3):
        run = 0 if labels[i] else run + 1
        if run >= stop_after(n):
            stop_at = pos
            break

    def recall_at(share: float) -> float:
        k = min(len(hits), math.ceil(share * n))
        return float(hits[k - 1]) / total

    return {
        "wss95": (n - at95) / n - 0.05,
        "recall_at_10pct": recall_at(0.10),
        "recall_at_20pct": recall_at(0.20),
        "records_to_all": at_all,
        "records_to_95": at95,
        # None: the rule had not fired when the last inclusion was found (recall 1.0 there)
        "stop_at": stop_at,
        "recall_at_stop": float(hits[stop_at - 1]) / total if stop_at else 1.0,
        "records": n,
        "included": total,
    }


def evaluate(
    dataset: Dataset,
    seeds: int,
    model: Model | None = None,
    first_seed: int = 0,
    minilm: float = 0.0,
    cache_dir=None,
    title_twice: bool = False,
) -> dict:
    """Simulate ``seeds`` runs; per-seed rows and their means. ``minilm``: the weight of
    MiniLM embedding features beside TF-IDF (0: TF-IDF only); ``cache_dir``: where the
    embeddings are kept between runs."""
    model = model or Model()
    if minilm > 0 and model.nb_weight:
        raise ValueError("MiniLM features go with the SVM alone: naive Bayes needs non-negative features")
    t0 = time.process_time()
    X = features(dataset.texts, minilm, cache_dir=cache_dir, titles=dataset.titles if title_twice else None)
    feat_s = time.process_time() - t0
    rows = []
    for seed in range(first_seed, first_seed + seeds):
        prior = priors(dataset.labels, seed)
        t = time.process_time()
        # a fresh model per seed: the double balance draws with the seed's own generator
        order = simulate(X, dataset.labels, prior, replace(model, seed=seed))
        m = metrics(order, dataset.labels)
        m.update(seed=seed, prior=[dataset.record_ids[i] for i in prior], cpu_s=round(time.process_time() - t, 2))
        rows.append(m)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("wss95", "recall_at_10pct", "recall_at_20pct")}
    mean["records_to_all"] = float(np.mean([r["records_to_all"] for r in rows]))
    mean["recall_at_stop"] = float(np.mean([r["recall_at_stop"] for r in rows]))
    return {
        "dataset": dataset.name,
        "model": model.name + (f"+minilm{minilm:g}" if minilm > 0 else "") + ("+title2" if title_twice else ""),
        "retrain": model.retrain,
        "records": len(dataset.labels),
        "included": int(dataset.labels.sum()),
        "seeds": seeds,
        **mean,
        "feature_cpu_s": round(feat_s, 2),
        "per_seed": rows,
    }


def store(dsn: str, result: dict) -> int:
    """An eval_runs row of kind 'screening' (means) with one eval_results row per seed."""
    from scirag import db
    from scirag.evaluation.qa import reader_connection
    from scirag.evaluation.runs import add_results, finish_run, start_run

    config = {"model": result["model"], "seeds": result["seeds"], "priors": "1 included + 1 excluded"}
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn) as reader:
        run_id = start_run(writer, reader, "screening", result["dataset"], None, result["model"], config)
        rows = [
            (
                f"seed-{r['seed']}",
                {k: r[k] for k in ("wss95", "recall_at_10pct", "recall_at_20pct", "records_to_95", "records_to_all")},
                [str(x) for x in r["prior"]],
                r["cpu_s"] * 1000.0,
            )
            for r in result["per_seed"]
        ]
        add_results(writer, run_id, rows)
        means = {k: result[k] for k in ("wss95", "recall_at_10pct", "recall_at_20pct", "records_to_all")}
        finish_run(writer, run_id, len(rows), means)
    return run_id
