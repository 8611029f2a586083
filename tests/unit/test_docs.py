"""The README cannot drift from the code: every command and every option of it is in README.md."""

from __future__ import annotations

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


def test_every_option_is_in_the_readme() -> None:
    missing = [
        f"lawindex {name} {option}"
        for name, command in _commands()
        for parameter in command.params
        for option in parameter.opts
        if option.startswith("--") and option != "--help" and option not in README
    ]
    assert not missing, f"options missing from README.md: {missing}"
