"""The README cannot drift from the code: every command and every option of it is in README.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer.main

from indexer.cli import app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


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


def test_every_command_is_in_the_readme() -> None:
    missing = [name for name, _ in _commands() if f"lawindex {name}" not in README]
    assert not missing, f"commands missing from README.md: {missing}"


# Every command that talks to OpenSearch takes these; README documents them once, in "Connecting to a
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


def test_every_option_is_in_the_readme_with_its_command() -> None:
    # An option is documented for the command that has it: `--json` in `lawindex load ... --json` does not
    # document `lawindex verify --json`.
    lines = README.splitlines()
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
    assert not missing, f"options missing from README.md: {missing}"


def test_the_connection_options_are_documented_once_for_every_command() -> None:
    section = README[README.index("## Connecting to a cluster") :]
    for option in CONNECTION_OPTIONS:
        assert f"`{option}`" in section.split("\n## ")[0], option
    assert "every one that talks to OpenSearch takes `--url`, `--ca-certs`,\n`--insecure` and `--timeout`" in README
    talking = [name for name, command in _commands() if any("--url" in p.opts for p in command.params)]
    for name, command in _commands():
        if name in talking:
            assert {o for p in command.params for o in p.opts} >= set(CONNECTION_OPTIONS), name


def test_every_module_is_in_the_readme_s_table() -> None:
    package = Path(__file__).resolve().parents[2] / "indexer"
    # every module of every layer but the CLI's, which the table names as one package
    modules = [
        path.relative_to(package.parent).as_posix()
        for path in package.rglob("*.py")
        if path.name != "__init__.py" and path.parent.name != "cli"
    ]
    modules.append("indexer/cli/")
    missing = [module for module in modules if f"| `{module}` |" not in README]
    assert not missing, f"modules missing from README.md's table: {missing}"
