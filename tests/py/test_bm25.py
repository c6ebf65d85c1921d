"""The numpy BM25 scorer (scirag_helpers/bm25.py) returns exactly the top n that scoring
every chunk would, whatever the block layout, on random corpora built to stress its
pruning: many small blocks, skewed term frequencies, fresh postings outside blocks,
chunks the caller may not see. No database: a fake plpy answers the scorer's four
queries from the corpus in memory, in the server's binary formats (tests/pgtap/
07_keyword_blocks.sql runs the real thing against PostgreSQL)."""

from __future__ import annotations

import math
import random
import struct

import numpy as np
from scirag_helpers import bm25

SEED = 20261130
K1, B = 1.2, 0.75


class Corpus:
    def __init__(self, rng: random.Random):
        self.terms = [f"t{i}" for i in range(rng.randint(3, 14))]
        n_chunks = rng.randint(20, 400)
        first_id = rng.randint(1, 10_000)
        # ids with gaps, as after deletes
        ids = sorted(rng.sample(range(first_id, first_id + 3 * n_chunks), n_chunks))
        self.dl = {}
        self.tf: dict[int, dict[str, int]] = {}
        for c in ids:
            words = {}
            for t in self.terms:
                # skewed: early terms common, late ones rare; tf mostly 1
                if rng.random() < 0.9 / (1 + self.terms.index(t)) ** 0.8:
                    words[t] = 1 + int(rng.expovariate(0.7))
            self.tf[c] = words
            self.dl[c] = sum(words.values()) + rng.randint(0, 60)
        self.hidden = {c for c in ids if rng.random() < rng.choice([0.0, 0.1, 0.5])}
        self.avgdl = sum(self.dl.values()) / len(self.dl)
        self.block_size = rng.choice([1, 2, 3, 5, 8, 128])
        self.fresh_share = rng.choice([0.0, 0.0, 0.2])
        self.rng = rng
        self.layout()

    def layout(self):
        """Postings per term by impact, cut into blocks; some postings stay fresh."""
        self.blocks = []  # (term index, chunk ids, tfs, dls)
        self.fresh = []  # (term index, chunk id, tf, dl)
        for ti, t in enumerate(self.terms):
            posts = [(c, w[t], self.dl[c]) for c, w in self.tf.items() if t in w]
            keep = []
            for p in posts:
                (self.fresh.append((ti, *p)) if self.rng.random() < self.fresh_share else keep.append(p))
            keep.sort(key=lambda p: (-p[1] / (p[1] + K1 * (1 - B + B * p[2] / self.avgdl)), p[0]))
            for at in range(0, len(keep), self.block_size):
                blk = keep[at : at + self.block_size]
                self.blocks.append((ti, [p[0] for p in blk], [p[1] for p in blk], [p[2] for p in blk]))

    def score(self, c: int, query: list[str], idf: list[float]) -> float:
        return sum(
            w * self.tf[c][t] * (K1 + 1) / (self.tf[c][t] + K1 * (1 - B + B * self.dl[c] / self.avgdl))
            for t, w in zip(query, idf)
            if t in self.tf[c]
        )

    def brute(self, query, idf, n):
        got = [
            (c, self.score(c, query, idf))
            for c in self.tf
            if c not in self.hidden and any(t in self.tf[c] for t in query)
        ]
        return sorted(got, key=lambda x: (-x[1], x[0]))[:n]


def pack(ids, tfs, dls) -> bytes:
    """A block's postings as scirag.kw_pack writes them: 14-byte big-endian records."""
    return b"".join(struct.pack(">qhi", *p) for p in zip(ids, tfs, dls))


