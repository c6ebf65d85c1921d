"""Every reader path on a real hot standby (issue 27).

The module copies the test cluster with ``pg_basebackup -R`` into a streaming hot
standby (tests/py/standby_cluster.py; removed at the end, also when a test fails) after
the demo corpus and its graph are loaded, then runs the public reader functions, the
demo question, doctor's read-only checks and the server's service as a reader on the
standby and checks that each gives exactly what the primary gives. Replication is
PostgreSQL's own; nothing is mocked. Routing (scirag.routing) sends reads to
SCIRAG_READ_DSN and falls back to the primary; the lag report names each standby.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from scirag import db, routing
from scirag.upkeep.doctor import replica_finding, run_doctor
from scirag.graph.communities import build_communities
from scirag.graph.extract import run_extract
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.ingest.manifest import read_manifest

from conftest import DEMO_MANIFEST, ROOT, write_manifest
from standby_cluster import start_standby, wait_caught_up

QUESTION = "How much straw could Harlan County supply each year?"
GRAPH_QUESTION = "Which fibres make up Harlan County's chief leftover?"
SCIRAG = ROOT / ".venv" / "bin" / "scirag"
# A document only this module writes: its words occur nowhere in the demo corpus.
NEW_TEXT = (
    "# Quokka pellet ledger\n\nThe quokka pellet ledger records 4,321 tonnes of zorbium husk "
    "pressed into fuel pellets at the Wexcombe mill in 2023.\n"
)
NEW_QUESTION = "How many tonnes of zorbium husk did the Wexcombe mill press?"


@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus, embedder):
    """The demo corpus with its offline graph and communities (as test_graph_multihop builds
    them), so the graph and community layers have something to return on both nodes."""
    ids = [e.id for _, e in read_manifest(DEMO_MANIFEST)]
    domain = load_domain()
    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [r[0] for r in conn.execute("SELECT id FROM scirag.documents WHERE external_id = ANY (%s)", (ids,))]
        run_extract(conn, domain, OfflineExtractor(domain), document_ids=demo)
        build_communities(conn, domain, None, embedder=embedder)


@pytest.fixture(scope="module")
def standby(dsn, demo_graph):
    """A streaming hot standby of the test cluster; stopped and removed afterwards."""
    port = int(os.environ.get("SCIRAG_STANDBY_PORT") or int(conninfo_to_dict(dsn).get("port") or 5432) + 1)
    node = start_standby(dsn, "pytest_standby", port)
    try:
        yield node
    finally:
        node.remove()


@pytest.fixture(scope="module")
def standby_dsn(standby, dsn):
    return standby.dsn(conninfo_to_dict(dsn)["dbname"])


@pytest.fixture
def readers(dsn, standby_dsn):
    """(primary, standby) reader connections (autocommit, row-level security applies)."""
    p = db.connect(dsn, role="scirag_reader", autocommit=True)
    s = db.connect(standby_dsn, role="scirag_reader", autocommit=True)
    yield p, s
    p.close()
    s.close()


@pytest.fixture
def paused(dsn, standby_dsn):
    """Pauses WAL replay on the standby (pg_wal_replay_pause) for a test that needs a
    standby visibly behind; resumes and waits until it caught up again."""
    with psycopg.connect(standby_dsn, autocommit=True) as s:
        s.execute("SELECT pg_wal_replay_pause()")
    try:
        yield
    finally:
        with psycopg.connect(standby_dsn, autocommit=True) as s:
            s.execute("SELECT pg_wal_replay_resume()")
        wait_caught_up(dsn, standby_dsn)


@pytest.fixture
def new_document(dsn, standby_dsn, tmp_path, embedder):
    """Ingests NEW_TEXT on the primary (as the loader, one transaction) when called;
    returns the primary's WAL position after the commit. Deleted afterwards (and the
    deletion replayed, so later tests see the demo corpus on both nodes)."""
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    def ingest() -> str:
        manifest = write_manifest(
            tmp_path,
            [{"id": "replica-ledger", "path": "ledger.md", "license": "public", "title": "Quokka pellet ledger"}],
            {"ledger.md": NEW_TEXT},
        )
        with db.connect(dsn, role="scirag_loader") as conn:
            counts = ingest_manifest(conn, manifest, Ingester(conn, embedder=embedder))
            assert counts["added"] == 1, counts
        with psycopg.connect(dsn, autocommit=True) as admin:
            return admin.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]

    yield ingest
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("DELETE FROM scirag.documents WHERE external_id = 'replica-ledger'")
        lsn = admin.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
    with psycopg.connect(standby_dsn, autocommit=True) as s:
        paused = s.execute("SELECT pg_is_wal_replay_paused()").fetchone()[0]
    if not paused:  # (a paused standby catches up when the `paused` fixture resumes it)
        routing.wait_for_replay(standby_dsn, lsn)


def rows(conn, sql, params=()):
    return conn.execute(sql, params).fetchall()


def timeless(value):
    """A JSON value without its durations (the only thing that differs between two runs)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in ("ms", "total_ms", "seconds")}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# The standby is real, and read-only
