"""Saying what a caller cannot see, without revealing it.

A document outside the caller's scope is invisible by design (row-level security), so
an empty answer can mean "nothing relevant" or "relevant, but not yours to see". The
hints below tell the two audiences what they may know:

- a reader learns only about its own rights (its effective licenses and its ceiling):
  the hint is the same whatever the corpus holds, so it never reveals that, or how
  many, documents lie outside the scope;
- the CLI's own administrator (a login that is a superuser or a member of the loader
  role, who could read every row anyway) gets the license classes stored outside the
  scope with their counts, and the exact role and setting that would search them.
"""

from __future__ import annotations

import shlex

import psycopg
from psycopg import sql

from scirag import db, routing
from scirag.ingest.licenses import LICENSES as ALL_LICENSES


def unknown_license_warning(count: int) -> str | None:
    """The one-per-run ingest warning for documents stored with license 'unknown'."""
    if count <= 0:
        return None
    return (
        f"warning: {count} document(s) of this run are stored with license 'unknown' (no manifest line or "
        "--license stated their rights). Readers do not see them: the default scope is public,open_commercial and "
        "unknown is never external-safe. To make them visible, either\n"
        "  - state their rights: re-run the same command with --license public|open_commercial|"
        'open_noncommercial|restricted (or a manifest line with "license"), or\n'
        "  - search as a role whose ceiling includes unknown (e.g. scirag_loader): "
        "SET scirag.licenses = 'public,open_commercial,unknown' "
        "(CLI: SCIRAG_ROLE=scirag_loader scirag ask --licenses public,open_commercial,unknown ...)"
    )


def no_evidence_hint(dsn: str, licenses: str | None = None, command: str = "retrieve", question: str = "...") -> str:
    """The hint printed under an empty retrieve/ask result (see module doc)."""
    with routing.connect_reader(dsn, role=db.READER_ROLE, autocommit=True) as conn:
        if licenses is not None:
            conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
        role, effective, ceiling = conn.execute(
            "SELECT current_user::text, scirag.scope_licenses(), (SELECT c.licenses FROM scirag.scope_ceiling() c)"
        ).fetchone()
        lines = [_reader_hint(role, effective or [], ceiling or [], command)]
        admin = _admin_view(conn, effective or [])
        if admin is not None:
            lines.append(_admin_hint(admin, role, effective or [], command, question))
    return "\n".join(lines)


def _reader_hint(role: str, effective: list[str], ceiling: list[str], command: str) -> str:
    shown = ", ".join(effective) or "none"
    out = [
        f"hint: nothing was found in your scope (role {role}; licenses {shown}).",
        "  Documents under other license classes are searched only for a caller whose ceiling "
        "includes them; the result never says whether any exist.",
    ]
    wider = sorted(set(ceiling) - set(effective))
    if wider:
        out.append(
            f"  Your ceiling also allows {', '.join(wider)}: add "
            f"--licenses {','.join(sorted(set(effective) | set(wider)))}"
            f" (SQL: SET scirag.licenses = '{','.join(sorted(set(effective) | set(wider)))}')."
        )
    beyond = [x for x in ALL_LICENSES if x not in ceiling]
    if beyond:
        out.append(
            f"  Classes beyond your ceiling ({', '.join(beyond)}) need a role whose ceiling includes them: "
            "ask the database administrator."
        )
    return "\n".join(out)


def _admin_view(conn: psycopg.Connection, effective: list[str]) -> dict | None:
    """For a login that may read every document: license classes outside `effective`
    with their counts, the total, and the roles (with ceilings) the login may use.
    None for anyone else."""
    superuser, loader = conn.execute(
        "SELECT rolsuper, pg_has_role(session_user, %s, 'MEMBER') FROM pg_roles WHERE rolname = session_user",
        (db.LOADER_ROLE,),
    ).fetchone()
    if not (superuser or loader):
        return None
    with conn.transaction(force_rollback=True):
        # as the loader with every class requested (or as the superuser, who bypasses RLS)
        conn.execute(
            sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(db.LOADER_ROLE))
            if not superuser
            else sql.SQL("RESET ROLE")
        )
        conn.execute("SELECT set_config('scirag.licenses', %s, true)", (",".join(ALL_LICENSES),))
        rows = conn.execute("SELECT license::text, count(*) FROM scirag.documents GROUP BY 1 ORDER BY 1").fetchall()
        roles = conn.execute(
            """SELECT c.role_name::text, c.licenses FROM scirag.role_ceilings c
               JOIN pg_roles r ON r.oid = c.role_oid AND r.rolname = c.role_name
               WHERE pg_has_role(session_user, r.oid, 'MEMBER') ORDER BY cardinality(c.licenses), 1"""
        ).fetchall()
    total = sum(n for _, n in rows)
    outside = {lic: n for lic, n in rows if lic not in effective}
    return {"total": total, "outside": outside, "roles": roles}


def _admin_hint(view: dict, role: str, effective: list[str], command: str, question: str) -> str:
    if view["total"] == 0:
        return (
            "hint (administrator): the database holds no documents yet: scirag ingest FOLDER --license open_commercial"
        )
    if not view["outside"]:
        return (
            f"hint (administrator): all {view['total']} stored document(s) are inside this license scope; "
            "the question matched nothing (or scirag.sources / scirag.exclude_documents narrow it)."
        )
    counts = ", ".join(f"{lic} ({n})" for lic, n in sorted(view["outside"].items()))
    wanted = sorted(set(effective) | set(view["outside"]))
    use = next((name for name, lics in view["roles"] if set(wanted) <= set(lics)), None)
    out = [
        f"hint (administrator): {sum(view['outside'].values())} stored document(s) lie outside this scope: {counts}."
    ]
    if use:
        env = "" if use == role else f"SCIRAG_ROLE={use} "
        out.append(f"  To search them: {env}scirag {command} --licenses {','.join(wanted)} {shlex.quote(question)}")
        out.append(f"  (SQL: SET ROLE {use}; SET scirag.licenses = '{','.join(wanted)}';)")
    else:
        out.append(f"  No role you can use has a ceiling with {', '.join(wanted)}: add one to scirag.role_ceilings.")
    out.append(
        "  To let readers see them, state their rights: scirag ingest FILES --license public|open_commercial "
        "(re-running on stored 'unknown' documents updates their license)."
    )
    return "\n".join(out)
