"""Connections, roles and schema deployment for the scirag CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

# The project checkout (sqitch.plan, sql/, the cluster folder). From the source tree it
# sits three folders up; a non-editable install lives in site-packages, so there
# scripts/env.sh's SCIRAG_ROOT names it.
ROOT = Path(os.environ.get("SCIRAG_ROOT") or Path(__file__).resolve().parents[3])
DEFAULT_DB = os.environ.get("SCIRAG_DB", "scirag")
EMBED_DIM = int(os.environ.get("SCIRAG_EMBED_DIM", "384"))
LOADER_ROLE = os.environ.get("SCIRAG_LOADER_ROLE", "scirag_loader")
READER_ROLE = os.environ.get("SCIRAG_ROLE", "scirag_reader")


class ScopeError(RuntimeError):
    """The connection cannot act as the scirag role it needs."""


def default_dsn(dbname: str | None = None) -> str:
    """SCIRAG_DSN, else the PG* variables, else the embedded project cluster."""
    if os.environ.get("SCIRAG_DSN"):
        dsn = os.environ["SCIRAG_DSN"]
        return make_conninfo(dsn, dbname=dbname) if dbname else dsn
    if os.environ.get("PGHOST"):
        return make_conninfo("", dbname=dbname or os.environ.get("PGDATABASE", DEFAULT_DB))
    pgdir = os.environ.get("SCIRAG_PGDIR", str(ROOT / ".pgdata"))
    return make_conninfo(
        host=pgdir, port=os.environ.get("SCIRAG_PGPORT", "54329"), user="postgres", dbname=dbname or DEFAULT_DB
    )


def with_dbname(dsn: str, dbname: str) -> str:
    return make_conninfo(dsn, dbname=dbname)


def benchmark_dsn(dsn: str | None, dbname: str) -> str:
    """The database a benchmark loads into: a --dsn that names a database is taken as
    given; otherwise the benchmark gets a database of its own (dbname) on that server,
    or on the default one, so benchmark corpora never mix with the user's papers."""
    if dsn and conninfo_to_dict(dsn).get("dbname"):
        return dsn
    return with_dbname(dsn or default_dsn(), dbname)


def connect(dsn: str | None = None, role: str | None = None, autocommit: bool = False) -> psycopg.Connection:
    """Connect and, when asked, act as a scirag group role (SET ROLE), so row-level
    security applies even when the login is a superuser."""
    conn = psycopg.connect(dsn or default_dsn(), autocommit=autocommit)
    if role:
        member = conn.execute("SELECT pg_has_role(session_user, %s, 'MEMBER')", (role,)).fetchone()[0]
        if not member:
            conn.close()
            raise ScopeError(f"login role cannot act as {role}: GRANT {role} TO <your login role> first")
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        if not autocommit:
            conn.commit()
    return conn


# What a load writes, and what the planner must know the size and spread of: without
# fresh statistics keyword search over a just-loaded corpus plans as if the tables were
# empty (1-1.4 s a query on SciFact instead of 24-93 ms, until autovacuum comes by).
LOADED_TABLES = ("documents", "chunks", "kw_postings", "kw_blocks", "kw_term_stats", "kw_class_stats")


def finish_load(conn: psycopg.Connection) -> None:
    """After a load, as the loader: fresh BM25 postings into blocks (keyword search
    prunes over blocks only), then planner statistics for what the load wrote.

    ANALYZE needs the tables' owner, which the loader role is not: a login that may act
    as scirag_owner (a superuser, or a member) runs it in that role for this statement
    only; any other login leaves it to autovacuum and says so."""
    conn.execute("SELECT scirag.kw_compact()")
    conn.commit()
    role = conn.execute("SELECT current_user").fetchone()[0]
    if not conn.execute("SELECT pg_has_role(session_user, 'scirag_owner', 'MEMBER')").fetchone()[0]:
        echo("planner statistics left to autovacuum: this login may not act as scirag_owner to ANALYZE")
        return
    conn.execute("SET ROLE scirag_owner")
    try:
        conn.execute("ANALYZE " + ", ".join(f"scirag.{t}" for t in LOADED_TABLES))
    finally:
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    conn.commit()


