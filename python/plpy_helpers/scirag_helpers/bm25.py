"""Exact BM25 top n over the compacted postings, with block-max pruning, in numpy.

Called by scirag.kw_top (PL/Python), which scirag.search_keyword calls once it has
parsed the question and computed the caller's term statistics. Summing postings in
SQL cost about 1 us each, and a million-chunk corpus puts hundreds of thousands of
postings behind a claim's terms. Here the postings arrive as binary strings
(kw_blocks.packed: 14-byte records) and are scored as numpy vectors.

The algorithm (exact; block-max bounds):
- Every block of every query term has a bound: the term score of its largest tf at
  its shortest length. Each term's blocks are read in descending bound, the terms
  interleaved so that R, the sum over terms of their largest unread bound, falls
  fastest per posting read (read_order); R is known in advance for every read position.
- A chunk seen so far has a partial score (the postings read for it: one per term at
  most) and a bound: that plus the largest unread bound of each term not read for it.
  A chunk not seen at all scores at most R.
- Candidates are checked against scirag.chunks as the caller sees it (row-level
  security, "phrases", -negation, reference lists), which also scores them from the
  chunk's own tsvector where the postings read do not give the exact score: theta is
  the n-th best score checked.
- Reading stops once R < theta (no unseen chunk can enter) and checking once the best
  unchecked bound is below theta. So every chunk that can reach the top n is scored
  exactly, and the result equals a full scan's, ties aside.
tests/py/test_bm25.py checks it against a full scan on random block layouts.
"""

from __future__ import annotations

import numpy as np

# kw_blocks.packed: a 14-byte record per posting (scirag.kw_pack)
POSTING_T = np.dtype([("id", ">i8"), ("tf", ">i2"), ("dl", ">i4")])
# the first read takes 32 n postings (at least one block's worth); each later read doubles
FIRST_READ_PER_RESULT = 32
CHECK_BATCH = 256
# what a chunk check and a posting read cost, relatively: at 1M chunks a check took
# 20-40 us warm (far more when the chunk is not cached), a posting about 0.1 us to read
# and score; 200, 1000 and 5000 gave the same p50 within noise, 200 the best p95
CHECK_COST = 200
READ_COST = 1

META_SQL = """
SELECT array_agg(t.i::int) AS ti, array_agg(k.ctid) AS tid, array_agg(k.max_tf) AS max_tf,
       array_agg(k.min_dl) AS min_dl, array_agg(length(k.packed) / 14) AS cnt
FROM unnest($1::text[]) WITH ORDINALITY AS t(lexeme, i)
JOIN scirag.kw_blocks k ON k.lexeme = t.lexeme"""
# (ctid: the function is STABLE, so every statement in it sees the calling query's
# snapshot and a block read here is the block listed above)
# (the aggregates of one query level see the rows in one order, whatever it is: ord
# says which block each record run came from)
READ_SQL = """
SELECT array_agg(o.ord::int) AS ord, string_agg(k.packed, ''::bytea) AS packed
FROM unnest($1::tid[]) WITH ORDINALITY AS o(tid, ord)
JOIN scirag.kw_blocks k ON k.ctid = o.tid"""
FRESH_SQL = """
SELECT array_agg(t.i::int) AS ti, array_agg(p.chunk_id) AS ids, array_agg(p.tf) AS tfs, array_agg(p.dl) AS dls
FROM unnest($1::text[]) WITH ORDINALITY AS t(lexeme, i)
JOIN scirag.kw_postings p ON p.lexeme = t.lexeme"""
# Each candidate the caller may see (row-level security, phrases, negation, reference
# lists), with its exact BM25 where the postings read do not give it: the query terms'
# frequencies cut out of its tsvector in C (mark them with weight A, keep weight A); its
# length came with the posting.
CHECK_SQL = """
SELECT c.id,
       CASE WHEN k.need THEN
         (SELECT sum($5[array_position($4, x.lexeme)] * cardinality(x.positions) * ($6 + 1)
                     / (cardinality(x.positions) + $6 * (1 - $7 + $7 * k.dl / $8)))
          FROM unnest(ts_filter(setweight(setweight(c.tsv, 'D'), 'A', $4), '{a}')) AS x)
       END AS s
FROM unnest($1::bigint[], $2::int[], $11::boolean[]) AS k(id, dl, need)
JOIN scirag.chunks c ON c.id = k.id
WHERE ($9::tsquery IS NULL OR c.tsv @@ $9::tsquery)
  AND ($10::tsquery IS NULL OR NOT c.tsv @@ $10::tsquery)
  AND ($3 OR NOT c.is_reference)"""
