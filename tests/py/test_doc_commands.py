"""Every shell command and SQL block shown in README.md and docs/*.md is run as written (issue 25), or
skipped by one of the rules in SKIPPED below, each with its reason (pytest -rs lists every
skipped command with its rule; pyproject.toml turns -rs on).

The commands of a page run in the page's order, through bash, in a scratch copy of the
checkout (links to its folders; ../shared beside it) with HOME set to a scratch home, so
`~/papers` is a real folder and nothing a command writes lands in the checkout. Each page
gets its own database, a copy of one loaded with the demo corpus, named by SCIRAG_DSN.
What a page's commands need and the page does not show is made first and declared here:
FILES (files a command names), SETUP (commands run before the page), PLACEHOLDERS (a word
of the page that stands for a value). `.venv/bin/scirag serve` and `mcp` keep running: the
test waits until they answer (GET /healthz; an MCP initialize), then stops them at the
page's end. A command passes when it exits with 0 (or the `exit status N` its comment
states), prints no traceback, and prints what EXPECT says where it says something."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import psycopg
import pytest

from conftest import DEMO_MANIFEST, PYTEST_DB, ROOT
from doc_commands import DocCommand, doc_commands

LONG = "long run (minutes or more: a benchmark, an evaluation over a shared data set, training); its figures are in the page"
SKIPPED: list[tuple[str, list[str]]] = [
    (
        "the test runner itself (CI runs it: .ci/run)",
        [r"^scripts/test\.sh\b", r"python -m pytest\b"],
    ),
    (
        "sets up the project cluster and loads the demo database `scirag` (scripts/setup.sh; this suite's own set-up)",
        [r"^scripts/demo\.sh\b"],
    ),
    ("starts or stops the cluster this suite runs on", [r"^scripts/db_st(art|op)\.sh\b"]),
    (
        "network: OpenAlex, Crossref, arXiv, Unpaywall and the PDFs' hosts (tests/py/test_campaign.py runs these "
        "commands against a local server with recorded responses)",
        [r"campaign (discover|resolve|fetch) "],
    ),
    (
        "needs what a networked campaign step brings (records 17 and 18, the fetched PDFs)",
        [
            r"campaign screen .* --decide 17=include",
            r"campaign assess .* --decide 17=eligible",
            r"ingest campaigns/1-straw-ash/manifest\.jsonl",
        ],
    ),
    ("needs a model provider and its API key", [r"^SCIRAG_LLM_PROVIDER=google "]),
    (
        "points the server at the model folder that the (long, skipped) training commands before it build",
        [r"SET value = '\$PWD/build/reranker-sf'"],
    ),
    (
        LONG,
        [
            r"scripts/bench_",
            r"scripts/train_answerer\.py",
            r"scripts/train_query_adapter\.py",
            r"scripts/install_train\.sh",
            r"scripts/train_reranker\.py",
            r"scirag eval (beir|scitab) /tmp/scirag-views",
            r"scripts/tune_reranker_blend\.py",
            r"scripts/tune_reranker_length\.py",
            r"scripts/tune_screening\.py",
            r"scirag eval (beir|scitab|qasper|screening) \.\./shared",
            r"scirag eval answer --dataset pubmedqa",
            r"scirag eval answer --dsn \"\$(PAPERS|P)\"",
            r"^P=\"host=",
            r"scirag db init --dsn \"\$P\" && ",
            r"scripts/sim_bm25_shards\.py",
        ],
    ),
    (
        "a synopsis: UPPER-CASE placeholders, [optional] parts or `...` values "
        "(tests/py/test_cli_docs.py checks that its options exist)",
        [
            r"^\.venv/bin/scirag (db init \[|ingest PATH\.\.\.|retrieve \"question\"|eval beir DIR|eval pdf FOLDER)",
            r"password=\.\.\.",
            r"RETURNS TABLE \(chunk_id",  # graph.md: the functions' signatures
            r"mmr_select\(ids, scores",  # retrieval.md: the deep stages with `ids`, `ARRAY[...]`
        ],
    ),
    (
        "a streaming standby or a Patroni cluster (etcd, Patroni; tests/py/test_replica_standby.py builds its own "
        "standby, scripts/failover_test.py its own cluster)",
        [
            r"^PG=/usr/lib/postgresql/15/bin; ",
            r"^mkdir -p \"\$SCIRAG_ROOT/\.replicas\"",
            r"pg_basebackup",
            r"^rm -f \"\$S\"/\.s\.PGSQL",
            r"^cat >> \"\$S/postgresql\.auto\.conf\"",
            r"pg_ctl -D \"\$S\"",
            r"^export SCIRAG_(READ_)?DSN=\"host=\$SCIRAG_",
            r"# answered by the standby",
            r"# role pools on the standby",
            r"scripts/cluster_(up|down)\.sh",
            r"^patronictl ",
            r"scripts/failover_test\.py",
        ],
    ),
]

PAPER = (
    "# PonderNet: Learning to Ponder\n\nPonderNet halts with a halting probability lambda_n at each step n; "
    "the halting probability of the prior is 0.1 in the parity task.\n"
)
HALTING_V1 = "# Halting in Depth\n\nA network may stop early. The halting step is chosen by a coin with p = 0.2.\n"
ATTENTION_V1 = "Attention is all you need: a transformer reaches 28.4 BLEU on WMT 2014 English-German."
ATTENTION_V2 = "Attention is all you need (v2): a transformer reaches 28.4 BLEU and 41.8 BLEU on English-French."

# Files a page's commands name: "~/" is the scratch home, anything else the scratch checkout.
FILES: dict[str, dict[str, str]] = {
    "README.md": {
        "~/papers/ponder.md": PAPER,
        "~/papers/halting.md": HALTING_V1,
        "v2.jsonl": json.dumps(
            {"id": "halting", "text": HALTING_V1 + "\nVersion 2 adds a second coin.\n", "format": "markdown"}
        ),
    },
    "docs/library.md": {
        "~/papers/ponder.md": PAPER,
        "papers/attention.jsonl": json.dumps({"id": "attention", "text": ATTENTION_V1, "license": "public"}),
        "corrected.jsonl": json.dumps(
            {"id": "attention", "text": ATTENTION_V1, "license": "public", "title": "Attention Is All You Need"}
            | {"year": 2017}
        ),
        "papers/attention-v2.jsonl": json.dumps({"id": "attention", "text": ATTENTION_V2, "license": "public"}),
    },
}
# Commands run before a page's own (what the page takes as done before it).
SETUP: dict[str, list[str]] = {
    "docs/library.md": [".venv/bin/scirag ingest papers/attention.jsonl"],
    "docs/maintenance.md": [".venv/bin/scirag graph extract"],  # "On the demo corpus (... graph extract done)"
    "docs/threat-model.md": [".venv/bin/scirag graph extract"],  # entities_visible(ARRAY[1, 2]): graph entities
    # $KEY of the curl example: a key of its own, so the page's `keys revoke alice` leaves it alone
    "docs/server.md": ["KEY=$(.venv/bin/scirag keys add doc-test --role scirag_reader)"],
}
# (page, a word of the page as a regular expression, what it stands for)
PLACEHOLDERS: list[tuple[str, str, str]] = [
    ("README.md", r"\bID\b", "ponder"),  # README: `docs set ID ...`: the id of ~/papers/ponder.md
    ("docs/retrieval.md", r"dbname=scirag\"", 'dbname={db}"'),  # psql: the page's database, not the demo one
    ("docs/releasing.md", r"SCIRAG_PGPORT=54329\b", "SCIRAG_PGPORT={port}"),  # "your cluster's port"
    ("docs/testing.md", r"SCIRAG_PGPORT=54329\b", "SCIRAG_PGPORT={port}"),
    ("docs/releasing.md", r"\bNAME(?=\\\()", "retrieve"),  # prose: grep ... "scirag.NAME\(": a function's name
]
# (page, command as a regular expression) -> what its output (stdout + stderr) must contain
EXPECT: dict[tuple[str, str], str] = {
    ("README.md", r"^\.venv/bin/scirag ingest ~/papers"): r"2 added, 0 duplicate, 0 failed",
    ("README.md", r"docs set ponder --year 2017"): r"updated ponder \(id \d+\): year",
    ("README.md", r"docs rm ponder --yes"): r"deleted",
    ("README.md", r"ingest v2\.jsonl --replace"): r"halting: replaced",
    ("README.md", r"keys add alice"): r"scirag_\S{20,}",
    ("docs/library.md", r"docs show pellet-trial"): r"pellet",
    ("docs/library.md", r"--license CC-BY"): r"open_commercial",
    ("docs/library.md", r"ingest corrected\.jsonl"): r"attention: updated \(metadata corrected: title, year\b",
    ("docs/library.md", r"attention-v2\.jsonl --replace"): r"attention: replaced",
    ("docs/library.md", r"--jobs 1"): r"1 skipped",
    ("docs/library.md", r"--reparse-all"): r"1 duplicate",
    ("docs/maintenance.md", r"enrich --replay"): r"1 retracted",
    ("docs/maintenance.md", r"^\.venv/bin/scirag retractions"): r"rice-burning",
    ("docs/answers-and-evaluation.md", r"scirag ask \"How much straw"): r"120,320 t(.|\n)*Abstract, line 9, doi",
    ("docs/graph.md", r"graph search"): r"county-straw-2022|Harlan",
    ("docs/retrieval.md", r"preset show high-recall"): r"\{",
    ("docs/server.md", r"keys list"): r"alice",
    ("docs/server.md", r"^curl "): r"120,320",
}


def skip_rules(cmd: DocCommand) -> list[str]:
    return [reason for reason, patterns in SKIPPED for p in patterns if re.search(p, cmd.text)]


def skip_rule(cmd: DocCommand) -> str | None:
    hits = skip_rules(cmd)
    return hits[0] if hits else None


ALL = doc_commands()
RUN = [c for c in ALL if skip_rule(c) is None]
RUN_PAGES = sorted({c.page for c in RUN}, key=lambda p: (p != "README.md", p))


def test_commands_are_found_and_every_rule_is_used():
    pages = {c.page for c in ALL}
    assert "README.md" in pages and len(pages) >= 12, pages
    assert len(ALL) >= 120 and len(RUN) >= 50, (len(ALL), len(RUN))
    for c in ALL:
        assert len(skip_rules(c)) <= 1, f"{c}: matched by more than one rule: {skip_rules(c)}"
    for reason, patterns in SKIPPED:  # a rule no command needs any more is stale
        for p in patterns:
            assert any(re.search(p, c.text) for c in ALL), f"skip rule {p!r} ({reason[:40]}...) matches no command"
    for (page, pattern), _ in EXPECT.items():
        assert any(c.page == page and re.search(pattern, substituted(c, "db")) for c in RUN), (page, pattern)
    for page in FILES.keys() | SETUP.keys():
        assert page in RUN_PAGES, page


def test_extraction_joins_continuations_here_documents_and_transcripts(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```bash\n# a comment\n.venv/bin/scirag retrieve \\\n  'q' -k 3   # note\ncat > f <<EOF\n"
        "a = 1\nEOF\nscripts/x.sh\n```\n\n```\n$ .venv/bin/scirag doctor   # exit status 1\noutput\n```\n"
        "\n```sql\nSELECT 1;\n```\n",
        encoding="utf-8",
    )
    found = doc_commands([page])
    assert [(c.line, c.text) for c in found] == [
        (5, ".venv/bin/scirag retrieve \\\n  'q' -k 3   # note"),
        (7, "cat > f <<EOF\na = 1\nEOF"),
        (10, "scripts/x.sh"),
        (14, ".venv/bin/scirag doctor   # exit status 1"),
        (19, "SELECT 1;"),
    ]
    assert [c.expected_status for c in found] == [0, 0, 0, 1, 0]
    assert [c.lang for c in found] == ["bash"] * 4 + ["sql"] and found[-1].statements() == ["SELECT 1"]
    assert found[0].code == ".venv/bin/scirag retrieve \\\n  'q' -k 3"


@pytest.mark.parametrize(
    "cmd",
    [
        pytest.param(c, marks=pytest.mark.skip(reason=f"{c}  [rule: {skip_rule(c)}]"), id=f"{c.page}:{c.line}")
        for c in ALL
        if skip_rule(c)
    ],
)
def test_skipped_doc_command(cmd):
    raise AssertionError("never runs: each parameter is skipped with its rule")  # pragma: no cover


# ---------------------------------------------------------------------------
# Running a page
# ---------------------------------------------------------------------------


def substituted(cmd: DocCommand, db: str, port: str = "5432") -> str:
    code = cmd.code
    for page, pattern, value in PLACEHOLDERS:
        if page == cmd.page:
            code = re.sub(pattern, value.format(db=db, port=port), code)
    return code


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def template_db(base_dsn, embedder):
    """A deployed database with the demo corpus, copied (CREATE DATABASE ... TEMPLATE) for each page."""
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    target = db.with_dbname(base_dsn, f"{PYTEST_DB}_docs_template")
    db.drop_db(target)
    db.init_db(target)
    with db.connect(target, role="scirag_loader") as conn:
        ingest_manifest(conn, DEMO_MANIFEST, Ingester(conn, embedder=embedder))
    yield target
    db.drop_db(target)


@pytest.fixture
def page_db(base_dsn, template_db):
    from scirag import db

    name = f"{PYTEST_DB}_docs_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(db.with_dbname(base_dsn, "postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{psycopg.conninfo.conninfo_to_dict(template_db)["dbname"]}"')
    target = db.with_dbname(base_dsn, name)
    yield target
    db.drop_db(target)


def scratch_checkout(tmp: Path, dsn: str) -> tuple[Path, Path]:
    """(checkout, home): links to the checkout's entries (not its database folder or
    what commands write), the shared data beside it, and .pgdata linked to the socket
    folder of the server the suite uses (so `$PWD/.pgdata` in a page means that server)."""
    repo, home = tmp / "repo", tmp / "home"
    repo.mkdir(parents=True)
    home.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git", ".pgdata", "campaigns", "reports", ".replicas", ".cluster"):
            (repo / entry.name).symlink_to(entry)
    if (ROOT.parent / "shared").exists():
        (tmp / "shared").symlink_to(ROOT.parent / "shared")
    host = psycopg.conninfo.conninfo_to_dict(dsn).get("host", "")
    if host.startswith("/"):
        (repo / ".pgdata").symlink_to(host)
    return repo, home


def write_files(page: str, repo: Path, home: Path) -> None:
    for name, content in FILES.get(page, {}).items():
        target = home / name[2:] if name.startswith("~/") else repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content + ("" if content.endswith("\n") else "\n"), encoding="utf-8")


def wait_http(url: str, proc: subprocess.Popen, seconds: float = 90) -> str | None:
    """None once url answers 200, else why not (the server exited, or the time ran out)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"exited with {proc.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return None
        except OSError:
            pass
        time.sleep(0.5)
    return f"no answer from {url} in {seconds:.0f} s"


