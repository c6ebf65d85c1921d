"""Campaign steps behind the HTTP and MCP doors (issue 24): the next records to
screen, a decision, the PRISMA counts. Each call opens its own connection, acts as
the API key's role (SET ROLE) so the campaign tables' row-level security decides
what it sees: a role that is not a member of a campaign's owner role finds no such
campaign, a reader role holds no privilege on campaigns at all (403)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from scirag import campaign
from scirag.server.service import Problem

STATEMENT_TIMEOUT_MS = 60_000


def _conn(dsn: str, role: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn)
    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(STATEMENT_TIMEOUT_MS),))
    conn.commit()
    return conn


def _get(conn, name: str) -> campaign.Campaign:
    try:
        return campaign.get(conn, name)
    except campaign.CampaignError as exc:
        raise Problem(404, "not_found", "No such campaign for your role", str(exc)) from None


def next_records(dsn: str, role: str, name: str, n: int) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        rows, stop, model, training = campaign.next_to_screen(conn, c, n)
        return {
            "campaign": c.name,
            "records": rows,
            "stopping": stop,
            "model": model,
            "training_size": training,
            "exclusion_reasons": c.exclusion_reasons,
        }


def decide(dsn: str, role: str, name: str, record_id: int, decision: str, reason: str | None) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        try:
            did = campaign.decide(conn, c, record_id, decision, reason)
        except campaign.CampaignError as exc:
            raise Problem(400, "invalid_argument", "Invalid argument", str(exc)) from None
        return {"decision_id": did, "record_id": record_id, "decision": decision, "reason": reason}


def prisma(dsn: str, role: str, name: str) -> dict:
    with _conn(dsn, role) as conn:
        c = _get(conn, name)
        counts = campaign.prisma_counts(conn, c)
        return {"campaign": c.name, "counts": counts, "violations": campaign.prisma_violations(counts)}