# ---------------------------------------------------------------------------


def test_the_standby_is_a_streaming_hot_standby_that_refuses_writes(dsn, standby_dsn):
    with psycopg.connect(standby_dsn, autocommit=True) as s, psycopg.connect(dsn, autocommit=True) as p:
        assert s.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        assert routing.read_only(s) and not routing.read_only(p)
        [(name, state)] = p.execute(
            "SELECT application_name, state FROM pg_stat_replication WHERE application_name = 'pytest_standby'"
        ).fetchall()
        assert state == "streaming"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):  # SQLSTATE 25006
            s.execute("UPDATE scirag.settings SET value = value WHERE key = 'embedding_dim'")
    # a write path pointed at the standby is refused with one line that says what to do
    with pytest.raises(routing.RoutingError, match="hot standby"):
        routing.connect_writer(standby_dsn, role="scirag_loader")


# ---------------------------------------------------------------------------
# Every public reader function: the standby's result is the primary's
# ---------------------------------------------------------------------------

READER_CALLS = [
    ("retrieve interactive", "SELECT * FROM scirag.retrieve(%s, 10)", (QUESTION,)),
    ("retrieve deep", "SELECT * FROM scirag.retrieve(%s, 10, 'deep')", (GRAPH_QUESTION,)),
    ("retrieve interactive-rrf", "SELECT * FROM scirag.retrieve(%s, 10, 'interactive-rrf')", (QUESTION,)),
    (
        "retrieve deep, every stage",
        "SELECT * FROM scirag.retrieve(%s, 8, 'deep', %s)",
        (QUESTION, json.dumps({"mmr": True, "rerank": {"intent_bias": True, "entity_boost": 0.2}})),
    ),
    ("search_vector", "SELECT * FROM scirag.search_vector(scirag.embed_query(%s), 20)", (QUESTION,)),
    ("search_keyword", "SELECT * FROM scirag.search_keyword(%s, 20)", (QUESTION,)),
    ("search_graph", "SELECT * FROM scirag.search_graph(%s, 20)", (GRAPH_QUESTION,)),
    ("search_community", "SELECT * FROM scirag.search_community(scirag.embed_query(%s), 5)", (GRAPH_QUESTION,)),
    ("search_hyde", "SELECT * FROM scirag.search_hyde(%s, 20)", (QUESTION,)),
    ("hyde_passage", "SELECT scirag.hyde_passage(%s)", (QUESTION,)),
    ("classify_intent", "SELECT scirag.classify_intent(%s)", (QUESTION,)),
    ("embed_query", "SELECT scirag.embed_query(%s)::text", (QUESTION,)),
    ("documents_visible", "SELECT * FROM scirag.documents_visible(NULL) ORDER BY document_id", ()),
    ("current_scope", "SELECT scirag.current_scope()", ()),
    ("corpus_fingerprint", "SELECT scirag.corpus_fingerprint()", ()),
    ("eval_scope", "SELECT scirag.eval_scope()", ()),
    ("preset_list", "SELECT * FROM scirag.preset_list()", ()),
    ("answer_text", "SELECT scirag.answer_text(%s, '{}')", (QUESTION,)),
]


@pytest.mark.parametrize("name,sql,params", READER_CALLS, ids=[c[0] for c in READER_CALLS])
def test_reader_function_on_the_standby_returns_the_primarys_rows(readers, name, sql, params):
    primary, standby = readers
    expected = rows(primary, sql, params)
    assert rows(standby, sql, params) == expected
    if name.startswith(("retrieve", "search_", "documents_", "preset_")):
        assert expected, f"{name} returned nothing: the comparison would prove nothing"


