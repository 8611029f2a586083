"""The connection options (--url, --ca-certs, --insecure, --timeout) are declared once, in
indexer/cli/_common.py, and every command that takes one takes all four, from there: a user learns them
once, and a change of their help or default is made in one place."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from indexer.cli import app
from indexer.cli._common import CaCertsOption, InsecureOption, TimeoutOption, UrlOption

CLI = Path(__file__).resolve().parents[2] / "indexer" / "cli"
CONNECTION = ("--url", "--ca-certs", "--insecure", "--timeout")


def test_only_common_spells_a_connection_option() -> None:
    spelled = {
        path.name
        for path in CLI.glob("*.py")
        for option in CONNECTION
        if re.search(rf"""["']{option}["']""", path.read_text(encoding="utf-8"))
    }
    assert spelled == {"_common.py"}


def test_every_command_with_one_connection_option_has_all_four_as_declared() -> None:
    aliases = (UrlOption, CaCertsOption, InsecureOption, TimeoutOption)
    declared = {option: alias.__metadata__[0].help for option, alias in zip(CONNECTION, aliases, strict=True)}
    found = 0

    def walk(command: object) -> None:
        nonlocal found
        for sub in getattr(command, "commands", {}).values():
            walk(sub)
        options = {opt: param for param in getattr(command, "params", []) for opt in param.opts}
        if any(option in options for option in CONNECTION):
            found += 1
            for option in CONNECTION:
                assert option in options, f"{command.name} lacks {option}"  # type: ignore[attr-defined]
                assert options[option].help == declared[option], f"{command.name} {option}"  # type: ignore[attr-defined]

    walk(typer.main.get_command(app))
    assert found == 10  # ask, get, eval, history, rollback, load, status, serve, verify, plugin check


def test_every_command_takes_them_through_one_decorator() -> None:
    # Issue 45: no command lists the four in its own signature; `connection_options` adds them and hands the
    # command one Cluster, whose `connect()` is the one place a Connection is made from them.
    for path in CLI.glob("*.py"):
        if path.name == "_common.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "UrlOption" not in text and "ca_certs: " not in text, path.name
        assert re.search(r"(?<![.\w])connect\(", text) is None, path.name  # only Cluster.connect()
        assert text.count("@connection_options") == text.count("cluster: Cluster = NO_OPTIONS"), path.name
