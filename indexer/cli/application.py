"""The `lawindex` Typer application: each command module adds its commands to `app` when imported
(`indexer.cli` imports them all)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="lawindex",
    help="Each US state's road laws in OpenSearch, ranked by BM25 exactly as the reference spec ranks them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
