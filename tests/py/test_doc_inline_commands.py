"""Every command written in prose in README.md and docs/*.md (an inline code span that is a
command: tests/py/doc_commands.py, `is_command`) is checked (tests/py/doc_inline.py: the
program, subcommand, options and files exist; the `scirag` parser accepts the words), and
run exactly as written when it is complete (no placeholder, no argument left out) and fast,
against a copy of the demo database, by the runner of the fenced blocks
(tests/py/test_doc_commands.py), with .venv/bin first on PATH: `scirag ...` in prose is the
venv's `scirag`, as after `source .venv/bin/activate`. A complete command is not run only
when a rule of the fenced blocks' SKIPPED or of NOT_RUN below names it. docs/doc-commands.md,
"Commands in prose", states the rules and the counts (issue 25, item 13)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest
import test_doc_commands as fenced
from doc_commands import ROOT, DocCommand, code_spans, doc_commands, inline_commands, inline_sql, is_command, pages
from doc_inline import check, known_options, option_spans
from test_doc_commands import page_db, run_page, template_db  # page_db, template_db: fixtures

# Complete commands that are checked but not run, beyond the fenced blocks' SKIPPED rules.
NOT_RUN: list[tuple[str, list[str]]] = [
    (
        "sets up, starts, restarts or stops a cluster (the one this suite runs on, or the project's)",
        [r"^scripts/setup\.sh\b", r"^pg_ctl ", r"^scripts/pgtap\.sh$"],
    ),
    ("the test runner itself (CI runs it: .ci/run)", [r"^PYTEST_ADDOPTS=\S+ scripts/test\.sh"]),
    ("the upgrade and split tests (minutes; scripts/test.sh runs them)", [r"^scripts/test_(upgrade|split)\.sh$"]),
    (
        "changes the Sqitch plan, or deploys/verifies the target of sqitch.conf (test_upgrade.sh and "
        "scirag db init run Sqitch against the test databases)",
        [r"^sqitch "],
    ),
    (
        "writes files of the checkout (test_cli_docs.py runs gen_cli_docs.py --check; test_release.py the record)",
        [r"check_release\.py --record$", r"scripts/gen_cli_docs\.py$"],
    ),
    ("sourced by every script, never run itself", [r"^scripts/env\.sh$"]),
    (
        "named without the option it needs (the generated command table of cli.md shows names and arguments; "
        "resolve-entities wants --dry-run or --apply)",
        [r"^scirag graph resolve-entities$"],
    ),
    ("a script named without the files it works on (alone it prints its usage)", [r"^scripts/loader_moves\.py$"]),
    (fenced.LONG, [r"scirag eval pdf \.\./shared"]),
    (
        "network: Crossref (tests/py/test_crossref_enrich.py replays recorded responses; maintenance.md runs `enrich --replay`)",
        [r"^scirag enrich\b"],
    ),
]
# (page, command as a regular expression) -> the exit status the page's prose states
STATUS: dict[tuple[str, str], int] = {
    # "what ... reported": the size limits without the debt list's ignores find 55 functions
    ("docs/code-size.md", r"--isolated --select C901"): 1,
}


def not_run_rules(cmd: DocCommand) -> list[str]:
    rules = fenced.skip_rules(cmd)
    return rules + [reason for reason, patterns in NOT_RUN for p in patterns if re.search(p, cmd.text)]


def with_status(cmd: DocCommand) -> DocCommand:
    status = [s for (page, pattern), s in STATUS.items() if page == cmd.page and re.search(pattern, cmd.text)]
    return dataclasses.replace(cmd, status=status[0]) if status else cmd


ALL = [with_status(c) for c in inline_commands()]
# at collection, only what decides whether a command is complete (no `--help` of other programs)
INCOMPLETE = {c: check(c, programs=False).incomplete for c in ALL}


def treatment(cmd: DocCommand) -> str:
    """`run`, or why the command is only checked."""
    if INCOMPLETE[cmd]:
        return f"checked, not complete: {INCOMPLETE[cmd]}"
    rules = not_run_rules(cmd)
    return f"checked, not run: {rules[0]}" if rules else "run"


RUN = [c for c in ALL if treatment(c) == "run"]
RUN_PAGES = sorted({c.page for c in RUN}, key=lambda p: (p != "README.md", p))


def distinct(commands: list[DocCommand]) -> list[DocCommand]:
    """A page's commands, each text once (prose names `scirag gc --apply` three times)."""
    seen, out = set(), []
    for c in commands:
        if c.code not in seen:
            seen.add(c.code)
            out.append(c)
    return out