class FakePlan:
    def __init__(self, corpus: Corpus, sql: str, query: list[str], calls: dict):
        self.c, self.sql, self.query, self.calls = corpus, sql, query, calls

    def execute(self, args):
        c = self.c
        self.calls[self.sql] = self.calls.get(self.sql, 0) + 1
        qi = {c.terms.index(t): i + 1 for i, t in enumerate(self.query)}
        if self.sql == bm25.NARROW_SQL:
            return [{"docs": None}]  # no positive scope filter: the block-max walk ranks
        if self.sql == bm25.META_SQL:
            rows = [(qi[b[0]], k, max(b[2]), min(b[3]), len(b[1])) for k, b in enumerate(c.blocks) if b[0] in qi]
            if not rows:
                return [{"ti": None, "tid": None, "max_tf": None, "min_dl": None, "cnt": None}]
            return [dict(zip(("ti", "tid", "max_tf", "min_dl", "cnt"), map(list, zip(*rows))))]
        if self.sql == bm25.FRESH_SQL:
            rows = [(qi[f[0]], f[1], f[2], f[3]) for f in c.fresh if f[0] in qi]
            if not rows:
                return [{"ti": None, "ids": None, "tfs": None, "dls": None}]
            return [dict(zip(("ti", "ids", "tfs", "dls"), map(list, zip(*rows))))]
        if self.sql == bm25.READ_SQL:
            (tids,) = args
            order = list(range(len(tids)))
            c.rng.shuffle(order)  # the server promises no order: ord says which block came where
            blocks = [c.blocks[tids[i]] for i in order]
            return [{"ord": [i + 1 for i in order], "packed": b"".join(pack(*b[1:]) for b in blocks)}]
        if self.sql == bm25.CHECK_SQL:
            ids, _dls, _refs, lexemes, idf, *_rest, need = args
            return [
                {"id": i, "s": c.score(i, lexemes, idf) if nd else None}
                for i, nd in zip(ids, need)
                if i not in c.hidden
            ]
        raise AssertionError(f"unexpected query: {self.sql[:60]}")


class FakePlpy:
    def __init__(self, corpus, query):
        self.corpus, self.query, self.calls = corpus, query, {}

    def prepare(self, sql, types):
        return FakePlan(self.corpus, sql, self.query, self.calls)


def run(corpus: Corpus, query: list[str], n: int, gd: dict | None = None):
    n_all = len(corpus.tf)
    df = [sum(t in w for w in corpus.tf.values()) for t in query]
    idf = [math.log(1 + (n_all - d + 0.5) / (d + 0.5)) for d in df]
    plpy = FakePlpy(corpus, query)
    got = bm25.top_n(plpy, {} if gd is None else gd, query, idf, K1, B, corpus.avgdl, n)
    return got, corpus.brute(query, idf, n), plpy.calls


def shifted(corpus: Corpus, by: int) -> Corpus:
    """The corpus with every chunk id moved by `by` (a later ingest's ids)."""
    corpus.tf = {c + by: w for c, w in corpus.tf.items()}
    corpus.dl = {c + by: d for c, d in corpus.dl.items()}
    corpus.hidden = {c + by for c in corpus.hidden}
    corpus.layout()
    return corpus


def same_top(got, want) -> bool:
    """The same scores in rank order, and the same chunks above the n-th score (ties at the cut aside)."""
    if len(got) != len(want) or any(abs(a[1] - b[1]) > 1e-9 * max(1, b[1]) for a, b in zip(got, want)):
        return False
    if not want:
        return True
    cut = want[-1][1] + 1e-9 * max(1, want[-1][1])
    return {c for c, s in got if s > cut} == {c for c, s in want if s > cut}


def test_exact_on_random_corpora():
    rng = random.Random(SEED)
    pruned = 0
    for case in range(300):
        corpus = Corpus(rng)
        query = rng.sample(corpus.terms, rng.randint(1, len(corpus.terms)))
        n = rng.choice([1, 3, 10, 50])
        got, want, calls = run(corpus, query, n)
        assert same_top(got, want), f"case {case}: block size {corpus.block_size}, n {n}\n got {got}\nwant {want}"
        blocks_of_query = sum(b[0] in {corpus.terms.index(t) for t in query} for b in corpus.blocks)
        pruned += calls.get(bm25.READ_SQL, 0) > 0 and blocks_of_query > 0
    # the cases exercised reading in several steps, not only one full read
    assert pruned > 100


def test_calls_of_one_backend_share_the_slot_table_and_nothing_else(monkeypatch):
    """One backend keeps the id -> slot table between calls (in GD). Every call must
    leave it empty, whatever ids it saw, so that the next call, over other ids, lower
    or higher, is still exact; a call that fails part way must leave no table at all."""
    rng = random.Random(SEED + 4)
    gd: dict = {}
    for case in range(80):
        corpus = shifted(Corpus(rng), rng.choice([0, 0, 5_000, 300_000, -500]))
        query = rng.sample(corpus.terms, rng.randint(1, len(corpus.terms)))
        gd.pop("scirag_bm25_plans", None)  # (prepared on the fake plpy of another corpus)
        got, want, _ = run(corpus, query, rng.choice([1, 10, 50]), gd)
        assert same_top(got, want), f"case {case}\n got {got}\nwant {want}"
        _lo, table = gd["scirag_bm25_slots"]
        assert (table == -1).all(), f"case {case}: the call left {int((table != -1).sum())} slots behind"
    # a check that fails (a statement cancelled, say) ends the call with the table dropped
    corpus = Corpus(rng)
    orig = FakePlan.execute

    def failing(self, args):
        if self.sql == bm25.CHECK_SQL:
            raise RuntimeError("canceling statement due to user request")
        return orig(self, args)

    monkeypatch.setattr(FakePlan, "execute", failing)
    gd.pop("scirag_bm25_plans", None)
    try:
        run(corpus, corpus.terms[:], 5, gd)
    except RuntimeError:
        pass
    assert "scirag_bm25_slots" not in gd
    monkeypatch.setattr(FakePlan, "execute", orig)
    gd.pop("scirag_bm25_plans", None)
    got, want, _ = run(corpus, corpus.terms[:], 5, gd)
    assert same_top(got, want)


