"""`lawindex plugin build`: the lawindex plugin's zip for an OpenSearch version, see `indexer.node.plugin`; `lawindex
plugin check`: the pre-flight of an upgrade, see `indexer.opensearch.cluster.upgrade_check`."""

import time
from pathlib import Path
from typing import Annotated

import typer

from indexer.cli._common import NO_OPTIONS, Cluster, JsonOption, connection_options, emit_json, reporting
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


@plugin.command()
@connection_options
def check(
    to: Annotated[
        str | None,
        typer.Option("--to", help="A version to step to: whether the cluster can take it node by node, and the zips."),
    ] = None,
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,
) -> None:
    """Each node's OpenSearch version and lawindex plugin, the zip its version needs, and (--to V) whether the
    cluster can be upgraded to V node by node. Exits 0 when every node's plugin matches (and the step can be
    taken), 9 when a node lacks the build its version needs, 10 when the cluster cannot take the step."""
    from indexer.errors import BadInput
    from indexer.opensearch.cluster import upgrade_check, versions
    from indexer.opensearch.cluster.connection import errors_translated

    with reporting():
        connection = cluster.connect()
        if to is not None and versions.parse(to) is None:
            raise BadInput(f"not an OpenSearch version: {to!r}", hint="a version is major.minor.patch, e.g. 3.6.0")
        with errors_translated(connection):
            report = upgrade_check.check(connection.client(), to)
    if as_json:
        emit_json(report.to_json())
    else:
        for line in report.lines():
            typer.echo(line)
    if report.exit_code:
        raise typer.Exit(report.exit_code)