def test_inline_commands_are_found_and_counted():
    """The rule finds the prose commands of every page; prints the counts docs/doc-commands.md reports."""
    pages = {c.page for c in ALL}
    assert "README.md" in pages and len(pages) >= 15, pages
    assert len(ALL) >= 150 and len(RUN) >= 30, (len(ALL), len(RUN))
    counts = Counter(treatment(c).split(":")[0] for c in ALL)
    print(
        f"\n{len(ALL)} commands in prose on {len(pages)} pages: {counts['run']} run "
        f"({len({(c.page, c.code) for c in RUN})} distinct per page, on {len(RUN_PAGES)} pages), "
        f"{counts['checked, not run']} checked but not run by a rule, "
        f"{counts['checked, not complete']} checked and not complete (a placeholder, a command named without its arguments)"
    )
    for reason, patterns in NOT_RUN:  # a rule no command needs any more is stale
        for p in patterns:
            assert any(re.search(p, c.text) for c in ALL), f"rule {p!r} ({reason[:40]}...) matches no prose command"
    for (page, pattern), _ in STATUS.items():
        assert any(c.page == page and re.search(pattern, c.text) for c in RUN), (page, pattern)


def test_every_inline_command_parses():
    """Every prose command names a real program, subcommand, options and files (none is run here)."""
    checks = {c: check(c) for c in ALL}
    assert all(checks[c].incomplete == INCOMPLETE[c] for c in ALL)
    failures = [f"{c}: {p}" for c, result in checks.items() for p in result.problems]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("page", RUN_PAGES)
def test_inline_commands_run_as_written(page, page_db, tmp_path):
    failures = run_page(page, distinct([c for c in RUN if c.page == page]), page_db, tmp_path)
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------
# The checker has teeth
# ---------------------------------------------------------------------------


def test_spans_and_the_command_rule(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Run `scirag doctor --json` or `` scirag docs `list` ``; `scirag.retrieve(q)` and `scirag` are names,\n"
        "`scirag preset: key must be ...` a message. A span may break a line: `scirag gc\n--apply`.\n\n"
        "```bash\n`scirag in a block` is not prose\n```\n"
        "`scripts/db_start.sh` runs; `scripts/env.sh` too (executable), `scripts/bench_*` is a pattern, "
        "`python/loader/scirag/cli.py` a file, `sqitch` a name, `sqitch deploy` a command, "
        '`SCIRAG_X=1 scripts/test.sh -k a` one too, `SCIRAG_READ_DSN="host=x"` a setting.\n',
        encoding="utf-8",
    )
    spans = code_spans(page.read_text(encoding="utf-8"))
    assert (2, "scirag gc --apply") in spans and (1, "scirag docs `list`") in spans
    assert not any("in a block" in s for _, s in spans)
    found = [c.text for c in inline_commands([page])]
    assert found == [
        "scirag doctor --json",
        "scirag docs `list`",
        "scirag gc --apply",
        "scripts/db_start.sh",
        "scripts/env.sh",
        "sqitch deploy",
        "SCIRAG_X=1 scripts/test.sh -k a",
    ]
    assert not is_command("scirag") and not is_command("scripts/") and not is_command(".venv/bin/scirag")
    assert is_command(".venv/bin/scirag doctor") and is_command("/usr/lib/postgresql/15/bin/pg_ctl status")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("scirag docs lst", "scirag docs: no command 'lst'"),
        ("scirag docs list --colour", "scirag docs list: No such option: --colour"),
        ("scirag ingest --jobs many ~/papers", "Invalid value for '--jobs'"),
        ("scirag doctor extra", "unexpected extra argument"),
        ('scirag ask "q" --doc ID --colour red', "No such option: --colour"),  # checked despite a placeholder
        ("scirag gc --apply && scirag graph comunities", "scirag graph: no command 'comunities'"),
        ("scripts/no_such.sh --all", "scripts/no_such.sh: no such script"),
        ("scripts/check_release.py --recrd", "no option --recrd (not in its text)"),
        (".venv/bin/python scripts/bench_keyword.py --tracee", "no option --tracee (not in --help)"),
        ("scripts/bench_ingest_jobs.sh --corpse x", "no option --corpse"),
        ("scripts/gen_cli_docs.py --check", "not executable"),
        (".venv/bin/scirag eval pdf tests/no_such_folder", "tests/no_such_folder: no such file"),
        ("ruff check --selekt E python", "ruff check: no option --selekt"),
        ("sqitch rework functions/NAME --nite x", "sqitch rework: no option --nite"),
        ("sqitch rewrk x", "sqitch: no command 'rewrk'"),
        ("/usr/no/such/psql -c 'SELECT 1'", "/usr/no/such/psql: not installed"),
    ],
)
def test_the_checker_fails_on_a_planted_error(tmp_path, text, problem):
    page = tmp_path / "page.md"
    page.write_text(f"As the page says, `{text}` does it.\n", encoding="utf-8")
    [cmd] = inline_commands([page])
    problems = check(cmd).problems
    assert any(problem in p for p in problems), problems


