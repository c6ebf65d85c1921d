"""MiniLM features in the campaign screener (issue 24): a campaign created with
``--minilm W`` ranks its records with their MiniLM embeddings beside TF-IDF. The
embeddings are computed once per record by the project's embedder and stored in
campaign_record_embeddings (append-only, owned like every campaign table); a kill -9
while they are computed loses only the batch in hand.

The planted review: the relevant records paraphrase the included one (no word in
common but "myocardial"), while decoys share its words but not its meaning. TF-IDF
alone ranks the decoys first; with the embeddings the relevant records come first."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import psycopg
import pytest

from scirag import campaign

ROOT = Path(__file__).resolve().parents[2]
SCIRAG = ROOT / ".venv" / "bin" / "scirag"

INCLUDED = ("Myocardial infarction outcomes in elderly patients", "Survival of older adults after a heart attack.")
EXCLUDED = ("Soil erosion on mountain farms", "Terraces and rainfall runoff in upland agriculture.")
RELEVANT = [
    (
        "Coronary thrombosis mortality among aged individuals",
        "Death rates following acute coronary syndrome in pensioners.",
    ),  # fmt: skip
    ("Cardiac ischaemia prognosis for seniors", "Long-term recovery of geriatric cardiology cases."),
    ("Cardiovascular death in old age after coronary occlusion", "One-year fatality of acute myocardial ischaemia."),
]
DECOYS = [
    ("Outcomes of elderly patients in dental clinics", "Survival of tooth implants after surgery."),
    ("Heart of the city: adults attack traffic in older districts", "Urban outcomes survey."),
    ("Elderly patients in hotel bookings", "Survival of travel agencies."),
    ("Older adults learn a second language", "Outcomes in evening classes for patients of speech therapy."),
    ("Attack surfaces of software", "Survival analysis of outcomes in elderly code bases."),
]
OTHERS = [
    ("Crop yields under drought", "Irrigation and wheat in dry regions."),
    ("Galaxy clusters and dark matter", "Lensing surveys of the early universe."),
    ("Rainfall runoff models of river basins", "Mountain catchments and floods."),
]


@pytest.fixture
def conn(dsn):
    c = campaign.connect(dsn)
    yield c
    c.close()


def env_for(dsn: str, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update(SCIRAG_DSN=dsn, COLUMNS="400", **extra)
    return env


def cli(dsn, *args, **extra):
    return subprocess.run([str(SCIRAG), "campaign", *args], env=env_for(dsn, **extra), cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip


def add_records(conn, c, records) -> list[int]:
    q = conn.execute(
        "INSERT INTO scirag.campaign_queries (campaign_id, source, query) VALUES (%s, 'openalex', 'q') RETURNING id",
        (c.id,),
    ).fetchone()[0]
    ids = []
    for title, abstract in records:
        ids.append(
            conn.execute(
                """INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, title, abstract,
                     year, norm_title) VALUES (%s, %s, 'openalex', %s, %s, %s, 2020, %s) RETURNING id""",
                (c.id, q, "W" + uuid.uuid4().hex[:12], title, abstract, campaign.norm_title(title)),
            ).fetchone()[0]
        )
    conn.commit()
    return ids


def planted(conn, minilm: float):
    c = campaign.create(conn, "heart " + uuid.uuid4().hex[:8], "myocardial infarction elderly", minilm=minilm)
    ids = add_records(conn, c, [INCLUDED, EXCLUDED] + RELEVANT + DECOYS + OTHERS)
    campaign.decide(conn, c, ids[0], "include")
    campaign.decide(conn, c, ids[1], "exclude", "wrong topic")
    return c, ids[2:5], ids[5:10]


def test_minilm_ranks_the_paraphrases_first_where_tfidf_ranks_the_decoys_first(conn, monkeypatch):
    c, relevant, decoys = planted(conn, minilm=2.0)
    rows, stop, model, training = campaign.next_to_screen(conn, c, 3)
    assert {r["record_id"] for r in rows} == set(relevant), rows
    assert model == "tfidf12-svm+minilm2" and training == 2
    # the planted error: the same campaign without the embeddings ranks the decoys first
    plain, relevant0, decoys0 = planted(conn, minilm=0.0)
    rows0, _, model0, _ = campaign.next_to_screen(conn, plain, 3)
    assert model0 == "tfidf12-svm" and {r["record_id"] for r in rows0} <= set(decoys0), rows0
    assert conn.execute(
        "SELECT count(*) FROM scirag.campaign_record_embeddings WHERE campaign_id = %s", (plain.id,)
    ).fetchone() == (0,)

    # stored once per record, the embedder's own vectors; a second ranking embeds nothing
    from scirag_helpers.embedder import VERSION, Embedder

    stored = conn.execute(
        """SELECT e.record_id, e.model, e.embedding::real[], r.title, r.abstract
           FROM scirag.campaign_record_embeddings e JOIN scirag.campaign_records r ON r.id = e.record_id
           WHERE e.campaign_id = %s ORDER BY e.record_id""",
        (c.id,),
    ).fetchall()
    assert len(stored) == 2 + len(RELEVANT) + len(DECOYS) + len(OTHERS)
    assert {s[1] for s in stored} == {VERSION}
    want = Embedder().embed([f"{t} {a}" for _, _, _, t, a in stored])
    assert np.allclose(np.array([s[2] for s in stored]), want, atol=1e-5)

    import scirag_helpers.embedder as emb

    class Refuse:
        def __init__(self, *a, **k):
            raise AssertionError("embedded again")

    monkeypatch.setattr(emb, "Embedder", Refuse)
    again, _, _, _ = campaign.next_to_screen(conn, c, 3)
    assert [r["record_id"] for r in again] == [r["record_id"] for r in rows]


def test_cli_new_minilm_then_screen_and_bad_weights(conn, dsn):
    name = "heart cli " + uuid.uuid4().hex[:8]
    p = cli(dsn, "new", name, "--query", "myocardial infarction", "--minilm", "2")
    assert p.returncode == 0, p.stderr
    assert "MiniLM" in p.stdout
    c = campaign.get(conn, name)
    assert c.screen_minilm == 2.0
    ids = add_records(conn, c, [INCLUDED, EXCLUDED] + RELEVANT + DECOYS + OTHERS)
    p = cli(dsn, "screen", name, "--decide", f"{ids[0]}=include", "--decide", f"{ids[1]}=exclude:wrong topic")
    assert p.returncode == 0, p.stderr
    p = cli(dsn, "screen", name, "--next", "3")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["model"] == "tfidf12-svm+minilm2"
    assert {r["record_id"] for r in out["records"]} == set(ids[2:5])
    assert "embedding 13 records" in p.stderr
    bad = cli(dsn, "new", name + " bad", "--query", "q", "--minilm", "9")
    assert bad.returncode != 0 and "--minilm" in bad.stderr
    with pytest.raises(campaign.CampaignError, match="a weight from 0"):
        campaign.create(conn, name + " bad", "q", minilm=-1)


def test_kill_9_while_embedding_then_rerun_keeps_each_embedding_once(conn, dsn):
    """Two batches to embed: killed before the second commits, the first batch stays and
    the rerun embeds only the rest."""
    name = "heart kill " + uuid.uuid4().hex[:8]
    c = campaign.create(conn, name, "myocardial infarction", minilm=1.0)
    filler = [(f"Filler record number {i} on topic {i % 7}", f"Words {i} about nothing much.") for i in range(70)]
    ids = add_records(conn, c, [INCLUDED, EXCLUDED] + RELEVANT + filler)
    campaign.decide(conn, c, ids[0], "include")
    campaign.decide(conn, c, ids[1], "exclude", "wrong topic")
    n = len(ids)
    assert n > campaign.EMBED_BATCH
    p = cli(dsn, "screen", name, "--next", "2", SCIRAG_CAMPAIGN_KILL_AT="embed.before_commit:2")
    assert p.returncode == -9, (p.returncode, p.stderr)

    def count():
        return conn.execute(
            "SELECT count(*), count(DISTINCT record_id) FROM scirag.campaign_record_embeddings WHERE campaign_id = %s",
            (c.id,),
        ).fetchone()

    assert count() == (campaign.EMBED_BATCH, campaign.EMBED_BATCH)
    p = cli(dsn, "screen", name, "--next", "2")
    assert p.returncode == 0, p.stderr
    assert f"embedding {n - campaign.EMBED_BATCH} records" in p.stderr
    assert count() == (n, n)


def test_embeddings_stay_inside_their_campaign_and_away_from_readers(conn, admin_conn):
    """An embedding names a record of its own campaign; rows are never rewritten (not
    even by a superuser); readers hold no privilege on the table."""
    c, _, _ = planted(conn, minilm=1.0)
    campaign.next_to_screen(conn, c, 1)
    for sql in ("DELETE FROM scirag.campaign_record_embeddings", "UPDATE scirag.campaign_record_embeddings SET model = 'x'"):  # fmt: skip
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            admin_conn.execute(sql + " WHERE campaign_id = %s", (c.id,))
    other, _, _ = planted(conn, minilm=0.0)
    rid = conn.execute("SELECT min(id) FROM scirag.campaign_records WHERE campaign_id = %s", (other.id,)).fetchone()[0]
    vec = "[" + ",".join(["0.05"] * 384) + "]"
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="is not in campaign"):
        conn.execute(
            "INSERT INTO scirag.campaign_record_embeddings (record_id, campaign_id, model, embedding) VALUES (%s, %s, 'm', %s::vector)",  # fmt: skip
            (rid, c.id, vec),
        )
    conn.rollback()
    admin_conn.execute("SET ROLE scirag_reader")
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            admin_conn.execute("SELECT count(*) FROM scirag.campaign_record_embeddings")
    finally:
        admin_conn.execute("RESET ROLE")


def test_rest_and_mcp_create_takes_the_weight(dsn, conn):
    """POST /v1/campaigns and the campaign_new tool pass ``minilm`` to the campaign;
    an out-of-range weight is refused by the request model."""
    from pydantic import ValidationError

    from scirag.server import campaigns as server_campaigns

    name = "heart rest " + uuid.uuid4().hex[:8]
    body = server_campaigns.CampaignIn(name=name, query="myocardial infarction", minilm=1.5).model_dump()
    out = server_campaigns.create(dsn, "scirag_loader", body)
    assert out["screen_minilm"] == 1.5 and campaign.get(conn, name).screen_minilm == 1.5
    with pytest.raises(ValidationError, match="minilm"):
        server_campaigns.CampaignIn(name=name, query="q", minilm=5)
