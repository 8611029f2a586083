"""Every command's `--help` shows each option's help as written: nothing of it read as markup and dropped."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from indexer.cli import app


def _commands() -> list[tuple[list[str], Any]]:
    found: list[tuple[list[str], Any]] = []

    def walk(words: list[str], command: Any) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk([*words, name], sub)
        else:
            found.append((words, command))

    walk([], typer.main.get_command(app))
    return found


def _flat(text: str) -> str:
    """The help's words in one line: box borders gone, every run of white space one space."""
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize(("words", "command"), _commands(), ids=[" ".join(words) for words, _ in _commands()])
def test_every_option_s_help_is_shown_whole(words: list[str], command: Any) -> None:
    shown = CliRunner().invoke(app, [*words, "--help"], env={"TERMINAL_WIDTH": "200", "COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    flat = _flat(shown.output)
    for parameter in command.params:
        written = (parameter.help or "").replace("\\[", "[")
        assert _flat(written) in flat, f"lawindex {' '.join(words)} {parameter.opts}: {written!r} not shown"
    # What a dropped `[...]` left behind: a space before a full stop.
    assert not re.search(r"\w \.", flat), flat


def test_the_defaults_written_in_help_texts_are_shown() -> None:
    shown = _flat(CliRunner().invoke(app, ["load", "--help"], env={"TERMINAL_WIDTH": "200", "COLUMNS": "200"}).output)
    assert "Replicas of each new index [default: 0-1, auto-expanded]." in shown
    assert "OpenSearch URL [env: OPENSEARCH_URL; default http://127.0.0.1:9200]" in shown
    started = _flat(CliRunner().invoke(app, ["opensearch", "start", "--help"], env={"TERMINAL_WIDTH": "200"}).output)
    assert "OpenSearch version [default: the pinned 3.x]." in started
