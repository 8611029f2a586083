"""The docs cannot drift from the code: every command and every option is documented in the prose of
README.md or docs/*.md, and the generated parts of docs/*.md (docs/reference.py, through cog) are current."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer.main

from indexer.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What cog generated is the code's own text (every --help lists every option), so it documents nothing:
# only the prose around it counts.
GENERATED = re.compile(r"<!-- \[\[\[cog .*?\[\[\[end\]\]\] -->", re.DOTALL)
PROSE = "\n".join(GENERATED.sub("", page.read_text(encoding="utf-8")) for page in PAGES)
CLI_PAGE = GENERATED.sub("", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))


def _commands() -> list[tuple[str, Any]]:
    """Every leaf command as (its words after `lawindex`, the click command typer built for it)."""
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        # Typer builds on its own copy of click, so a group is told by having subcommands.
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(f"{prefix} {name}".strip(), sub)
        else:
            found.append((prefix, command))

    walk("", typer.main.get_command(app))
    return found


def test_every_command_is_in_the_docs() -> None:
    missing = [name for name, _ in _commands() if f"lawindex {name}" not in PROSE]
    assert not missing, f"commands missing from README.md and docs/: {missing}"


# Every command that talks to OpenSearch takes these; docs/cli.md documents them once, in "Connecting to a
# cluster", and says so ("every one that talks to OpenSearch takes ...").
CONNECTION_OPTIONS = ("--url", "--ca-certs", "--insecure", "--timeout")


def _documents(line: str, name: str, option: str) -> bool:
    """True when `line` documents `option` of `lawindex NAME`: an example or a sentence naming the command
    with the option, or a row of an options table whose "of" column names the command (or "all")."""
    if not re.search(re.escape(option) + r"(?![\w-])", line):
        return False
    if f"lawindex {name}" in line:
        return True
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if not line.lstrip().startswith("|") or len(cells) < 3:
        return False
    leaf = name.split()[-1]
    return f"`{leaf}`" in cells[1] or cells[1].startswith("all")


def test_every_option_is_in_the_docs_with_its_command() -> None:
    # An option is documented for the command that has it: `--json` in `lawindex load ... --json` does not
    # document `lawindex verify --json`.
    lines = PROSE.splitlines()
    missing = [
        f"lawindex {name} {option}"
        for name, command in _commands()
        for parameter in command.params
        for option in parameter.opts
        if option.startswith("--")
        and option != "--help"
        and option not in CONNECTION_OPTIONS
        and not any(_documents(line, name, option) for line in lines)
    ]
    assert not missing, f"options missing from README.md and docs/: {missing}"


def test_the_connection_options_are_documented_once_for_every_command() -> None:
    section = CLI_PAGE[CLI_PAGE.index("## Connecting to a cluster") :]
    for option in CONNECTION_OPTIONS:
        assert f"`{option}`" in section.split("\n## ")[0], option
    assert "every one that talks to OpenSearch takes `--url`, `--ca-certs`,\n`--insecure` and `--timeout`" in CLI_PAGE
    talking = [name for name, command in _commands() if any("--url" in p.opts for p in command.params)]
    for name, command in _commands():
        if name in talking:
            assert {o for p in command.params for o in p.opts} >= set(CONNECTION_OPTIONS), name


def test_every_module_says_what_it_owns() -> None:
    # docs/architecture.md's module table is each module's docstring: a module without one is a blank row.
    blank = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "indexer").rglob("*.py")
        if not (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert not blank, f"modules without a docstring: {blank}"


def _cog_check(pages: list[Path]) -> int:
    # In an interpreter of its own, as scripts/docs runs cog: typer reads TERMINAL_WIDTH once, when its
    # rich_utils is first imported, so in a pytest process where test_cli_help imported it under
    # TERMINAL_WIDTH=200 the help came out 200 wide and a current page was called stale.
    command = [sys.executable, "-m", "cogapp", "--check", "-I", str(ROOT / "docs"), *map(str, pages)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, check=False).returncode


def test_the_generated_pages_are_current() -> None:
    # `scripts/docs` rewrites them; a change to a --help, an endpoint, a docstring or errors.py needs it.
    generated = [page for page in PAGES if "[[[cog" in page.read_text(encoding="utf-8")]
    assert {page.name for page in generated} >= {"cli.md", "service.md", "architecture.md", "exit-codes.md"}
    assert _cog_check(generated) == 0, "a generated page of docs/ is stale: run scripts/docs"


def test_a_stale_page_is_told(tmp_path: Path) -> None:
    page = tmp_path / "exit-codes.md"
    shutil.copy(ROOT / "docs" / "exit-codes.md", page)
    assert _cog_check([page]) == 0
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("| 7 | `Disagreement`", "| 9 | `Disagreement`"), encoding="utf-8")
    assert page.read_text(encoding="utf-8") != text
    assert _cog_check([page]) != 0
