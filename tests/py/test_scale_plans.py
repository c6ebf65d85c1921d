"""Plan traps on a stock server (issue 12, docs/benchmarks.md).

The project cluster runs with jit = off; a stock server has jit = on, and a query
whose estimated cost passes jit_above_cost is JIT-compiled (tens of ms). These tests
run the layers as a reader with JIT forced for every statement (jit = on, every
jit_*_above_cost = 0) and capture the plan of every nested statement with
auto_explain (log_nested_statements, sent back as NOTICEs): no statement inside a
layer, including the scope functions that row-level security calls, may be compiled.
A control shows the capture does see JIT where it happens. No timing is asserted."""

import json

import psycopg
import pytest

FORCE_JIT = {"jit": "on", "jit_above_cost": "0", "jit_inline_above_cost": "0", "jit_optimize_above_cost": "0"}
STOCK = {
    "jit": "on",
    "jit_above_cost": "100000",
    "jit_inline_above_cost": "500000",
    "jit_optimize_above_cost": "500000",
    "random_page_cost": "4",
    "enable_seqscan": "on",
}


def nested_plans(dsn, sql, params=(), settings=FORCE_JIT, role="scirag_reader"):
    """Runs sql as role and returns the JSON plan of every statement it ran, nested ones included."""
    notices = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        conn.execute("LOAD 'auto_explain'")  # superuser-only, as are its settings: before SET ROLE
        for k, v in {
            "log_min_duration": "0",
            "log_nested_statements": "on",
            "log_analyze": "on",
            "log_timing": "off",
            "log_format": "json",
            "log_level": "notice",
        }.items():
            conn.execute(f"SET auto_explain.{k} = '{v}'")
        for k, v in settings.items():
            conn.execute(f"SET {k} = '{v}'")
        conn.execute(f"SET ROLE {role}")
        conn.execute(sql, params).fetchall()
    plans = []
    for n in notices:
        if "plan:" in n:
            plans.append(json.loads(n.split("plan:", 1)[1]))
    return plans


def jitted(plans):
    return [p for p in plans if "JIT" in p]


def node_names(plan):
    """Every (node type, index name) pair in a plan tree."""
    out, todo = [], [plan["Plan"]]
    while todo:
        n = todo.pop()
        out.append((n.get("Node Type"), n.get("Index Name")))
        todo.extend(n.get("Plans", []))
    return out


def query_vector(conn):
    return conn.execute(
        "SELECT embedding::text FROM scirag.chunks WHERE embedding IS NOT NULL ORDER BY id LIMIT 1"
    ).fetchone()[0]


def test_capture_sees_jit_where_it_happens(dsn, demo_corpus):
    """Control: the same capture reports JIT for a plain statement under forced JIT."""
    plans = nested_plans(
        dsn, "SELECT count(*) FROM scirag.chunks", role="scirag_loader"
    )  # readers may not (reader_wall)
    assert plans and jitted(plans), "auto_explain capture must show JIT for a plain query with jit_above_cost 0"


@pytest.mark.parametrize("layer", ["keyword", "vector"])
def test_layers_never_jit_compile(dsn, demo_corpus, admin_conn, layer):
    vec = query_vector(admin_conn)
    sql, params = {
        "keyword": ("SELECT * FROM scirag.search_keyword(%s, 100)", ("straw yield of barley in the county",)),
        "vector": ("SELECT * FROM scirag.search_vector(%s::public.vector, 100)", (vec,)),
    }[layer]
    plans = nested_plans(dsn, sql, params)
    nested = [p for p in plans if "scirag.chunks" in p.get("Query Text", "") or "kw_" in p.get("Query Text", "")]
    assert nested, f"{layer}: the capture must include the layer's own statements"
    # the outer SELECT (the test's own statement) may compile; nothing inside the layer may
    inner = [
        p for p in plans if not p.get("Query Text", "").lstrip().upper().startswith("SELECT * FROM SCIRAG.SEARCH_")
    ]
    assert not jitted(inner), f"{layer}: JIT inside the layer: {[p['Query Text'][:120] for p in jitted(inner)]}"


