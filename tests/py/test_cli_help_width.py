"""`scirag ... --help` at 80 columns is wrapped, never cut (issue 25, item 12): for every
command and group, each option's names appear whole, each parameter's help appears whole
(words joined again across line breaks), no "…" and no line wider than the terminal.
Rich's panels (typer's default markup mode) cut option names and help words with "…" at 80
columns; the CLI is built with plain help (scirag.cli.build_app), and the planted test
shows the check failing on the rich build."""

from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

from scirag.cli import COMMANDS, GROUPS, app

WIDTH = 80


def joined(text: str) -> str:
    """Whitespace collapsed and words broken at a hyphen joined again."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


def walk(command, ctx, path):
    yield path, command
    if hasattr(command, "list_commands"):  # typer ships its own click: groups are told by their methods
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            yield from walk(sub, typer.Context(sub, info_name=name, parent=ctx), [*path, name])


def help_problems(application: typer.Typer, width: int = WIDTH) -> list[str]:
    """What `--help` of each command loses at `width` columns (empty: nothing)."""
    root = typer.main.get_command(application)
    runner, problems = CliRunner(), []
    for path, command in walk(root, typer.Context(root, info_name="scirag"), []):
        name = " ".join(["scirag", *path])
        result = runner.invoke(application, [*path, "--help"], env={"COLUMNS": str(width)}, terminal_width=width)
        out = result.output
        if result.exit_code != 0:
            problems.append(f"{name} --help: exit status {result.exit_code}")
            continue
        if "…" in out:
            problems.append(f"{name} --help: cut with '…'")
        wide = [line for line in out.splitlines() if len(line) > width]
        if wide:
            problems.append(f"{name} --help: {len(wide)} lines wider than {width} columns: {wide[0]!r}")
        whole = joined(out)
        for param in command.params:
            for opt in param.opts + param.secondary_opts:
                if param.param_type_name == "option" and not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", out):
                    problems.append(f"{name} --help: option {opt} not shown whole")
            text = getattr(param, "help", None)
            if text and joined(text) not in whole:
                problems.append(f"{name} --help: the help of {param.name} is not shown whole: {text!r}")
    return problems


def test_every_help_text_is_whole_at_80_columns():
    root = typer.main.get_command(app)
    paths = list(walk(root, typer.Context(root, info_name="scirag"), []))
    assert len(paths) >= 40, len(paths)  # every command and group, not a sample
    problems = help_problems(app)
    assert not problems, "\n".join(problems)


def rich_build() -> typer.Typer:
    """The same commands with typer's default markup mode (rich panels): the planted fault."""
    root = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode="rich")
    for name, function in COMMANDS:
        root.command(name)(function)
    for group_name, group_help, commands in GROUPS:
        group = typer.Typer(no_args_is_help=True, help=group_help, rich_markup_mode="rich")
        for name, function in commands:
            group.command(name)(function)
        root.add_typer(group, name=group_name)
    return root


def test_the_check_fails_on_help_cut_by_rich_panels():
    problems = help_problems(rich_build())
    assert any("cut with '…'" in p for p in problems), problems[:5]
    assert any("not shown whole" in p for p in problems), problems[:5]