def test_the_checker_passes_what_is_right_and_says_what_is_incomplete(tmp_path):
    cases = {
        "scirag docs list --json": None,
        "scirag ingest --jobs 2 ~/papers": None,
        "scirag serve --dsn": "names an option",
        "scirag ingest": "named without its arguments",
        "scirag docs": "names a group",
        'scirag ask "..." --doc ID': "a placeholder",
        ".venv/bin/scirag COMMAND --help": "a placeholder",
        "scripts/check_release.py --record": None,
        ".venv/bin/python scripts/bench_keyword.py --trace": None,
        'sqitch rework functions/NAME -n "why"': "a placeholder",
        'grep -lE "x" sql/*/*.sql | grep -v @': None,
    }
    page = tmp_path / "page.md"
    page.write_text("".join(f"- `{t}`\n" for t in cases), encoding="utf-8")
    for cmd in inline_commands([page]):
        result = check(cmd)
        assert not result.problems, (cmd.text, result.problems)
        want = cases[cmd.text]
        assert (result.incomplete is None) if want is None else want in (result.incomplete or ""), (cmd.text, result)


def test_a_wrong_inline_command_fails_when_run(page_db, tmp_path):
    """The run has teeth for prose too: `scirag` is found on PATH, a failing command fails."""
    page = tmp_path / "page.md"
    page.write_text(
        "List with `scirag docs list --json`; `scirag docs show no-such-document` fails.\n", encoding="utf-8"
    )
    commands = inline_commands([page])
    assert [treatment_of(c) for c in commands] == [None, None]
    failures = run_page("page.md", commands, page_db, tmp_path / "run")
    assert len(failures) == 1 and "docs show no-such-document: exit status 1, not 0" in failures[0], failures


def treatment_of(cmd: DocCommand) -> str | None:
    result = check(cmd)
    return "; ".join(result.problems) or result.incomplete


def test_fenced_and_prose_commands_do_not_overlap():
    """A command of a fenced block is never also found as prose (the fences are blanked first)."""
    fenced_lines = {(c.page, c.line) for c in doc_commands()}
    assert not [c for c in ALL if (c.page, c.line) in fenced_lines]


# ---------------------------------------------------------------------------
# Options written alone
# ---------------------------------------------------------------------------

# (page, option) written alone in prose that is not an option of scirag, a script or Sqitch, and why
NOT_OPTIONS: dict[tuple[str, str], str] = {
    ("docs/campaigns.md", "-nc"): "a license name's suffix (cc-by-nc)",
    ("docs/campaigns.md", "-nd"): "a license name's suffix (cc-by-nd)",
    ("docs/doc-commands.md", "-rs"): "pytest's option (pyproject.toml turns it on)",
    ("docs/retrieval.md", "-word"): "the keyword search's exclusion syntax",
}


