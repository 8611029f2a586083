"""`lawindex opensearch start|stop|status|logs|image`: a local OpenSearch node, see `indexer.node`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from indexer.cli import app
from indexer.cli._common import emit_json, reporting

opensearch = typer.Typer(
    help="A local single-node OpenSearch on 127.0.0.1: the official image, the image built here, or the distribution.",
    no_args_is_help=True,
)
app.add_typer(opensearch, name="opensearch")

Port = Annotated[int, typer.Option("--port", help="HTTP port on 127.0.0.1.")]
CacheDir = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Where jars and nodes live [default: $LAWINDEX_CACHE or ~/.cache/lawindex]."),
]


@opensearch.command()
def start(
    version: Annotated[
        str | None, typer.Option("--version", help="OpenSearch version [default: the pinned 3.x].")
    ] = None,
    port: Port = 9200,
    heap: Annotated[str, typer.Option("--heap", help="JVM heap, e.g. 512m or 2g.")] = "512m",
    setting: Annotated[
        list[str] | None,
        typer.Option("--setting", help="An extra static node setting, key=value (repeatable).", show_default=False),
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            "--runtime",
            help="auto (an image where Docker answers, else the distribution), docker, or distribution "
            "[env: LAWINDEX_RUNTIME; default auto].",
            show_default=False,
        ),
    ] = None,
    cache_dir: CacheDir = None,
) -> None:
    """Start a node (or find the one already running) and print its URL once it is green."""
    from indexer import node

    began = time.monotonic()
    with reporting():
        settings = node.parse_settings(setting or [])
        typer.echo(f"starting OpenSearch {version or node.default_version()} on port {port} ...", err=True)
        found = node.start(
            version=version, port=port, heap=heap, cache_dir=cache_dir, settings=settings, runtime=runtime
        )
    how = "already running" if found.reused else f"green in {time.monotonic() - began:.1f} s"
    typer.echo(f"OpenSearch {found.version} {how}: {found.describe()}", err=True)
    if found.note and not found.reused:
        typer.echo(f"  why: {found.note}", err=True)
    typer.echo(found.url)


@opensearch.command()
def stop(port: Port = 9200, cache_dir: CacheDir = None) -> None:
    """Stop the node `start` started on the port, and nothing else."""
    from indexer import node

    with reporting():
        before = node.status(port, cache_dir)
        node.stop(port, cache_dir)
    said = {"running": "stopped", "dead": "was already dead; record cleared", "stopped": "was not running"}
    typer.echo(f"OpenSearch on port {port} {said[before.state]}", err=True)


@opensearch.command()
def status(
    port: Port = 9200,
    cache_dir: CacheDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Running, stopped or dead (pid gone), with version, URL, data directory and heap. Exit 1 unless running."""
    from indexer import node

    with reporting():
        found = node.status(port, cache_dir)
    if as_json:
        emit_json(found.to_json())
    else:
        typer.echo(f"{found.state}  {found.url}")
        for label, value in (
            ("version", found.version),
            ("pid", found.pid),
            ("runs", found.runs),
            ("image", found.image),
            ("container", found.container),
            ("user", found.user),
            ("home", found.home),
            ("data", found.data_dir),
            ("heap", found.heap),
            ("log", found.log),
            ("java", found.java),
        ):
            if value is not None:
                typer.echo(f"  {label:<9} {value}")
    if found.state != "running":
        raise typer.Exit(1)


@opensearch.command()
def logs(
    port: Port = 9200,
    lines: Annotated[int, typer.Option("--lines", "-n", help="How many of the last lines.")] = 50,
    cache_dir: CacheDir = None,
) -> None:
    """The last lines of the node's log."""
    from indexer import node

    with reporting():
        typer.echo(node.logs(port, lines, cache_dir))


@opensearch.command()
def image(
    version: Annotated[
        str | None, typer.Option("--version", help="OpenSearch version [default: the pinned 3.x].")
    ] = None,
    cache_dir: CacheDir = None,
    base: Annotated[
        bool,
        typer.Option(
            "--base",
            help="Only its Debian base, lawindex/debian:bookworm: what the lawindex service's Dockerfile builds "
            "FROM with no registry (LAWINDEX_BASE_IMAGE).",
        ),
    ] = False,
) -> None:
    """Build the image lawindex/opensearch:VERSION with no registry; print its name last."""
    from indexer import image as images

    with reporting():
        name = images.base(cache_dir) if base else images.build(version=version, cache_dir=cache_dir)
    typer.echo(name)