def mcp_initialize(proc: subprocess.Popen, seconds: float = 90) -> str:
    """Sends an MCP initialize request over stdio; returns the first line of the answer."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "doc-test", "version": "0"},
        },
    }
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    return proc.stdout.readline() if ready else ""


def run_sql(cmd: DocCommand, dsn: str) -> list[str]:
    """A SQL block's statements in one session (as psql runs them); each SELECT must return rows."""
    stmt = ""
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for stmt in cmd.statements():
                cur = conn.execute(stmt)
                if stmt.upper().startswith("SELECT"):
                    rows = cur.fetchall()
                    if not rows or rows[0][0] is None:
                        return [f"{cmd}: `{stmt[:100]}` returned no rows"]
    except psycopg.Error as exc:
        return [f"{cmd}: `{stmt[:100]}` failed: {str(exc).strip()[:500]}"]
    return []


def page_environment(page: str, dsn: str, tmp: Path) -> tuple[Path, dict, int]:
    """(scratch checkout, environment, server port) of a page, its files made and SETUP run."""
    repo, home = scratch_checkout(tmp, dsn)
    write_files(page, repo, home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    port = free_port()
    env.update(
        SCIRAG_DSN=dsn,
        HOME=str(home),
        COLUMNS="120",
        SCIRAG_PORT=str(port),
        SCIRAG_PGPORT=str(psycopg.conninfo.conninfo_to_dict(dsn).get("port", "5432")),
    )
    for line in SETUP.get(page, []):
        proc = subprocess.run(
            ["bash", "-c", f"set -aeo pipefail; {line}; env -0"], cwd=repo, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, f"{page}: set-up {line!r} failed: {proc.stderr[-2000:]}"
        # a set-up line may define a variable the page uses ($KEY)
        env.update(dict(item.split("=", 1) for item in proc.stdout.split("\0") if "=" in item and item[:1].isupper()))
    return repo, env, port


def start_server(cmd: DocCommand, code: str, repo: Path, env: dict, port: int) -> tuple[subprocess.Popen, str | None]:
    """`scirag serve` / `scirag mcp` left running: the process, and why it failed (None: it answered)."""
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {code}"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if " serve" in code:
        why = wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        return proc, (f"{cmd}: the server did not come up: {why}" if why else None)
    answer = mcp_initialize(proc)
    return proc, (None if '"serverInfo"' in answer else f"{cmd}: no MCP initialize result over stdio: {answer[:300]!r}")


def stop(proc: subprocess.Popen) -> None:
    if proc.stdin:
        proc.stdin.close()
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_command(page: str, cmd: DocCommand, code: str, repo: Path, env: dict) -> list[str]:
    """One shell command through bash: its exit status, no traceback, what EXPECT says."""
    try:
        proc = subprocess.run(
            ["bash", "-c", f"set -o pipefail\n{code}"],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return [f"{cmd}: still running after 600 s"]
    out = proc.stdout + proc.stderr
    if proc.returncode != cmd.expected_status:
        return [f"{cmd}: exit status {proc.returncode}, not {cmd.expected_status}: {out[-1500:]}"]
    if "Traceback (most recent call last)" in out:
        return [f"{cmd}: printed a traceback: {out[-1500:]}"]
    return [
        f"{cmd}: output lacks /{want}/: {out[-1500:]}"
        for (p, pattern), want in EXPECT.items()
        if p == page and re.search(pattern, code) and not re.search(want, out)
    ]


def run_page(page: str, commands: list[DocCommand], dsn: str, tmp: Path) -> list[str]:
    """Runs a page's commands in order; returns one line per failure (empty: all passed)."""
    repo, env, port = page_environment(page, dsn, tmp)
    if any(c.lang == "inline" for c in commands):  # prose says `scirag ...`: the venv's, as once activated
        env["PATH"] = f"{repo / '.venv' / 'bin'}:{env.get('PATH', '')}"
    failures, background = [], []
    try:
        for cmd in commands:
            if cmd.lang == "sql":
                failures += run_sql(cmd, dsn)
                continue
            code = substituted(cmd, psycopg.conninfo.conninfo_to_dict(dsn)["dbname"], env["SCIRAG_PGPORT"])
            # the block's earlier `export`/`source`/assignment lines, as one shell would have kept them
            kept = [
                substituted(c, "", env["SCIRAG_PGPORT"])
                for c in commands[: commands.index(cmd)]
                if c.block == cmd.block and c.sets_variables
            ]
            code = "\n".join([*kept, code])
            if re.match(r"^(\.venv/bin/)?scirag (serve|mcp)\b", code):
                proc, why = start_server(cmd, code, repo, env, port)
                background.append(proc)
                failures += [why] if why else []
            else:
                failures += run_command(page, cmd, code, repo, env)
    finally:
        for proc in background:
            stop(proc)
    return failures


@pytest.mark.parametrize("page", RUN_PAGES)
def test_doc_commands_run_as_written(page, page_db, tmp_path):
    failures = run_page(page, [c for c in RUN if c.page == page], page_db, tmp_path)
    assert not failures, "\n".join(failures)


def test_a_wrong_command_in_a_page_is_a_failure(page_db, tmp_path):
    """The runner has teeth: a misspelt command, a wrong option and a missing output fail."""
    page = tmp_path / "page.md"
    page.write_text(
        '```bash\nexport DOCVAR=kept\n[ "$DOCVAR" = kept ]\n.venv/bin/scirag docs lst\n.venv/bin/scirag docs list --colour\n'
        ".venv/bin/scirag docs show pellet-trial\n.venv/bin/scirag doctor   # exit status 1\n```\n"
        "```sql\nSET ROLE scirag_reader;\nSELECT * FROM scirag.documents_visible('no-such-document');\n```\n"
        "```sql\nSELECT * FROM scirag.no_such_function();\n```\n",
        encoding="utf-8",
    )
    commands = doc_commands([page])
    EXPECT[("page.md", r"docs show pellet-trial")] = r"no such text anywhere"
    try:
        failures = run_page("page.md", commands, page_db, tmp_path / "run")
    finally:
        del EXPECT[("page.md", r"docs show pellet-trial")]
    assert len(failures) == 6, failures
    assert "docs lst: exit status 2" in failures[0]
    assert "--colour: exit status 2" in failures[1]
    assert "lacks /no such text anywhere/" in failures[2]
    assert "doctor   # exit status 1" not in failures[3] and "exit status 0, not 1" in failures[3]
    assert "documents_visible('no-such-document')` returned no rows" in failures[4]
    assert "no_such_function()` failed: function scirag.no_such_function() does not exist" in failures[5]