# A question asked of a few papers (scirag.scope_narrow_documents(): the positive scope
# filters admit at most 1,000 chunks) is scored directly: every admitted, indexed chunk
# with a query term, from its tsvector, through the chunks_document index. The block-max
# walk would read and check other papers' postings for nothing (50-200 ms for a paper of
# 30 chunks among 9,000; this takes a few ms). Same formula, statistics and conditions:
# dl is the chunk's length in lexeme occurrences and tf a lexeme's occurrences, as
# scirag.kw_index_new_chunks writes them into kw_postings (a stripped tsvector counts 1).
NARROW_SQL = "SELECT scirag.scope_narrow_documents() AS docs"
SCOPED_SQL = """
WITH m AS (
  SELECT c.id, c.tsv, ts_filter(setweight(setweight(c.tsv, 'D'), 'A', $2), '{a}') AS v
  FROM scirag.chunks c
  WHERE c.document_id = ANY ($1) AND c.kind <> 'section'
    AND ($7::tsquery IS NULL OR c.tsv @@ $7::tsquery)
    AND ($8::tsquery IS NULL OR NOT c.tsv @@ $8::tsquery)
    AND ($9 OR NOT c.is_reference)),
s AS (
  SELECT m.id,
         (SELECT sum($3[array_position($2, x.lexeme)] * coalesce(cardinality(x.positions), 1) * ($4 + 1)
                     / (coalesce(cardinality(x.positions), 1) + $4 * (1 - $5 + $5 * d.dl / $6)))
          FROM unnest(m.v) AS x,
               (SELECT sum(coalesce(cardinality(u.positions), 1)) AS dl FROM unnest(m.tsv) AS u) AS d) AS s
  FROM m WHERE length(m.v) > 0)
SELECT array_agg(s.id ORDER BY s.s DESC, s.id) AS ids, array_agg(s.s ORDER BY s.s DESC, s.id) AS scores
FROM (SELECT * FROM s ORDER BY s.s DESC, s.id LIMIT $10) s"""
SCOPED_TYPES = ["bigint[]", "text[]", "float8[]", "float8", "float8", "float8", "tsquery", "tsquery", "boolean", "int"]
CHECK_TYPES = [
    "bigint[]",
    "int[]",
    "boolean",
    "text[]",
    "float8[]",
    "float8",
    "float8",
    "float8",
    "tsquery",
    "tsquery",
    "boolean[]",
]


def _plans(plpy, gd: dict) -> dict:
    plans = gd.get("scirag_bm25_plans")
    if plans is None:
        plans = {
            "meta": plpy.prepare(META_SQL, ["text[]"]),
            "read": plpy.prepare(READ_SQL, ["tid[]"]),
            "fresh": plpy.prepare(FRESH_SQL, ["text[]"]),
            "check": plpy.prepare(CHECK_SQL, CHECK_TYPES),
            "narrow": plpy.prepare(NARROW_SQL, []),
            "scoped": plpy.prepare(SCOPED_SQL, SCOPED_TYPES),
        }
        gd["scirag_bm25_plans"] = plans
    return plans


def term_score(idf, tf, dl, k1: float, b: float, avgdl: float):
    """BM25 term score, on numpy arrays or scalars (the formula search_keyword and kw_top_sql write in SQL)."""
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def unpack(packed: bytes):
    """Chunk ids, tfs and lengths from kw_pack records."""
    rec = np.frombuffer(packed, dtype=POSTING_T)
    return rec["id"].astype(np.int64), rec["tf"].astype(np.float64), rec["dl"].astype(np.float64)


