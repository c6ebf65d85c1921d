"""Checks a command written in prose (an inline code span, tests/py/doc_commands.py says which
spans are commands) without running it: the program exists and every option it shows is one
of that program's. docs/doc-commands.md, "Commands in prose", states the rules.

- `scirag ...` / `.venv/bin/scirag ...`: the words name a command of the built CLI and its
  parser (click's, the one `scirag` itself runs) accepts the options; then the command is
  made as `scirag` would make it (types converted, required arguments present). A command
  that lacks an argument (`scirag ingest`, `scirag serve --dsn`) is a reference to the
  command, checked but not complete.
- `scripts/NAME` (directly, or after `python`): the file exists, is executable when run
  directly, and each option is in its `--help` output (a .py answering `--help`) or else in
  its text (a .sh: its usage comment or `case` arms).
- `sqitch SUB`: the subcommand's manual page (sqitch-SUB.pod) exists and shows the options.
- any other program: it is installed (on PATH, .venv/bin first) and `PROGRAM [SUB] --help`
  shows the options.
- every word naming a file of the checkout (`scripts/`, `tests/`, `python/`, `docs/`, `sql/`,
  `domain/`, `../shared/`) names one that exists.

A command with a placeholder (an UPPER-CASE word, `...`, `<...>`, `[...]`) is checked but
not complete: it is never run."""

from __future__ import annotations

import contextlib
import functools
import glob
import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from doc_commands import ROOT, DocCommand, segments, words

VENV_BIN = ROOT / ".venv" / "bin"
PATH_PREFIXES = ("scripts/", "tests/", "python/", "docs/", "sql/", "domain/", "../shared/")


@dataclass
class Check:
    cmd: DocCommand
    problems: list[str] = field(default_factory=list)  # what is wrong (a failure)
    incomplete: str | None = None  # why it cannot run as written (a placeholder, a missing argument)


def placeholder(text: str) -> str | None:
    """The first placeholder of a command, or None."""
    for w in words(text):
        if re.search(r"\.\.\.|…|<[^>]*>|^\[|\]$", w):
            return w
        if " " in w:  # a quoted value with spaces: a pattern or a sentence, not a placeholder
            continue
        value = w.split("=", 1)[1] if re.match(r"^[A-Za-z_]\w*=", w) else w
        if any(re.fullmatch(r"[A-Z][A-Z_]*", part) for part in re.split(r"[/.@,=:]", value)):
            return w
    return None


def flags(args: list[str]) -> list[str]:
    """The options a command's words show: `--name` (without `=value`) and `-x`; not a value with spaces."""
    out = []
    for a in args:
        if a == "--":
            break
        if re.match(r"^--?[A-Za-z]", a) and " " not in a:
            out.append(a.split("=", 1)[0])
    return out


def shown(flag: str, text: str) -> bool:
    """The option appears in a help text or manual as an option (not as part of a longer one)."""
    if re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text):
        return True
    # combined short options (`grep -lE`): each letter
    return bool(re.fullmatch(r"-[A-Za-z]{2,}", flag)) and all(shown("-" + c, text) for c in flag[1:])


@functools.lru_cache(maxsize=None)
def help_text(argv: tuple[str, ...]) -> str | None:
    """stdout+stderr of `argv` when it exits with 0, else None."""
    try:
        proc = subprocess.run(
            list(argv),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}", "COLUMNS": "200"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout + proc.stderr if proc.returncode == 0 else None


def check_paths(args: list[str], out: Check) -> None:
    """Each word naming a file of the checkout (or a glob of them) names one that exists."""
    for a in args:
        if not a.startswith(PATH_PREFIXES) or placeholder(a):
            continue
        if a.startswith("../shared/") and not (ROOT.parent / "shared").is_dir():
            continue
        target = (ROOT.parent / a[3:]) if a.startswith("../") else ROOT / a
        if re.search(r"[*?]", a):
            if not glob.glob(str(target)):
                out.problems.append(f"{a}: matches no file of the checkout")
        elif not target.exists():
            out.problems.append(f"{a}: no such file or folder in the checkout")


