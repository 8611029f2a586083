"""`lawindex plugin build`: the lawindex plugin's zip for an OpenSearch version, see `indexer.node.plugin`."""

import time
from pathlib import Path
from typing import Annotated

import typer

from indexer.cli._common import reporting
from indexer.cli.application import app

plugin = typer.Typer(
    help="The lawindex plugin for OpenSearch: the spec's BM25 and retrieval inside the engine.",
    no_args_is_help=True,
)
app.add_typer(plugin, name="plugin")


@plugin.command()
def build(
    version: Annotated[
        str | None, typer.Option("--version", help="OpenSearch version [default: the pinned 3.x].")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Folder to write the zip into [default: the cache].")
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option("--cache-dir", help="Where jars and builds live [default: $LAWINDEX_CACHE or ~/.cache/lawindex]."),
    ] = None,
) -> None:
    """Build the plugin's zip for an OpenSearch version; print its path and the line that installs it."""
    from indexer.node import node
    from indexer.node import plugin as library

    began = time.monotonic()
    with reporting():
        chosen = version or node.default_version()
        zipped = library.build(chosen, out=out, cache_dir=cache_dir)
    typer.echo(f"lawindex plugin for OpenSearch {chosen} ready in {time.monotonic() - began:.1f} s", err=True)
    typer.echo("install it on each node (in its OpenSearch home), then restart the node:", err=True)
    typer.echo(str(zipped))
    typer.echo(library.install_line(zipped))