def test_chunks_documents_and_citations_on_the_standby_equal_the_primarys(readers):
    primary, standby = readers
    docs = [r[0] for r in rows(primary, "SELECT document_id FROM scirag.documents_visible(NULL)")]
    chunks = [r[1] for r in rows(primary, "SELECT * FROM scirag.retrieve(%s, 10)", (QUESTION,))]
    calls = [("SELECT * FROM scirag.chunk_get(%s)", (c,)) for c in chunks]
    calls += [("SELECT * FROM scirag.chunk_neighbours(%s, 2)", (c,)) for c in chunks]
    calls += [("SELECT * FROM scirag.document_outline(%s)", (d,)) for d in docs]
    calls += [('SELECT * FROM scirag."references"(%s)', (d,)) for d in docs]
    calls += [("SELECT * FROM scirag.cited_by(%s)", (d,)) for d in docs]
    calls += [("SELECT * FROM scirag.entities_visible(NULL)", ())]
    for sql, params in calls:
        assert rows(standby, sql, params) == rows(primary, sql, params), (sql, params)
    assert sum(len(rows(primary, 'SELECT * FROM scirag."references"(%s)', (d,))) for d in docs) > 0


@pytest.mark.parametrize("options", [{}, {"profile": "deep"}], ids=["interactive", "deep"])
def test_answer_on_the_standby_is_the_primarys_and_its_citations_carry_nothing_node_specific(readers, options):
    primary, standby = readers
    a = primary.execute("SELECT scirag.answer(%s, %s)", (QUESTION, json.dumps(options))).fetchone()[0]
    b = standby.execute("SELECT scirag.answer(%s, %s)", (QUESTION, json.dumps(options))).fetchone()[0]
    assert a["citations"] and timeless(b) == timeless(a)
    # a citation names the document and where in it; nothing that names a server or a time
    text = json.dumps(a["citations"])
    assert "pytest_standby" not in text and "lsn" not in text.lower()


def test_a_readers_scope_is_the_same_on_every_node(readers):
    """Scope is session settings checked against replicated role ceilings: the same
    narrowing (and the same refused widening) gives the same scope and rows on both nodes."""
    primary, standby = readers
    for licenses in ("public", "", "public,restricted,unknown"):
        seen = []
        for conn in readers:
            conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
            seen.append(
                (
                    conn.execute("SELECT scirag.current_scope()").fetchone()[0],
                    rows(conn, "SELECT chunk_id, score FROM scirag.retrieve(%s, 10)", (QUESTION,)),
                    rows(conn, "SELECT document_id FROM scirag.documents_visible(NULL)"),
                )
            )
        assert seen[0] == seen[1], licenses
        if licenses == "":
            assert seen[0][1] == [] and seen[0][2] == []  # an empty list means nothing, on both
        if licenses == "public,restricted,unknown":  # the reader's ceiling still applies
            assert "restricted" not in seen[0][0]["licenses"] and "unknown" not in seen[0][0]["licenses"]


def test_doctors_read_only_checks_run_on_the_standby(dsn, standby_dsn):
    with psycopg.connect(dsn) as p, psycopg.connect(standby_dsn) as s:
        on_primary = [f.to_json() for f in run_doctor(p)]
        on_standby = [f.to_json() for f in run_doctor(s)]
    assert not [f for f in on_standby if "failed to run" in f["message"]]
    assert on_standby == on_primary


# ---------------------------------------------------------------------------
# The comparison is meaningful: a standby behind the primary differs
# ---------------------------------------------------------------------------


def test_a_paused_standby_lags_and_catches_up_within_the_measured_lag(dsn, standby_dsn, paused, new_document, readers):
    primary, standby = readers
    lsn = new_document()
    sql = "SELECT external_id FROM scirag.retrieve(%s, 3)"
    assert "replica-ledger" in [r[0] for r in rows(primary, sql, (NEW_QUESTION,))]
    # replay paused: the standby has not seen the commit, and says how far behind it is
    assert "replica-ledger" not in [r[0] for r in rows(standby, sql, (NEW_QUESTION,))]
    status = routing.replica_status(dsn, standby_dsn=standby_dsn)
    [me] = [s for s in status["standbys"] if s["name"] == "pytest_standby"]
    [node] = status["read_nodes"]
    assert node["name"] == "pytest_standby" and node["standby"] and node["replay_lag_bytes"] > 0
    assert me["replay_lag_bytes"] > 0
    with psycopg.connect(standby_dsn, autocommit=True) as s:
        s.execute("SELECT pg_wal_replay_resume()")
    seconds = routing.wait_for_replay(standby_dsn, lsn, timeout=30)
    assert rows(standby, sql, (NEW_QUESTION,)) == rows(primary, sql, (NEW_QUESTION,))
    assert seconds < 30


