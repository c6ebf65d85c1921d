"""One line with the fix for the errors a user meets (issue 25): the database is down
or missing, no model is configured, a role may not do something, an argument was
refused. `scirag` (cli.main) and the commands that catch database errors print it
instead of a traceback; a bug (anything else) keeps its traceback."""

from __future__ import annotations

import re

DB_DOWN = (
    "start the project cluster with scripts/db_start.sh (stop it with scripts/db_stop.sh), "
    "or point SCIRAG_DSN at a running server"
)
NO_MODEL = (
    "in-database answers read the PostgreSQL server's environment: stop the cluster "
    "(scripts/db_stop.sh), export SCIRAG_LLM_PROVIDER=google with GOOGLE_API_KEY (or "
    "SCIRAG_LLM_PROVIDER=openai with SCIRAG_OPENAI_BASE_URL), start it again (scripts/db_start.sh); "
    "or use --answerer extractive"
)


def error_line(exc: BaseException) -> str | None:
    """One line that says what went wrong and how to fix it, for the errors a user meets
    (database down, no model configured, a refused argument); None for a bug, whose
    traceback is worth showing."""
    import psycopg

    from scirag.db import ScopeError

    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) and exc.sqlstate is None:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if re.search(r'database "[^"]*" does not exist', text):
            return f"error: {text}: create and deploy it with `scirag db init`"
        return f"error: cannot reach the database ({text}): {DB_DOWN}"
    if isinstance(exc, psycopg.Error):
        msg = (exc.diag.message_primary or str(exc)).strip().splitlines()[0].removeprefix("plpy.Error: ")
        if "no model is configured" in msg:
            return f"error: {msg}: {NO_MODEL}"
        if exc.sqlstate == "3D000":  # the database does not exist
            return f"error: {msg}: create and deploy it with `scirag db init`"
        if exc.sqlstate == "42501":
            return f"error: {msg}: this role may not do that (the loader role may: SCIRAG_ROLE / GRANT)"
        return f"error: {msg}"
    if isinstance(exc, ScopeError):
        return f"error: {exc}"
    return None
