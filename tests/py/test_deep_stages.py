"""The deep stages over a real retrieve result on the demo corpus, as the reader
role: enrichment, MMR, rerank (no model) and consolidation, the way the lead wires
them into scirag.retrieve."""

from __future__ import annotations

import json

import pytest

QUESTION = "How much straw could Harlan County supply each year?"
RETRIEVE = 'SELECT chunk_id, score FROM scirag.retrieve(%s, 10, options => \'{"layers": ["keyword"]}\')'


@pytest.fixture
def hits(reader_conn, demo_corpus):
    rows = reader_conn.execute(RETRIEVE, (QUESTION,)).fetchall()
    assert len(rows) == 10
    return [r[0] for r in rows], [r[1] for r in rows]


def test_enrichment_over_a_retrieve_result(reader_conn, admin_conn, hits):
    ids, _ = hits
    rows = reader_conn.execute(
        """SELECT e.chunk_id, e.depth, e.enriched, e.reached_root, scirag.word_count(e.content), e.content, e.body
           FROM scirag.enrich_chunks(%s, 150, 1000) e""",
        (ids,),
    ).fetchall()
    own = dict(admin_conn.execute("SELECT id, body FROM scirag.chunks WHERE id = ANY (%s)", (ids,)).fetchall())
    assert [r[0] for r in rows] == ids  # one row per hit, in rank order
    assert all(own[r[0]] in r[6] for r in rows), "every enriched text contains its original chunk"
    assert all(r[5].endswith(r[6]) for r in rows), "body is the returned content without its prefix"
    assert all(r[4] <= 1000 for r in rows if r[2]), "enriched content stays within max_word_count"
    assert all((r[1] > 0) == r[2] for r in rows)
    metrics = reader_conn.execute("SELECT scirag.enrichment_metrics(%s)", (ids,)).fetchone()[0]
    assert metrics["chunks"] == 10
    assert metrics["enrichment_percentage"] == pytest.approx(100.0 * sum(r[2] for r in rows) / 10, abs=0.01)


def test_mmr_over_a_retrieve_result(reader_conn, hits):
    ids, scores = hits
    picked = reader_conn.execute(
        "SELECT chunk_id, rank FROM scirag.mmr_select(%s, %s, 5) ORDER BY rank", (ids, scores)
    ).fetchall()
    assert [r[1] for r in picked] == [1, 2, 3, 4, 5]
    assert picked[0][0] == ids[0], "the most relevant chunk is always picked first"
    assert set(r[0] for r in picked) <= set(ids)
    same = reader_conn.execute(
        "SELECT array_agg(chunk_id ORDER BY rank) FROM scirag.mmr_select(%s, %s, 5, 1.0)", (ids, scores)
    ).fetchone()[0]
    assert same == ids[:5], "mmr_lambda 1 keeps the fused order"


def test_rerank_without_a_model_keeps_the_fused_order(reader_conn, admin_conn, hits):
    ids, scores = hits
    contents = [
        r[0]
        for r in admin_conn.execute(
            "SELECT c.content FROM unnest(%s::bigint[]) WITH ORDINALITY u(id, o) JOIN scirag.chunks c ON c.id = u.id ORDER BY u.o",
            (ids,),
        )
    ]
    rows = reader_conn.execute(
        "SELECT chunk_id, status FROM scirag.rerank(%s, %s, %s, %s)",
        (QUESTION, ids, contents, json.dumps({"entity_boost": 0, "fused_scores": scores})),
    ).fetchall()
    assert [r[0] for r in rows] == ids and {r[1] for r in rows} == {"disabled"}
    boosted = reader_conn.execute(
        "SELECT chunk_id FROM scirag.rerank(%s, %s, %s, %s)",
        (QUESTION, ids, contents, json.dumps({"fused_scores": scores})),
    ).fetchall()
    assert sorted(r[0] for r in boosted) == sorted(ids)


def test_consolidation_over_a_retrieve_result(reader_conn, admin_conn, hits):
    ids, _ = hits
    groups = reader_conn.execute(
        "SELECT group_no, document_id, chunk_ids, replaced_by, section_path, content, line_start, line_end "
        "FROM scirag.consolidate(ARRAY(SELECT chunk_id FROM scirag.retrieve(%s, 10, options => "
        '\'{"layers": ["keyword"]}\')))',
        (QUESTION,),
    ).fetchall()
    assert [g[0] for g in groups] == list(range(1, len(groups) + 1))
    members = [cid for g in groups for cid in g[2]]
    assert sorted(members) == sorted(ids), "every retrieved chunk is in exactly one group"
    assert all(g[5] and g[4] is not None for g in groups)
    assert all(g[6] is None or g[6] <= g[7] for g in groups)
    # group 1 holds the top hit; groups are ordered by their best-ranked member
    assert ids[0] in groups[0][2]
    best = [min(ids.index(c) for c in g[2]) for g in groups]
    assert best == sorted(best)
    # a replaced group's text is the replacing section's own text
    for g in groups:
        if g[3] is not None:
            body = admin_conn.execute("SELECT body FROM scirag.chunks WHERE id = %s", (g[3],)).fetchone()[0]
            assert g[5] == body


def test_consolidation_is_a_fixed_point(reader_conn, hits):
    """Consolidating what a consolidation produced (the replacing sections, the
    merged chunks) changes nothing more: the loop ran until no rule applied."""
    ids, _ = hits
    first = reader_conn.execute("SELECT chunk_ids, replaced_by, content FROM scirag.consolidate(%s)", (ids,)).fetchall()
    reps = [cid for members, replaced_by, _ in first for cid in ([replaced_by] if replaced_by else members)]
    second = reader_conn.execute("SELECT content FROM scirag.consolidate(%s)", (reps,)).fetchall()
    assert sorted(r[0] for r in second) == sorted(r[2] for r in first)