def test_stops_before_reading_everything(monkeypatch):
    """On a corpus with many blocks, the scorer reads only part of the postings: the
    pruning really prunes (a version that reads everything would pass the test above)."""
    rng = random.Random(SEED + 1)
    read: list[int] = []
    orig = bm25.unpack

    def spy(packed):
        out = orig(packed)
        read.append(len(out[0]))
        return out

    monkeypatch.setattr(bm25, "unpack", spy)
    read_fraction = []
    for _ in range(40):
        corpus = Corpus(rng)
        corpus.block_size = 2
        corpus.fresh_share = 0.0
        corpus.layout()
        read.clear()
        gd: dict = {}
        got, want, _ = run(corpus, corpus.terms[:], 3, gd)
        assert same_top(got, want)
        listed = sum(len(b[1]) for b in corpus.blocks)
        read_fraction.append(sum(read) / listed)
        # what kw_top_trace reports is what was read
        trace = gd["scirag_bm25_trace"]
        assert (trace["postings"], trace["postings_read"], trace["blocks"]) == (listed, sum(read), len(corpus.blocks))
    assert np.median(read_fraction) < 0.8, read_fraction


def test_wide_id_span_hands_over_to_sql():
    rng = random.Random(SEED + 2)
    corpus = Corpus(rng)
    # one chunk id far beyond the others: the dense table would be too large
    far = max(corpus.tf) + bm25.MAX_SPAN + 5
    corpus.tf[far] = {corpus.terms[0]: 3}
    corpus.dl[far] = 10
    corpus.hidden.discard(far)
    corpus.layout()
    got, _, _ = run(corpus, corpus.terms[:1], 200)
    assert got is None


def test_unpack_reads_kw_pack_records():
    ids, tfs, dls = [0, 1, 2**40, 2**63 - 1], [1, 7, 2**15 - 1, 3], [1, 30, 2**31 - 1, 5]
    got = bm25.unpack(pack(ids, tfs, dls))
    assert [g.tolist() for g in got] == [ids, tfs, dls]


def test_finds_a_chunk_whose_every_posting_sits_in_the_last_blocks():
    """A long chunk holding every common query term once scores highest, yet each of its
    postings has the lowest bound of its term, so it is read last. The best partial
    scores belong to chunks the caller may not see (a rare term's spikes), so reading
    stops first at their level and theta, found later among visible chunks, is lower:
    stopping once the unread bounds sum below twice theta (not below theta) misses it."""
    rng = random.Random(SEED + 3)
    corpus = Corpus(rng)
    common = [f"t{i}" for i in range(8)]
    corpus.terms = ["r", *common]
    corpus.tf, corpus.dl, corpus.hidden = {}, {}, set()
    cid = 1
    for _ in range(3):  # hidden spikes of the rare term
        corpus.tf[cid], corpus.dl[cid] = {"r": 6}, 5
        corpus.hidden.add(cid)
        cid += 1
    for i, t in enumerate(common):
        for _ in range(12):  # two common terms once each, average length
            corpus.tf[cid], corpus.dl[cid] = {t: 1, common[(i + 1) % 8]: 1}, 10
            cid += 1
    long_chunk = cid
    corpus.tf[long_chunk], corpus.dl[long_chunk] = {t: 1 for t in common}, 60
    corpus.avgdl = sum(corpus.dl.values()) / len(corpus.dl)
    corpus.block_size, corpus.fresh_share = 1, 0.0
    corpus.layout()
    got, want, _ = run(corpus, corpus.terms, 3)
    assert want[0][0] == long_chunk  # (the corpus is what this test says it is)
    assert same_top(got, want), f"got {got}\nwant {want}"