@functools.lru_cache(maxsize=1)
def scirag_root():
    import typer

    from scirag.cli import app

    root = typer.main.get_command(app)
    return root, typer.Context(root, info_name="scirag")


def click_errors():
    """The exceptions of the click that parses `scirag`'s words: typer ships its own copy."""
    try:
        from typer._click import exceptions
    except ImportError:  # a typer that uses click itself
        from click import exceptions
    return exceptions


def check_scirag(args: list[str], out: Check) -> None:
    """The words name a command of the CLI and its parser accepts them (click's own parser)."""
    import typer

    click = click_errors()
    root, ctx = scirag_root()
    cmd, path, rest = root, ["scirag"], list(args)
    while hasattr(cmd, "list_commands") and rest and not rest[0].startswith("-"):
        if placeholder(rest[0]):  # `scirag COMMAND --help`, `scirag docs ...`
            return
        sub = cmd.get_command(ctx, rest[0])
        if sub is None:
            out.problems.append(
                f"{' '.join(path)}: no command {rest[0]!r} (it has: {', '.join(cmd.list_commands(ctx))})"
            )
            return
        path.append(rest.pop(0))
        ctx = typer.Context(sub, info_name=path[-1], parent=ctx)
        cmd = sub
    if hasattr(cmd, "list_commands"):
        options = {"--help"} | {o for p in cmd.params for o in p.opts + p.secondary_opts}
        bad = [f for f in flags(rest) if f not in options]
        if bad:
            out.problems.append(f"{' '.join(path)}: no option {bad[0]}")
        elif not out.incomplete:
            out.incomplete = f"`{' '.join(path)}` names a group of commands"
        return
    try:
        cmd.make_parser(ctx).parse_args(args=list(rest))
    except click.BadOptionUsage as exc:  # `scirag serve --dsn`: an option named, its value left out
        if rest and rest[-1].startswith("-") and "requires an argument" in exc.format_message():
            out.incomplete = out.incomplete or f"`{' '.join(path)} {rest[-1]}` names an option"
        else:
            out.problems.append(f"{' '.join(path)}: {exc.format_message()}")
        return
    except click.UsageError as exc:
        out.problems.append(f"{' '.join(path)}: {exc.format_message()}")
        return
    if out.incomplete:  # a placeholder: its value need not convert
        return
    try:
        # `--help` prints the help; paths are checked from the checkout, as the page runs them
        with contextlib.redirect_stdout(io.StringIO()), contextlib.chdir(ROOT):
            cmd.make_context(path[-1], list(rest), parent=ctx.parent)
    except click.MissingParameter:
        out.incomplete = f"`{' '.join(path)}` is named without its arguments"
    except typer.Exit:  # an eager option (--help) answered
        pass
    except click.UsageError as exc:
        out.problems.append(f"{' '.join(path)}: {exc.format_message()}")


def script_options(script: str) -> tuple[str, str]:
    """(where the options were read, the text): a .py's `--help`, else the script's own text."""
    target = ROOT / script
    source = target.read_text(encoding="utf-8", errors="replace")
    if script.endswith(".py") and "argparse" in source:  # a script without a parser would just run
        text = help_text((str(VENV_BIN / "python"), str(target), "--help"))
        if text is not None:
            return "--help", text
    return "its text", source


def check_script(script: str, args: list[str], direct: bool, out: Check) -> None:
    if placeholder(script):  # `scripts/X.py ...`: a name that stands for any script
        return
    target = ROOT / script
    if not target.is_file():
        out.problems.append(f"{script}: no such script")
        return
    if direct and not os.access(target, os.X_OK):
        out.problems.append(f"{script}: not executable (run it with .venv/bin/python, or chmod +x it)")
    wanted = flags(args)
    if wanted:
        where, text = script_options(script)
        for f in wanted:
            if not shown(f, text):
                out.problems.append(f"{script}: no option {f} (not in {where})")