def python_path() -> str:
    """Folders the server adds to sys.path: the venv's site-packages and python/plpy_helpers."""
    site = sysconfig.get_paths()["purelib"]
    return ":".join([site, str(ROOT / "python" / "plpy_helpers")])


def libpq_env(dsn: str) -> dict[str, str]:
    """The DSN as libpq variables, for tools that take no conninfo string (sqitch, pg_prove)."""
    names = {
        "host": "PGHOST",
        "port": "PGPORT",
        "user": "PGUSER",
        "password": "PGPASSWORD",
        "dbname": "PGDATABASE",
        "sslmode": "PGSSLMODE",
    }
    return {names[k]: str(v) for k, v in conninfo_to_dict(dsn).items() if k in names and v}


def plan_file() -> Path:
    """ROOT's sqitch.plan, or an error that says how to point scirag at the checkout."""
    plan = ROOT / "sqitch.plan"
    if not plan.is_file():
        raise RuntimeError(
            f"no sqitch.plan under {ROOT}: set SCIRAG_ROOT to the scirag checkout "
            "(scripts/env.sh does) when scirag is installed outside it"
        )
    return plan


def sqitch(action: str, dsn: str, *args: str) -> str:
    """Runs sqitch against the database named by dsn (through libpq variables); returns its output."""
    plan_file()
    exe = shutil.which("sqitch")
    if not exe:
        raise RuntimeError("sqitch is not installed: run scripts/install_system.sh")
    params = conninfo_to_dict(dsn)
    env = {**os.environ, **libpq_env(dsn)}
    target = "db:pg:" + params.get("dbname", DEFAULT_DB)
    cmd = [exe, action, *args, target]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0 and "Nothing to deploy" not in proc.stdout:
        raise RuntimeError(f"sqitch {action} failed for {target}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def deployed_changes(sqitch_output: str) -> list[str]:
    """Names of the changes a successful `sqitch deploy` run applied ("  + functions/answer .. ok").

    A deploy script's own output can land between a name and its "ok", so only the
    "  + " prefix is read; a failed deploy raises in sqitch() before this is called."""
    return [line.split()[1] for line in sqitch_output.splitlines() if line.startswith("  + ")]


def drop_db(dsn: str) -> None:
    """Drops the database named by dsn (closing its connections) if it exists."""
    dbname = conninfo_to_dict(dsn).get("dbname", DEFAULT_DB)
    with psycopg.connect(with_dbname(dsn, "postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))


def init_db(dsn: str, dim: int = EMBED_DIM) -> list[str]:
    """Creates the database if missing, deploys the Sqitch plan and points PL/Python at the venv.

    Returns the changes this call deployed (none when the schema was up to date)."""
    params = conninfo_to_dict(dsn)
    dbname = params.get("dbname", DEFAULT_DB)
    with psycopg.connect(with_dbname(dsn, "postgres"), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    # An older database gets exactly the changes it lacks (reworked functions included),
    # and the user is told which: "Nothing to deploy" must never hide a stale schema.
    applied = deployed_changes(sqitch("deploy", dsn, "--set", f"dim={dim}"))
    if applied:
        echo(f"{dbname}: deployed {len(applied)} change(s): {', '.join(applied)}")
    else:
        echo(f"{dbname}: schema up to date ({plan_head()})")
    with psycopg.connect(dsn) as conn:
        deployed = int(conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])
        if deployed != dim:
            raise RuntimeError(
                f"database {dbname} was deployed with embedding dimension {deployed}, "
                f"but SCIRAG_EMBED_DIM is {dim}: use another database or re-deploy"
            )
        conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'python_path'", (python_path(),))
        # Privileges are the plan's (policies/function_privileges and each script's grants).
    return applied


def plan_head() -> str:
    """The newest tag of sqitch.plan and the number of changes after it, e.g. '@v1.0 + 6 changes'."""
    tag, after = None, 0
    for line in plan_file().read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("%", "#")):
            continue
        if line.startswith("@"):
            tag, after = line.split()[0], 0
        else:
            after += 1
    return f"{tag or 'untagged'} + {after} change(s)"


def echo(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
