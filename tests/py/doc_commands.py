"""The commands shown in README.md and docs/*.md, read from the pages themselves.

A command is a line of a ```bash block (with its backslash continuations and here-document
bodies), a `$ ` line of a plain block (a transcript), or a whole ```sql block (its
statements run in one session, as psql would). Full-line comments are not commands.
tests/py/test_doc_commands.py runs them, or skips them by a stated rule."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGS = ("bash", "sh", "shell", "console")


@dataclass(frozen=True)
class DocCommand:
    page: str  # relative to the repository, e.g. "docs/library.md"
    line: int  # 1-based line of the command's first line in the page
    text: str  # as written (continuations and here-document bodies included; a SQL block whole)
    lang: str = "bash"  # "bash" (a shell command) or "sql" (a ```sql block, run as psql would)
    block: int = 0  # line of the block's first line: commands of one block share a shell's variables
    status: int | None = None  # the exit status the page states in prose (inline commands)

    @property
    def code(self) -> str:
        """The command without its lines' trailing `  # comment`s (a here-document is kept whole)."""
        if self.lang == "sql" or "<<" in self.text.split("\n", 1)[0]:
            return self.text
        return "\n".join(line.split("  #", 1)[0].rstrip() for line in self.text.splitlines())

    @property
    def expected_status(self) -> int:
        """0, or N when the command's comment says `exit status N` (or the page's prose, `status`)."""
        if self.status is not None:
            return self.status
        m = re.search(r"#.*\bexit status (\d+)", self.text)
        return int(m.group(1)) if m else 0

    @property
    def sets_variables(self) -> bool:
        """`export X=...`, `source FILE` or `X=...` alone: what a shell keeps for the block's next lines."""
        return self.lang == "bash" and bool(re.match(r"^(export\s|source\s|[A-Za-z_]\w*=\S*$)", self.code))

    def statements(self) -> list[str]:
        """A SQL block's statements, `--` comments removed."""
        code = "\n".join(line.split("--", 1)[0].rstrip() for line in self.text.splitlines())
        return [s.strip() for s in code.split(";") if s.strip()]

    def __str__(self) -> str:
        first = self.code.splitlines()[0] if self.code.strip() else ""
        return f"{self.page}:{self.line}: " + (f"sql: {first}" if self.lang == "sql" else first)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(text: str):
    """(language, first line number of the body, body lines) of each fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if m:
            lang, start, body = m.group(1), i + 2, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield lang, start, body
        i += 1


def shell_commands(body: list[str], start: int) -> list[tuple[int, str]]:
    """The commands of a shell block: continuations joined, here-documents kept whole."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(body):
        line = body[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        first, parts = i, [line]
        while True:
            cur = parts[-1]
            heredoc = re.search(r"<<-?\s*'?\"?(\w+)", cur.split("  #", 1)[0])
            if heredoc:
                word = heredoc.group(1)
                while i + 1 < len(body):
                    i += 1
                    parts.append(body[i])
                    if body[i].strip() == word:
                        break
            if cur.split("  #", 1)[0].rstrip().endswith("\\") and i + 1 < len(body):
                i += 1
                parts.append(body[i])
                continue
            # a synopsis's indented option line: `    [--license L] ...`
            if i + 1 < len(body) and body[i + 1].startswith("    ["):
                i += 1
                parts.append(body[i])
                continue
            break
        out.append((start + first, "\n".join(parts)))
        i += 1
    return out


def transcript_commands(body: list[str], start: int) -> list[tuple[int, str]]:
    return [(start + k, line[2:]) for k, line in enumerate(body) if line.startswith("$ ")]


def doc_commands(paths: list[Path] | None = None) -> list[DocCommand]:
    found = []
    for path in paths or pages():
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for lang, start, body in blocks(path.read_text(encoding="utf-8")):
            if lang in SHELL_LANGS:
                found += [DocCommand(rel, n, t, "bash", start) for n, t in shell_commands(body, start)]
            elif lang == "sql":
                found.append(DocCommand(rel, start, "\n".join(body), "sql", start))
            elif lang == "":
                found += [DocCommand(rel, n, t, "bash", start) for n, t in transcript_commands(body, start)]
    return found


# ---------------------------------------------------------------------------
# Commands written inline, in prose (docs/doc-commands.md, "Commands in prose")
# ---------------------------------------------------------------------------

# Programs whose name, followed by at least one word, starts a command in a code span. A bare
# name (`scirag`, `sqitch`) is a name, not a command; `scirag.x`, `scirag:` are SQL names or output.
TOOLS = frozenset(
    "scirag psql curl sqitch ruff python python3 pip pytest git grep bash sh sudo make docker uv "
    "pg_basebackup pg_ctl pg_dump pg_restore pg_isready patronictl etcd".split()
)
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def code_spans(text: str) -> list[tuple[int, str]]:
    """(line, content) of each inline code span outside fenced blocks, as CommonMark reads
    them: a run of N backticks up to the next run of exactly N, within one paragraph
    (a line break inside becomes a space; one space padding both ends is dropped)."""
    lines, fenced, inside = text.splitlines(), [], False
    for line in lines:
        if line.startswith("```"):
            inside = not inside
            fenced.append("")
        else:
            fenced.append("" if inside else line)
    prose = "\n".join(fenced)
    found = []
    for m in re.finditer(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", prose, flags=re.S):
        content = m.group(2).replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        found.append((prose.count("\n", 0, m.start()) + 1, content))
    return found


def words(text: str) -> list[str]:
    """Shell words and operators (`&&`, `|`, `;`) of a command; plain split if quotes do not close."""
    import shlex

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return text.split()


def segments(text: str) -> list[list[str]]:
    """The simple commands of a command line: its words split at `&&`, `||`, `;` and `|`,
    each without its leading `VAR=value` assignments."""
    out, cur = [], []
    for w in [*words(text), ";"]:
        if w in ("&&", "||", ";", "|", "&"):
            while cur and ASSIGNMENT.match(cur[0]):
                cur.pop(0)
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(w)
    return out


def is_command(span: str) -> bool:
    """The rule (docs/doc-commands.md): after any leading `VAR=value` words, the span starts with
    `.venv/bin/NAME` or one of TOOLS followed by at least one more word (not ending with `:`),
    or with `scripts/NAME` followed by arguments or naming an executable file."""
    parts = segments(span)
    if not parts:
        return False
    first = parts[0]
    program = first[0]
    if program.startswith("/"):  # /usr/lib/postgresql/15/bin/pg_ctl
        return os.path.basename(program) in TOOLS
    if program.startswith(".venv/bin/"):
        return len(first) > 1
    if program.startswith("scripts/") and "*" not in program:
        target = ROOT / program
        return len(first) > 1 or (target.is_file() and os.access(target, os.X_OK))
    # `scirag preset: key ... must be ...` is a message, not a command
    return program in TOOLS and len(first) > 1 and not first[1].endswith(":")


def inline_commands(paths: list[Path] | None = None) -> list[DocCommand]:
    """The commands written in code spans of the pages' prose (lang "inline"; block -line, so
    no two share a shell)."""
    found = []
    for path in paths or pages():
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for line, span in code_spans(path.read_text(encoding="utf-8")):
            if is_command(span):
                found.append(DocCommand(rel, line, span, "inline", -line))
    return found


# A code span that is one SQL statement: `SELECT ...` that reads something (FROM or a call),
# `SET [LOCAL] name = value` / `TO value`, `SET [LOCAL] ROLE name`. Keywords named alone
# (`SET LOCAL`, `SELECT *`, `GRANT EXECUTE`) are not statements.
SQL_STATEMENT = re.compile(
    r"^(SELECT\s.*(\bFROM\b|\().*|SET\s+(LOCAL\s+)?(ROLE\s+\w+|[\w.]+\s*(=|\sTO\s)\s*\S.*))$", flags=re.S
)


def inline_sql(paths: list[Path] | None = None) -> list[DocCommand]:
    """The SQL statements written in code spans of the pages' prose (lang "sql")."""
    found = []
    for path in paths or pages():
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for line, span in code_spans(path.read_text(encoding="utf-8")):
            if SQL_STATEMENT.match(span.strip()):
                found.append(DocCommand(rel, line, span.strip(), "sql", -line))
    return found