def check_sqitch(args: list[str], out: Check) -> None:
    sub = next((a for a in args if not a.startswith("-")), None)
    if sub and placeholder(sub):
        return
    pods = glob.glob(f"/usr/share/perl5/sqitch-{sub}.pod") if sub else []
    if not pods:
        out.problems.append(f"sqitch: no command {sub!r} (no sqitch-{sub}.pod manual)")
        return
    text = open(pods[0], encoding="utf-8").read()
    for f in flags(args):
        if not shown(f, text):
            out.problems.append(f"sqitch {sub}: no option {f} (not in its manual)")


def check_program(program: str, args: list[str], out: Check) -> None:
    if placeholder(program):
        return
    found = shutil.which(program, path=f"{VENV_BIN}:{os.environ.get('PATH', '')}")
    if program.startswith(".venv/bin/"):
        found = str(ROOT / program) if (ROOT / program).exists() else None
    if not found:
        out.problems.append(f"{program}: not installed (not on PATH nor in .venv/bin)")
        return
    wanted = flags(args)
    if not wanted:
        return
    sub = args[0] if args and re.fullmatch(r"[a-z][a-z-]*", args[0]) else None
    text = (help_text((found, sub, "--help")) if sub else None) or help_text((found, "--help")) or ""
    for f in wanted:
        if not shown(f, text):
            out.problems.append(f"{program}{' ' + sub if sub else ''}: no option {f} (not in its --help)")


def check_segment(seg: list[str], out: Check, programs: bool = True) -> None:
    program, args = seg[0], seg[1:]
    check_paths(args, out)
    name = program.removeprefix(".venv/bin/")
    if name == "scirag":
        check_scirag(args, out)
    elif not programs:
        return
    elif name in ("python", "python3") and args and args[0].startswith("scripts/"):
        check_program(program, [], out)
        check_script(args[0], args[1:], direct=False, out=out)
    elif name in ("python", "python3") and "-m" in args:
        own = args[: args.index("-m") + 1]
        check_program(program, own, out)
    elif program.startswith("scripts/"):
        check_script(program, args, direct=True, out=out)
    elif name == "sqitch":
        check_sqitch(args, out)
    else:
        check_program(program, args, out)


def check(cmd: DocCommand, programs: bool = True) -> Check:
    """What is wrong with an inline command (problems) and why it cannot run as written.
    programs=False leaves out the checks that start other programs (`--help`): enough to
    tell whether the command is complete, in a fraction of the time."""
    out = Check(cmd)
    p = placeholder(cmd.text)
    if p:
        out.incomplete = f"a placeholder: {p}"
    elif "../shared/" in cmd.text and not (ROOT.parent / "shared").is_dir():
        out.incomplete = "names the shared data sets (../shared), not beside this checkout"
    for seg in segments(cmd.text):
        check_segment(seg, out, programs)
    return out


# ---------------------------------------------------------------------------
# Options written alone in prose (`--replace` in a sentence about `scirag ingest`)
# ---------------------------------------------------------------------------


def option_spans(paths) -> list[tuple[str, int, str]]:
    """(page, line, option) of each code span that is an option alone (`--replace`, `-k 3`)."""
    from doc_commands import code_spans

    found = []
    for path in paths:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for line, span in code_spans(path.read_text(encoding="utf-8")):
            m = re.match(r"^(--?[A-Za-z][\w-]*)(?:[ =].*)?$", span)
            if m:
                found.append((rel, line, m.group(1)))
    return found


@functools.lru_cache(maxsize=1)
def known_options() -> frozenset[str]:
    """Every option of a `scirag` command or group, and every option-like word of the scripts
    and of Sqitch's manuals (which command a sentence means is the sentence's, not the span's)."""
    root, ctx = scirag_root()
    found: set[str] = {"--help"}

    def walk(command, context):
        found.update(o for p in command.params for o in p.opts + p.secondary_opts)
        if hasattr(command, "list_commands"):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                walk(sub, type(context)(sub, info_name=name, parent=context))

    walk(root, ctx)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "scripts").iterdir() if p.is_file()]
    texts += [open(p, encoding="utf-8").read() for p in glob.glob("/usr/share/perl5/sqitch-*.pod")]
    for text in texts:
        found.update(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))
    return frozenset(found)