def test_interactive_retrieve_under_stock_settings_does_not_jit(dsn, demo_corpus, admin_conn):
    """A stock server's default thresholds: no statement under scirag.retrieve (interactive,
    embedding passed in) is expensive enough to be compiled."""
    vec = query_vector(admin_conn)
    plans = nested_plans(
        dsn,
        "SELECT * FROM scirag.retrieve(%s, 10, query_embedding => %s::public.vector)",
        ("barley straw ash content", vec),
        settings=STOCK,
    )
    assert len(plans) > 5
    assert not jitted(plans), f"JIT under stock settings: {[p['Query Text'][:120] for p in jitted(plans)]}"


def test_layer_functions_carry_their_settings(admin_conn):
    """The settings a layer needs are on the function, and none of them disables a plan
    type (an enable_* setting would leak into the scope functions RLS calls)."""
    rows = dict(
        admin_conn.execute(
            "SELECT proname, proconfig FROM pg_proc WHERE pronamespace = 'scirag'::regnamespace "
            "AND proname IN ('search_vector', 'search_keyword')"
        ).fetchall()
    )
    for name in ("search_vector", "search_keyword"):
        assert "jit=off" in rows[name], name
        assert not [c for c in rows[name] if c.startswith("enable_")], name


def test_vector_layer_walks_hnsw_on_a_few_thousand_chunks(dsn, demo_corpus, admin_conn, restore_corpus):
    """Under default planner settings, with row-level security, the dense layer's query
    uses the HNSW index once the table has a few thousand chunks (a sequential scan plus
    sort was 10x slower at 5k)."""
    dim = int(admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])
    admin_conn.execute("SELECT setseed(0.25)")
    admin_conn.execute(
        "INSERT INTO scirag.documents (external_id, title, license, source, content_hash) "
        "VALUES ('plan-bulk', 'bulk', 'public', 'plan_test', md5('plan-bulk'))"
    )
    admin_conn.execute(
        f"""INSERT INTO scirag.chunks (document_id, ordinal, kind, level, content, token_count, license, source,
                                       embedding, embedding_version)
            SELECT d.id, i, 'prose', 1, 'bulk chunk ' || i, 3, 'public', 'plan_test',
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, {dim}) WHERE i > 0)::public.vector, 'test'
            FROM scirag.documents d, generate_series(1, 3000) AS i WHERE d.external_id = 'plan-bulk'"""
    )
    admin_conn.execute("ANALYZE scirag.chunks")
    vec = query_vector(admin_conn)
    plans = nested_plans(dsn, "SELECT * FROM scirag.search_vector(%s::public.vector, 100)", (vec,), settings=STOCK)
    walks = [p for p in plans if "ORDER BY c.embedding OPERATOR(public.<=>) $1" in p.get("Query Text", "")]
    assert walks, "the dense layer's nearest-neighbour statement was not captured"
    assert ("Index Scan", "chunks_embedding_hnsw") in node_names(walks[0]), node_names(walks[0])
    assert not jitted(plans)


def test_deep_retrieve_under_stock_settings_does_not_jit(dsn, demo_corpus, admin_conn):
    """The deep profile's layers too (the graph layer's question matcher was planned at ~1e7
    and compiled: 800 ms instead of 2, until functions/search_graph set jit = off)."""
    vec = query_vector(admin_conn)
    plans = nested_plans(
        dsn,
        "SELECT * FROM scirag.retrieve(%s, 10, 'deep', query_embedding => %s::public.vector)",
        ("barley straw ash content", vec),
        settings=STOCK,
    )
    assert len(plans) > 5
    assert not jitted(plans), f"JIT under stock settings: {[p['Query Text'][:120] for p in jitted(plans)]}"