def test_every_option_written_alone_exists():
    """`--replace` alone in a sentence names an option of some scirag command, script or Sqitch
    command (which one is the sentence's to say); NOT_OPTIONS lists the few that are not options."""
    found = option_spans(pages())
    assert len(found) >= 80, len(found)
    unknown = [(page, line, opt) for page, line, opt in found if opt not in known_options()]
    wrong = [f"{page}:{line}: {opt}" for page, line, opt in unknown if (page, opt) not in NOT_OPTIONS]
    assert not wrong, "options no command, script or Sqitch command has:\n" + "\n".join(wrong)
    stale = set(NOT_OPTIONS) - {(page, opt) for page, _, opt in unknown}
    assert not stale, f"NOT_OPTIONS entries no page needs any more: {sorted(stale)}"


def test_an_option_no_command_has_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Re-ingest with `--replace`, or `--replase`, `-k 3` and `--jobs=2`.\n", encoding="utf-8")
    found = option_spans([page])
    assert [opt for _, _, opt in found] == ["--replace", "--replase", "-k", "--jobs"]
    assert [opt for _, _, opt in found if opt not in known_options()] == ["--replase"]


# ---------------------------------------------------------------------------
# SQL written inline
# ---------------------------------------------------------------------------

SQL = inline_sql()


def settings_read() -> set[str]:
    """The `scirag.*` names the SQL and Python sources quote (a setting must be one of them)."""
    names: set[str] = set()
    for path in [*ROOT.glob("sql/**/*.sql"), *ROOT.glob("python/**/*.py")]:
        names.update(re.findall(r"'(scirag\.\w+)'", path.read_text(encoding="utf-8", errors="replace")))
    return names


def sql_problems(statements: list[DocCommand], dsn: str) -> tuple[list[str], int]:
    """(failures, how many ran): each complete statement in its own transaction, rolled back,
    as the `postgres` login of psql; a `SET scirag.x` names a setting scirag reads (a
    misspelt custom setting would be accepted by PostgreSQL and change nothing)."""
    import psycopg

    failures, ran, known = [], 0, settings_read()
    for cmd in statements:
        m = re.match(r"^SET\s+(?:LOCAL\s+)?(scirag\.\w+)", cmd.text)
        if m and m.group(1) not in known:
            failures.append(f"{cmd}: {m.group(1)} is no setting scirag reads")
        if re.search(r"\.\.\.|…", cmd.text):  # a placeholder: `f(...)`
            continue
        ran += 1
        with psycopg.connect(dsn) as conn:
            try:
                conn.execute(cmd.text)
            except psycopg.Error as exc:
                failures.append(f"{cmd}: {str(exc).strip()[:300]}")
            conn.rollback()
    return failures, ran


def test_sql_written_inline_runs(page_db):
    assert len(SQL) >= 10 and len({c.page for c in SQL}) >= 8, [str(c) for c in SQL]
    failures, ran = sql_problems(SQL, page_db)
    assert not failures, "\n".join(failures)
    print(f"\n{len(SQL)} SQL statements in prose: {ran} run, {len(SQL) - ran} with a placeholder")
    assert ran >= len(SQL) - 2


def test_a_wrong_sql_statement_in_prose_fails(page_db, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Narrow with `SET scirag.licenses = 'public'` (not `SET scirag.licence = 'public'`), read\n"
        "`SELECT * FROM scirag.no_such_view`; `SET LOCAL` and `SELECT *` are words, not statements.\n",
        encoding="utf-8",
    )
    statements = inline_sql([page])
    assert [c.text for c in statements] == [
        "SET scirag.licenses = 'public'",
        "SET scirag.licence = 'public'",
        "SELECT * FROM scirag.no_such_view",
    ]
    failures, ran = sql_problems(statements, page_db)
    assert ran == 3 and len(failures) == 2, failures
    assert "scirag.licence is no setting scirag reads" in failures[0]
    assert 'relation "scirag.no_such_view" does not exist' in failures[1]
