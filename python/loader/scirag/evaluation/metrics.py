"""Ranking metrics over document ids (one implementation for every evaluation)."""

from __future__ import annotations

import math


def dedupe(ids: list[str]) -> list[str]:
    """Document ranking from a chunk ranking: each document at its best chunk's rank."""
    seen: set[str] = set()
    return [x for x in ids if not (x in seen or seen.add(x))]


def ndcg_at(ranked: list[str], qrels: dict[str, int], k: int = 10) -> float:
    dcg = sum(qrels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: list[str], qrels: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, r in qrels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr(ranked: list[str], relevant: set[str], k: int | None = None) -> float:
    for i, d in enumerate(ranked[:k] if k else ranked):
        if d in relevant:
            return 1.0 / (i + 1)
    return 0.0


def hit_at(ranked: list[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant & set(ranked[:k]) else 0.0


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]