class _Seen:
    """Per chunk seen so far, in slots: partial score, the terms read (a sum of distinct
    powers of two, exact in float64 up to 52 terms), length, and whether it was checked.
    A chunk id finds its slot through a table indexed by id - lo (chunk ids come from
    one sequence, so their span is about the corpus size): no sorting (50 ms a million
    ids here), and every later pass costs the chunks seen, not the corpus.

    The table outlives the call (in GD, all -1 between calls: release() clears what the
    call wrote), because filling a fresh one for a million-chunk span cost 2 ms a query.
    The slots are allocated once for every posting listed (one slot per posting at most;
    pages are only touched when used), so no read copies them."""

    def __init__(self, gd: dict):
        self.gd = gd
        # taken, not borrowed: a call that fails leaves no half-written table behind
        self.lo, self.slot = gd.pop("scirag_bm25_slots", (0, np.zeros(0, np.int32)))
        self.call_lo = self.call_hi = None  # the ids this call has seen span call_lo..call_hi
        self.reserve(0)

    def reserve(self, cap: int):
        """Slots for cap postings (before the first add)."""
        cap = max(int(cap), 1)
        self._ids = np.zeros(cap, np.int64)
        self._part = np.zeros(cap)
        self._terms = np.zeros(cap)
        self._length = np.zeros(cap)
        self._done = np.zeros(cap, dtype=bool)
        self.count = 0

    # the slots in use (views: writes go through)
    ids = property(lambda self: self._ids[: self.count])
    part = property(lambda self: self._part[: self.count])
    terms = property(lambda self: self._terms[: self.count])
    length = property(lambda self: self._length[: self.count])
    done = property(lambda self: self._done[: self.count])

    def range_after(self, ids: np.ndarray) -> tuple[int, int]:
        """The smallest and largest id this call has seen, with these."""
        lo, hi = int(ids.min()), int(ids.max())
        if self.call_lo is not None:
            lo, hi = min(lo, self.call_lo), max(hi, self.call_hi)
        return lo, hi

    def span_after(self, ids: np.ndarray) -> int:
        lo, hi = self.range_after(ids)
        return hi - lo + 1

    def add(self, ids: np.ndarray, ti: np.ndarray, s: np.ndarray, dl: np.ndarray):
        lo, hi = self.call_lo, self.call_hi = self.range_after(ids)
        if lo < self.lo or hi >= self.lo + len(self.slot):
            # a table over this call's span, with room above for chunks added later;
            # the chunks seen so far keep their slots
            table = np.full(hi - lo + 1 + (hi - lo) // 8, -1, dtype=np.int32)
            used = np.flatnonzero(self.terms > 0)
            table[self._ids[used] - lo] = used
            self.lo, self.slot = lo, table
        i = ids - self.lo
        new = self.slot[i] < 0
        # a chunk new to this read may come several times (once per term): each gets a
        # slot, the last one written wins, the others stay empty (terms 0: never seen)
        fresh = int(new.sum())
        self.slot[i[new]] = self.count + np.arange(fresh)
        self.count += fresh
        at = self.slot[i]
        self._ids[at] = ids
        self._part[: self.count] += np.bincount(at, weights=s, minlength=self.count)
        self._terms[: self.count] += np.bincount(at, weights=np.exp2(np.minimum(ti, 52)), minlength=self.count)
        self._length[at] = dl

    def release(self):
        """Clears the table's entries this call wrote and keeps it for the next call."""
        self.slot[self.ids[self.terms > 0] - self.lo] = -1
        self.gd["scirag_bm25_slots"] = (self.lo, self.slot)


def unread_schedule(bti: np.ndarray, bub: np.ndarray, order: np.ndarray, nt: int):
    """R after reading the first p blocks of `order`, for p = 0..len(order): the sum over
    terms of their largest unread bound (each term's blocks go in descending bound, so a term's
    largest unread bound is that of its first block left). Reading a block lowers R by
    its bound less the bound of its term's next block."""
    ob, ot = bub[order], bti[order]
    nxt = np.zeros(len(order))
    by_term = np.argsort(ot, kind="stable")  # positions grouped by term, in order within each
    same = ot[by_term][1:] == ot[by_term][:-1]
    nxt[by_term[:-1][same]] = ob[by_term[1:][same]]
    first = np.zeros(nt)
    ts, at = np.unique(ot, return_index=True)
    first[ts] = ob[at]
    return np.concatenate(([first.sum()], first.sum() - np.cumsum(ob - nxt)))


# a term's blocks are cut into at most this many pieces (the rest is one piece)
MAX_PIECES = 32


def read_order(bti: np.ndarray, bub: np.ndarray, bcnt: np.ndarray) -> np.ndarray:
    """The blocks in the order that lowers R fastest per posting read. Each term's blocks
    go in descending bound; reading the first j lowers R from the first bound to the
    (j+1)-th, or to 0 once all are read. A term whose bounds are flat (most postings
    have tf 1) lowers R little until its last block, so reading it in step with the
    others, bound by bound, wastes reads: instead each term's sequence is cut at the
    vertices of the upper envelope of (postings read, R lowered), and the pieces of all
    terms are read in descending drop per posting (the greedy that is optimal for the
    relaxed problem: lower R below theta reading the fewest postings). The pieces of
    one term keep their order, as unread_schedule requires. At 1M chunks a SciFact
    claim now reads 132k postings (median, scripts/bench_keyword.py --trace); in plain
    descending bound it read 203k (measured once, with an instrumented copy)."""
    nb = len(bub)
    by_term = np.lexsort((np.arange(nb), -bub, bti))
    tb = bti[by_term]
    starts = np.flatnonzero(np.concatenate(([True], tb[1:] != tb[:-1])))
    ends = np.concatenate((starts[1:], [nb]))
    slopes, firsts, lasts = [], [], []
    for s, e in zip(starts.tolist(), ends.tolist()):
        bound = bub[by_term[s:e]]
        read = np.cumsum(bcnt[by_term[s:e]]).astype(np.float64)
        after = np.concatenate((bound[1:], [0.0]))  # the term's unread bound after block j
        at, r0, c0, cut = 0, bound[0], 0.0, 1
        while at < len(bound):
            if cut == MAX_PIECES:
                j = len(bound) - 1 - at  # the rest, as one piece
                slope = r0 / (read[-1] - c0)
            else:
                drop = (r0 - after[at:]) / (read[at:] - c0)
                j = len(drop) - 1 - int(np.argmax(drop[::-1]))  # the farthest of the best
                slope = float(drop[j])
            slopes.append(slope)
            firsts.append(s + at)
            lasts.append(s + at + j + 1)
            r0, c0, at, cut = after[at + j], read[at + j], at + j + 1, cut + 1
    pieces = np.lexsort((np.asarray(firsts), -np.asarray(slopes)))
    return np.concatenate([by_term[firsts[i] : lasts[i]] for i in pieces.tolist()])


def unread_per_term(bti: np.ndarray, bub: np.ndarray, order: np.ndarray, pos: int, nt: int) -> np.ndarray:
    u = np.zeros(nt)
    if pos < len(order):
        ts, first = np.unique(bti[order[pos:]], return_index=True)
        u[ts] = bub[order[pos:]][first]
    return u


# beyond this span of chunk ids (a corpus re-ingested many times over) the dense
# accumulators would take too much memory: kw_top_sql ranks instead
MAX_SPAN = 1 << 23


def top_n(
    plpy,
    gd: dict,
    lexemes,
    idf,
    k1: float,
    b: float,
    avgdl: float,
    n: int,
    phrase_q=None,
    neg_q=None,
    refs: bool = False,
):
    """Exact BM25 top n as [(chunk_id, score)], best first (ties by id), or None when
    the chunk ids span too much for the dense accumulators (the caller ranks in SQL).
    Under a narrow scope (NARROW_SQL) the admitted chunks are scored directly.

    lexemes/idf: the query terms the caller's statistics know, with query tf x IDF."""
    plans = _plans(plpy, gd)
    docs = plans["narrow"].execute([])[0]["docs"]
    if docs is not None:
        row = plans["scoped"].execute([docs, lexemes, list(idf), k1, b, avgdl, phrase_q, neg_q, bool(refs), n])[0]
        gd["scirag_bm25_trace"] = {"narrow": True, "documents": len(docs)}
        return list(zip(row["ids"] or [], row["scores"] or []))
    acc = _Seen(gd)
    trace = dict.fromkeys(TRACE_KEYS, 0)
    top = _rank(plpy, gd, acc, trace, lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, refs)
    acc.release()  # (only after a call that returned: see _Seen)
    trace["sql_fallback"] = top is None
    gd["scirag_bm25_trace"] = trace
    return top


# what the last call of a session did (scirag.kw_top_trace(), for scripts/bench_keyword.py
# --trace): postings listed and read (fresh ones included), blocks listed and read, read
# statements, chunks checked against scirag.chunks, those scored from their tsvector, checks
TRACE_KEYS = ("postings", "postings_read", "blocks", "blocks_read", "reads", "checked", "scored", "checks")


def _rank(plpy, gd: dict, acc: _Seen, trace: dict, lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, refs):
    """top_n's work, accumulating in acc and counting in trace."""
    plans = _plans(plpy, gd)
    idf = np.asarray(idf, dtype=np.float64)
    nt = len(idf)
    fresh = plans["fresh"].execute([lexemes])[0]
    meta = plans["meta"].execute([lexemes])[0]
    if meta["ti"]:
        bti = np.asarray(meta["ti"], np.int64) - 1
        bcnt = np.asarray(meta["cnt"], np.int64)
        bub = term_score(
            idf[bti], np.asarray(meta["max_tf"], np.float64), np.asarray(meta["min_dl"], np.float64), k1, b, avgdl
        )
        order = read_order(bti, bub, bcnt)
        tids = meta["tid"]
    else:
        bti = bcnt = order = np.empty(0, np.int64)
        bub = np.empty(0)
        tids = []
    n_fresh = len(fresh["ids"] or [])
    trace["postings"], trace["postings_read"], trace["blocks"] = int(bcnt.sum()) + n_fresh, n_fresh, len(order)
    acc.reserve(trace["postings"])
    nb = len(order)
    sched = unread_schedule(bti, bub, order, nt)  # R after reading order[:p]
    posts = np.concatenate(([0], np.cumsum(bcnt[order])))  # postings in order[:p]
    pos = 0  # blocks read: order[:pos]

    def add(ids, ti, tfs, dls) -> bool:
        if acc.span_after(ids) > MAX_SPAN:
            return False
        acc.add(ids, ti, term_score(idf[ti], tfs, dls, k1, b, avgdl), dls)
        return True

    def read_to(p: int) -> bool:
        nonlocal pos
        p = min(max(p, pos), nb)
        if p == pos:
            return True
        take = order[pos:p]
        trace["reads"] += 1
        trace["blocks_read"] += p - pos
        trace["postings_read"] += int(posts[p] - posts[pos])
        pos = p
        row = plans["read"].execute([[tids[i] for i in take.tolist()]])[0]
        if row["ord"] is None:
            return True  # (cannot happen: one snapshot)
        take = take[np.asarray(row["ord"], np.int64) - 1]
        ids, tfs, dls = unpack(row["packed"])
        return add(ids, np.repeat(bti[take], bcnt[take]), tfs, dls)

    def read_until(r: float) -> bool:
        """Reads blocks until R < r (or everything)."""
        # sched is non-increasing: the first p >= pos with sched[p] < r
        later = np.flatnonzero(sched[pos:] < r)
        return read_to(pos + int(later[0]) if len(later) else nb)

    if fresh["ti"]:
        # postings not flushed into blocks yet (a few thousand at most) are read at once
        ok = add(
            np.asarray(fresh["ids"], np.int64),
            np.asarray(fresh["ti"], np.int64) - 1,
            np.asarray(fresh["tfs"], np.float64),
            np.asarray(fresh["dls"], np.float64),
        )
        if not ok:
            return None
    # first read: 32 n postings of the highest bounds (the rarest terms' best blocks)
    if not read_to(int(np.searchsorted(posts, max(128, FIRST_READ_PER_RESULT * n))) + 1):
        return None
    if acc.count == 0:
        return []

    scores: dict[int, float] = {}  # checked chunks the caller may have -> exact score
    theta = 0.0

    def check(idx: np.ndarray, exact: np.ndarray):
        """Checks chunks (accumulator indexes) against scirag.chunks; theta follows."""
        nonlocal theta
        ids = acc.ids[idx]
        rows = plans["check"].execute(
            [
                ids.tolist(),
                acc.length[idx].astype(np.int64).tolist(),
                refs,
                lexemes,
                idf.tolist(),
                k1,
                b,
                avgdl,
                phrase_q,
                neg_q,
                (~exact).tolist(),
            ]
        )
        got = {r["id"]: r["s"] for r in rows}
        acc.done[idx] = True
        trace["checks"] += 1
        trace["checked"] += len(idx)
        trace["scored"] += int((~exact).sum())
        for c, p, e in zip(ids.tolist(), acc.part[idx].tolist(), exact.tolist()):
            if c in got:
                scores[c] = p if e else got[c]
        if len(scores) >= n:
            # a hair lower than the n-th score: bounds and scores are sums in different orders
            theta = sorted(scores.values(), reverse=True)[n - 1] * (1 - 1e-9)

    def bounds(idx: np.ndarray):
        """Bound of each chunk and whether its partial score is already exact: the partial
        score plus the largest unread bound of every term not read for it (a chunk has
        one posting per term, so a term read for it is exact)."""
        u = unread_per_term(bti, bub, order, pos, nt)
        if nt <= 52:
            bits = acc.terms[idx].astype(np.uint64)
            covered = np.zeros(len(idx))
            for t in np.flatnonzero(u):
                covered += ((bits >> np.uint64(t)) & np.uint64(1)).astype(np.float64) * u[t]
            missing = u.sum() - covered
        else:
            missing = np.full(len(idx), u.sum())  # (terms not tracked: the loosest bound)
        return acc.part[idx] + missing, missing <= 1e-12 * max(1.0, u.sum())

    def best_unchecked(k: int) -> np.ndarray:
        """Up to k unchecked chunks with the best partial scores."""
        cand = np.flatnonzero(~acc.done & (acc.terms > 0))
        if len(cand) > k:
            cand = cand[np.argpartition(-acc.part[cand], k - 1)[:k]]
        return cand[np.lexsort((acc.ids[cand], -acc.part[cand]))]

    seed = n + n // 4 + 8
    # theta: the n-th best partial score after the first read (the rarest terms' best
    # blocks) is at most the n-th best score, if those chunks are visible; read until no
    # unseen chunk can beat it, then check the best partial scores (now mostly exact,
    # so most checks need no scoring) until n chunks the caller may have are found.
    # (Checking the first read's best at once gave a lower theta at a higher cost:
    # 57 against 48 ms p50 at 1M chunks.)
    seen = np.flatnonzero(acc.terms > 0)
    if len(seen) >= n:
        opt = float(np.partition(acc.part[seen], len(seen) - n)[len(seen) - n])
        if not read_until(opt * (1 - 1e-9)):
            return None
    while len(scores) < n:
        idx = best_unchecked(seed)
        if len(idx) == 0:
            if pos >= nb:
                break
            if not read_to(pos + max(1, (nb - pos) // 2)):
                return None
            continue
        _, exact = bounds(idx)
        check(idx, exact)
    while True:
        # no chunk unseen so far can reach theta once R < theta
        if not read_until(theta):
            return None
        # every chunk whose bound reaches theta gets checked; while checking them would
        # cost more than reading on until R halves (which tightens every bound), read
        while True:
            rest = sched[pos]
            cand = np.flatnonzero(~acc.done & (acc.terms > 0) & (acc.part + rest >= theta))
            bnd, exact = bounds(cand)
            keep = bnd >= theta
            cand, bnd, exact = cand[keep], bnd[keep], exact[keep]
            if len(cand) <= CHECK_BATCH or pos >= nb:
                break
            later = np.flatnonzero(sched[pos:] < rest / 2)
            half = pos + int(later[0]) if len(later) else nb
            if len(cand) * CHECK_COST <= (posts[half] - posts[pos]) * READ_COST:
                break
            if not read_to(half):
                return None
        if len(cand) == 0:
            break
        o = np.lexsort((acc.ids[cand], -bnd))[:CHECK_BATCH]
        check(cand[o], exact[o])
        if len(o) == len(cand):
            break  # all checked: theta only rose, nothing else can reach it
    vis = sorted(scores.items(), key=lambda x: (-x[1], x[0]))
    return vis[:n]