def test_a_commit_is_retrievable_on_the_standby_within_the_replay_lag(dsn, standby_dsn, new_document, readers):
    primary, standby = readers
    lsn = new_document()
    seconds = routing.wait_for_replay(standby_dsn, lsn, timeout=30)
    sql = "SELECT external_id, chunk_id, score FROM scirag.retrieve(%s, 3)"
    got = rows(standby, sql, (NEW_QUESTION,))
    assert got[0][0] == "replica-ledger" and got == rows(primary, sql, (NEW_QUESTION,))
    print(f"replay of one ingested document took {seconds * 1000:.1f} ms")


# ---------------------------------------------------------------------------
# Routing: the CLI and the server read from SCIRAG_READ_DSN, fall back to the primary
# ---------------------------------------------------------------------------


def cli(env_extra: dict, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update(env_extra, COLUMNS="400")
    return subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)


def test_the_demo_question_through_the_cli_reads_from_the_standby(dsn, standby_dsn, standby):
    on_primary = cli({"SCIRAG_DSN": dsn}, "ask", QUESTION)
    routed = cli({"SCIRAG_DSN": dsn, "SCIRAG_READ_DSN": standby.dsn("postgres")}, "ask", QUESTION)
    assert on_primary.returncode == 0 and routed.returncode == 0, routed.stderr

    def body(out):
        return [line for line in out.splitlines() if not line.startswith("trace:")]

    assert "Harlan County" in on_primary.stdout and body(routed.stdout) == body(on_primary.stdout)


def test_cli_reads_go_to_the_standby_and_fall_back_to_the_primary(dsn, standby, paused, new_document):
    new_document()  # committed on the primary; the standby's replay is paused
    args = ("retrieve", NEW_QUESTION, "-k", "3", "--json")

    def ids(proc):
        assert proc.returncode == 0, proc.stderr
        return [r["title"] for r in json.loads(proc.stdout)]

    primary = ids(cli({"SCIRAG_DSN": dsn}, *args))
    routed = ids(cli({"SCIRAG_DSN": dsn, "SCIRAG_READ_DSN": standby.dsn("postgres")}, *args))
    down = ids(cli({"SCIRAG_DSN": dsn, "SCIRAG_READ_DSN": f"host={standby.folder}/gone port=1 user=postgres"}, *args))
    assert "Quokka pellet ledger" in primary
    assert "Quokka pellet ledger" not in routed  # read on the (paused) standby
    assert down == primary  # no standby answers: the primary does


def test_multi_host_read_dsn_prefers_a_standby(dsn, standby, monkeypatch):
    primary = conninfo_to_dict(dsn)
    monkeypatch.setenv("SCIRAG_DSN", dsn)
    monkeypatch.setenv(
        "SCIRAG_READ_DSN",
        f"host={primary['host']},{standby.folder} port={primary['port']},{standby.port} user=postgres "
        "target_session_attrs=prefer-standby",
    )
    for _ in range(4):  # load-balanced in random order: a standby is chosen every time
        with routing.connect_reader(None, role="scirag_reader", autocommit=True) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True


def test_service_reads_from_the_standby_falls_back_and_healthz_names_the_standby(
    dsn, standby_dsn, paused, new_document
):
    from scirag.server.keys import Identity
    from scirag.server.service import Service

    new_document()
    me = Identity(name="t", role="scirag_reader", byo_llm=False, rate_per_minute=None)

    async def run(read_dsn):
        svc = Service(dsn, read_dsn=read_dsn, min_size=1, max_size=2)
        await svc.open()
        try:
            got = await svc.retrieve(me, NEW_QUESTION, k=3)
            return [r["external_id"] for r in got["results"]], await svc.health()
        finally:
            await svc.close()

    routed, health = asyncio.run(run(standby_dsn))
    fallback, health_down = asyncio.run(run(standby_dsn.replace("pytest_standby", "gone") + " port=1"))
    assert "replica-ledger" not in routed and "replica-ledger" in fallback
    assert health["status"] == "ok" and health["database"] == "ok"
    [me_row] = [s for s in health["standbys"] if s["name"] == "pytest_standby"]
    assert me_row["replay_lag_bytes"] > 0 and "replay_lag_seconds" in me_row
    assert health["read_nodes"][0]["name"] == "pytest_standby" and "host" not in health["read_nodes"][0]
    assert health_down["status"] == "degraded" and health_down["read_nodes"][0]["reachable"] is False


