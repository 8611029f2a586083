"""What every command shares: turning a LawindexError into one line and an exit code, and output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from indexer.errors import LawindexError


@contextmanager
def reporting() -> Iterator[None]:
    """Run a command's library call; a LawindexError becomes `error: ...` on stderr and its exit code."""
    try:
        yield
    except LawindexError as error:
        typer.echo(f"error: {error.message}", err=True)
        if error.hint:
            typer.echo(f"hint: {error.hint}", err=True)
        raise typer.Exit(error.exit_code) from None


def emit_json(obj: Any) -> None:
    """One JSON object on one line of stdout."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()
