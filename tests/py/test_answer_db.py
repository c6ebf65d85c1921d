"""scirag.answer and `scirag ask` on the demo corpus in scirag_pytest: cited answers
offline, scope held in answers, retraction exclusion, planted unanswerable questions."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import ROOT

SAMPLE = "How much straw could Harlan County supply each year?"
RESTRICTED_Q = (
    "What enzyme loading was recommended for saccharifying pretreated corn stover, and what sugar yield did it give?"
)
# Text that exists only in the restricted memo (saccharification-memo).
RESTRICTED_TEXT = ["6.5 mg", "353 kg", "89.6 %", "HX-40 loading", "Confidential Technical Memorandum"]


def answer(conn, question, options=None):
    return conn.execute("SELECT scirag.answer(%s, %s)", (question, json.dumps(options or {}))).fetchone()[0]


def test_the_sample_question_gets_a_cited_answer_offline(reader_conn, demo_corpus):
    a = answer(reader_conn, SAMPLE)
    assert a["answerer"] == "extractive" and not a["abstained"]
    assert "120,3" in a["answer"], a["answer"]
    assert a["citations"] and all(c["external_id"] == "county-straw-2022" for c in a["citations"])
    assert a["checks"]["citations_ok"] and a["checks"]["numbers_ok"]
    cited = a["citations"][0]
    assert {"n", "document_id", "chunk_id", "title", "section_path", "lines", "cite"} <= set(cited)
    assert f"[{cited['n']}]" in a["answer"]


def test_planted_unanswerable_questions_are_abstained_on(reader_conn, demo_corpus):
    for q in (
        "What straw-to-grain ratio should be used for grain sorghum in Merriweather County?",
        "What hydrogen yield does dark fermentation of barley straw achieve?",
    ):
        a = answer(reader_conn, q)
        assert a["abstained"] and a["citations"] == [], (q, a["answer"])


def test_a_restricted_chunk_never_reaches_a_reader_through_an_answer(reader_conn, loader_conn, demo_corpus):
    text = json.dumps(answer(reader_conn, RESTRICTED_Q))
    assert not [t for t in RESTRICTED_TEXT if t in text]
    # The same question, asked by a caller who may see restricted documents, does reach the memo:
    # the probe above would see a leak.
    loader_conn.execute("SET scirag.licenses = 'public,open_commercial,restricted'")
    wide = answer(loader_conn, RESTRICTED_Q)
    loader_conn.rollback()
    assert any(r["external_id"] == "saccharification-memo" for r in wide["retrieval"])


def test_retracted_documents_drop_out_of_answers_but_not_out_of_retrieve(reader_conn, admin_conn, demo_corpus):
    admin_conn.execute("UPDATE scirag.documents SET retracted = true WHERE external_id = 'county-straw-2022'")
    try:
        a = answer(reader_conn, SAMPLE)
        assert all(r["external_id"] != "county-straw-2022" for r in a["retrieval"])
        assert (
            reader_conn.execute(
                "SELECT count(*) FROM scirag.retrieve(%s, 10) WHERE external_id = 'county-straw-2022'", (SAMPLE,)
            ).fetchone()[0]
            > 0
        )
        assert reader_conn.execute("SELECT current_setting('scirag.exclude_retracted', true)").fetchone()[0] in (
            None,
            "",
        )
    finally:
        admin_conn.execute("UPDATE scirag.documents SET retracted = false WHERE external_id = 'county-straw-2022'")


def test_scirag_ask_prints_the_answer_with_numbered_sources(dsn, demo_corpus):
    exe = ROOT / ".venv" / "bin" / "scirag"
    assert exe.exists(), f"{exe} is not installed: run scripts/install_python.sh"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = dsn
    proc = subprocess.run([str(exe), "ask", SAMPLE], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"Q: {SAMPLE}") and "[1]" in out
    assert "Sources (* = cited):" in out and "*[1] " in out
    # the footer says what was checked, not "ok" as a verdict (issue 25)
    assert "checked (not a verdict on correctness): every [n] names a source listed above" in out
    assert out.rstrip().splitlines()[-1].startswith("trace: ")
    assert " ok" not in out.split("checked (", 1)[1].splitlines()[0]
    assert "claim(s) has its key terms in one sentence or row of a source it cites" in out, (
        "the supports check is reported next to citations and numbers"
    )
    assert "retrieving and answering" in proc.stderr


def stages(a):
    return {s["stage"]: s for s in a["trace"]["stages"]}


def test_checks_report_supports_next_to_citations_and_numbers(reader_conn, demo_corpus):
    a = answer(reader_conn, SAMPLE, {"answerer": "extractive"})
    chk = a["checks"]
    assert chk["supports_ok"] and chk["claims"] >= 1 and chk["unsupported"] == []
    assert stages(a)["checks"]["supports_ok"] is True


def test_consolidation_builds_context_groups_that_cite_their_best_member(reader_conn, demo_corpus):
    plain = answer(reader_conn, SAMPLE, {"answerer": "extractive"})
    grouped = answer(reader_conn, SAMPLE, {"answerer": "extractive", "consolidate": {"line_gap": 50}})
    st = stages(grouped)
    assert "consolidate" in st and "consolidate" not in stages(plain)
    assert st["consolidate"]["groups"] <= st["consolidate"]["candidates"]
    retrieved = {r["chunk_id"] for r in plain["retrieval"]}
    for s in grouped["sources"]:
        assert s["chunk_id"] in retrieved and set(s["chunk_ids"]) >= {s["chunk_id"]}
    assert "120,3" in grouped["answer"]


def test_enrichment_and_the_sentence_filter_take_effect(reader_conn, demo_corpus):
    a = answer(reader_conn, SAMPLE, {"answerer": "extractive", "enrich": {"min_word_count": 400}, "min_sentences": 2})
    st = stages(a)
    assert st["enrich"]["enriched"] >= 1 and st["sentence_filter"]["kept"] <= st["sentence_filter"]["candidates"]


def test_a_preset_turns_the_evidence_stages_on(reader_conn, demo_corpus):
    a = answer(reader_conn, SAMPLE, {"answerer": "extractive", "preset": "detailed-context"})
    assert {"consolidate", "enrich"} <= set(stages(a))
    b = answer(reader_conn, SAMPLE, {"answerer": "extractive", "preset": "default"})
    assert not {"consolidate", "enrich"} & set(stages(b))


@pytest.mark.parametrize(
    "question,bad,message",
    [
        (SAMPLE, {"consolidate": {"gap": 3}}, "consolidate"),
        (SAMPLE, {"enrich": {"min_word_count": -1}}, "min_word_count"),
        (SAMPLE, {"min_sentences": 0}, "min_sentences"),
        ("x" * 4001, {}, "at most 4000"),
    ],
)
def test_bad_input_is_refused_by_name_as_invalid_parameter_value(reader_conn, demo_corpus, question, bad, message):
    import psycopg

    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        answer(reader_conn, question, bad)
    reader_conn.rollback()


def test_the_answerer_gets_each_body_with_its_retrieval_row(reader_conn, loader_conn, demo_corpus):
    """scirag.retrieve_evidence: retrieve's rows (same order, same columns) plus each
    chunk's stored body, so scirag.answer reads no chunk a second time; readers keep
    scirag.retrieve and cannot call the variant."""
    opts = json.dumps({})
    plain = loader_conn.execute(
        "SELECT rank, chunk_id, content, citation FROM scirag.retrieve(%s, 8, 'interactive', %s::jsonb)",
        (SAMPLE, opts),
    ).fetchall()
    evid = loader_conn.execute(
        "SELECT e.rank, e.chunk_id, e.content, e.citation, e.body, c.body "
        "FROM scirag.retrieve_evidence(%s, 8, 'interactive', %s::jsonb) e JOIN scirag.chunks c ON c.id = e.chunk_id",
        (SAMPLE, opts),
    ).fetchall()
    assert plain and [r[:4] for r in evid] == plain
    assert all(r[4] == r[5] and r[4] and r[4] != r[2] for r in evid)  # the body, not the prefixed content
    a = answer(reader_conn, SAMPLE, {"answerer": "extractive"})
    body = dict(
        loader_conn.execute(
            "SELECT id, body FROM scirag.chunks WHERE id = ANY(%s)", ([s["chunk_id"] for s in a["prompt_sources"]],)
        ).fetchall()
    )
    assert a["prompt_sources"] and all(s["text"] == body[s["chunk_id"]].strip() for s in a["prompt_sources"])
    with pytest.raises(Exception, match="permission denied for function retrieve_evidence"):
        reader_conn.execute("SELECT * FROM scirag.retrieve_evidence('x', 1, 'interactive', '{}')")