def test_doctor_reports_each_standby_and_its_lag(dsn, standby_dsn):
    status = routing.replica_status(dsn, standby_dsn=standby_dsn, with_hosts=True)
    finding = replica_finding(status)
    assert finding.severity == "ok" and any(s.startswith("pytest_standby: streaming") for s in finding.samples)
    down = routing.replica_status(dsn, standby_dsn=standby_dsn + " port=1")
    assert replica_finding(down).severity == "warning"


def test_the_servers_reader_calls_on_the_standby_equal_the_primarys(dsn, standby_dsn, readers):
    """What /v1/retrieve, /v1/answer, /v1/scope, /v1/chunks and /v1/documents call, served
    by a service whose role pools read from the standby, against one on the primary."""
    from scirag.server.keys import Identity
    from scirag.server.service import Scope, Service

    me = Identity(name="t", role="scirag_reader", byo_llm=False, rate_per_minute=None)
    chunk = rows(readers[0], "SELECT chunk_id FROM scirag.retrieve(%s, 1)", (QUESTION,))[0][0]

    async def calls(read_dsn):
        svc = Service(dsn, read_dsn=read_dsn, min_size=1, max_size=2)
        await svc.open()
        try:
            node = await svc.run(me, [("SELECT pg_is_in_recovery() AS r", None)])
            got = await svc.retrieve(me, QUESTION, k=10, scope=Scope(licenses=["public"]))
            return (
                node[0][0]["r"],
                [timeless(r) for r in got["results"]],
                timeless(await svc.answer(me, QUESTION)),
                await svc.current_scope(me, Scope(licenses=["public"])),
                await svc.chunk(me, chunk, context=2),
                await svc.document(me, "county-straw-2022"),
            )
        finally:
            await svc.close()

    on_standby = asyncio.run(calls(standby_dsn))
    on_primary = asyncio.run(calls(dsn))
    assert on_standby[0] is True and on_primary[0] is False  # each really ran where routed
    assert on_standby[1:] == on_primary[1:] and on_primary[1] and on_primary[4] and on_primary[5]


def test_a_malformed_read_dsn_is_one_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv("SCIRAG_READ_DSN", "host=/tmp port")
    with pytest.raises(routing.RoutingError, match="^SCIRAG_READ_DSN is not a libpq connection string"):
        routing.read_dsn(None)
    monkeypatch.delenv("SCIRAG_READ_DSN")
    assert routing.read_candidates(None) == [db.default_dsn()]  # unset: everything on the primary


def test_ingest_pointed_at_a_standby_is_refused_in_one_line(standby_dsn):
    proc = cli({"SCIRAG_DSN": standby_dsn}, "ingest", str(DEMO_MANIFEST))
    said = " ".join(proc.stderr.replace("│", " ").split())  # (typer draws a box around it)
    assert proc.returncode == 2 and "is a hot standby (read-only): point SCIRAG_DSN" in said
    assert "Traceback" not in proc.stderr


def test_eval_tables_read_the_same_on_the_standby(dsn, standby_dsn):
    """What BI tools read (eval runs, results, answers; as the loader role, under the
    eval policies) is the same on the standby."""
    sqls = [
        "SELECT id, kind, dataset, config_name, metrics, corpus_fingerprint FROM scirag.eval_runs ORDER BY id",
        "SELECT run_id, question_id, metrics FROM scirag.eval_results ORDER BY run_id, question_id",
        "SELECT count(*) FROM scirag.eval_answers",
    ]
    with db.connect(dsn, role="scirag_loader", autocommit=True) as p:
        with db.connect(standby_dsn, role="scirag_loader", autocommit=True) as s:
            for q in sqls:
                assert rows(s, q) == rows(p, q), q
