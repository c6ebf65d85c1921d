"""docs/cli.md ("The loader CLI") against the CLI: the command list is generated
(scripts/gen_cli_docs.py) and must be current, every command is listed, and the
hand-written examples use options the commands have."""

from __future__ import annotations

import importlib.util
import re

import pytest
import typer

from conftest import ROOT
from scirag.cli import COMMANDS, GROUPS, app

spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)

README = ROOT / "docs" / "cli.md"  # moved out of README.md (issue 25)


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def listed_commands(readme: str) -> list[str]:
    block = readme.split(gen.START, 1)[1].split(gen.END, 1)[0]
    return re.findall(r"^\| `scirag ([a-z][a-z -]*?)(?: [A-Z_\[\]. ]+)?` \|", block, flags=re.M)


def leaf_commands() -> dict[str, object]:
    """'group command' -> click command, walking the built application (not the tables)."""
    root = typer.main.get_command(app)
    return {" ".join(path): cmd for path, cmd in gen.walk(root, typer.Context(root, info_name="scirag"), [])}


def test_readme_cli_section_is_current(capsys):
    rc = gen.main(["--check"])
    assert rc == 0, "README 'The loader CLI' is stale:\n" + capsys.readouterr().err


def test_every_command_is_listed_once_in_the_tables_order():
    from_tables = [name for name, _ in COMMANDS] + [f"{g} {name}" for g, _, cmds in GROUPS for name, _ in cmds]
    assert len(from_tables) == len(set(from_tables))
    assert list(leaf_commands()) == from_tables  # the app is built from the tables, nothing else
    listed = listed_commands(README.read_text(encoding="utf-8"))
    assert listed == from_tables


def test_check_fails_on_a_planted_drift_and_the_writer_repairs_it(tmp_path, capsys):
    readme = tmp_path / "README.md"
    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `scirag doctor"))
    readme.write_text(text.replace(row + "\n", ""), encoding="utf-8")  # a command gone missing
    assert gen.main(["--check", "--readme", str(readme)]) == 1
    err = capsys.readouterr().err
    assert "stale" in err and "+" + row in err  # the diff names the missing row
    assert "doctor" not in listed_commands(readme.read_text(encoding="utf-8"))  # --check wrote nothing
    assert gen.main(["--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == text
    readme.write_text(text.replace("Print ranked, cited chunks", "Print chunks"), encoding="utf-8")  # stale help
    assert gen.main(["--check", "--readme", str(readme)]) == 1


def test_missing_markers_are_a_clear_error(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers here\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="marker line exactly once"):
        gen.main(["--readme", str(readme)])


def test_first_sentence_keeps_dotted_names_and_abbreviations():
    assert (
        gen.first_sentence("Run scirag.retrieve, e.g. twice.\nMore.\n\nNext paragraph.")
        == "Run scirag.retrieve, e.g. twice."
    )
    assert gen.first_sentence("One. Two.") == "One."


def test_readme_examples_use_options_the_commands_have():
    """Each `.venv/bin/scirag ...` example line (and its indented continuation lines)
    names a real command, and every --option / -o it shows is one of that command's."""
    text = section(README.read_text(encoding="utf-8"), "The loader CLI")
    commands = leaf_commands()
    examples: list[list[str]] = []
    for line in text.splitlines():
        code = line.split("  #", 1)[0]
        if code.startswith(".venv/bin/scirag "):
            examples.append(code.split()[1:])
        elif examples and code.startswith("    ["):
            examples[-1].extend(code.split())
    assert len(examples) >= 5
    for words in examples:
        path = next((p for p in sorted(commands, key=len, reverse=True) if words[: len(p.split())] == p.split()), None)
        assert path, f"README example names no command: scirag {' '.join(words)}"
        options = {o for param in commands[path].params for o in param.opts + param.secondary_opts}
        shown = {m for w in words for m in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", w)}
        assert shown <= options, f"scirag {path}: the README shows {sorted(shown - options)}, not options of it"


def test_readme_is_a_front_page_that_links_every_page():
    """README.md stays a front page (at most 300 lines) whose table of contents links
    every page under docs/, and it says how the database is started and stopped."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    contents = section(readme, "Documentation")
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)\)", contents))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "pages not in the README's table of contents"
    assert linked - pages == set(), "links to pages that do not exist"
    # the reference pages a front page sends its reader to
    assert {"architecture.md", "threat-model.md", "security.md", "benchmarks.md", "configuration.md"} <= linked
    assert {"cli.md", "releasing.md", "library.md", "testing.md"} <= linked
    start_stop = section(readme, "Start and stop")
    assert "scripts/db_start.sh" in start_stop and "scripts/db_stop.sh" in start_stop


def test_the_configuration_reference_names_every_variable_the_code_reads():
    """docs/configuration.md names every SCIRAG_* environment variable the loader, the
    helpers and the scripts' Python read."""
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    sources = [*(ROOT / "python").rglob("*.py"), *(ROOT / "scripts").glob("*.py")]
    read = {v for f in sources for v in re.findall(r"[\"'](SCIRAG_[A-Z0-9_]+)[\"']", f.read_text(encoding="utf-8"))}
    assert len(read) > 30, read
    missing = sorted(v for v in read if not re.search(rf"\b{v}\b", reference))
    assert not missing, f"not in docs/configuration.md: {missing}"
