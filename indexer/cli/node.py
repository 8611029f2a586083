"""`lawindex opensearch start|stop|status|logs|image`: a local OpenSearch node, see `indexer.node.node`."""

import time
from pathlib import Path
from typing import Annotated

import typer

from indexer.cli._common import emit_json, reporting
from indexer.cli.application import app

opensearch = typer.Typer(
    help="A local OpenSearch node or cluster on 127.0.0.1: the official image, the image built here, or the "
    "distribution.",
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
    nodes: Annotated[
        int, typer.Option("--nodes", help="How many nodes, one cluster on ports PORT..PORT+N-1 (1 to 5).")
    ] = 1,
    secure: Annotated[
        bool,
        typer.Option(
            "--secure",
            help="The security plugin (2.19.4): TLS with its own CA, an admin and a least-privileged user "
            "lawindex; status --json gives ca_certs and credentials.",
        ),
    ] = False,
    knn: Annotated[
        bool,
        typer.Option(
            "--knn",
            help="The k-NN plugin too (3.6.0), for --by meaning on indices loaded --no-plugin (the window path); the "
            "lawindex plugin every node gets ranks by meaning without it. A node made with it keeps it.",
        ),
    ] = False,
    cache_dir: CacheDir = None,
) -> None:
    """Start a node or a cluster (or find the one already running) and print its URL(s) once green."""
    from indexer.node import node

    began = time.monotonic()
    with reporting():
        settings = node.parse_settings(setting or [])
        where = f"port {port}" if nodes == 1 else f"ports {port}-{port + nodes - 1} ({nodes} nodes)"
        typer.echo(f"starting OpenSearch {version or node.default_version()} on {where} ...", err=True)
        found = node.start(
            version=version, port=port, heap=heap, cache_dir=cache_dir, settings=settings, runtime=runtime,
            nodes=nodes, secure=secure, knn=knn,
        )  # fmt: skip
    how = "already running" if found.reused else f"green in {time.monotonic() - began:.1f} s"
    typer.echo(f"OpenSearch {found.version} {how}: {found.describe()}", err=True)
    if found.note and not found.reused:
        typer.echo(f"  why: {found.note}", err=True)
    if found.ca_certs:
        typer.echo(f"  CA: {found.ca_certs}; credentials (source it): {found.credentials}", err=True)
    typer.echo(found.url)


Node = Annotated[
    int | None, typer.Option("--node", help="One node of a cluster, 1 to N [default: all for stop, 1 for logs].")
]


@opensearch.command()
def stop(port: Port = 9200, node_number: Node = None, cache_dir: CacheDir = None) -> None:
    """Stop the node or cluster `start` started at the port (or one node of it), and nothing else."""
    from indexer.node import node

    with reporting():
        before = node.status(port, cache_dir)
        node.stop(port, cache_dir, node=node_number)
    said = {"running": "stopped", "dead": "was already dead; record cleared", "stopped": "was not running"}
    which = f" (node {node_number})" if node_number else ""
    typer.echo(f"OpenSearch on port {port}{which} {said[before.state]}", err=True)


@opensearch.command()
def status(
    port: Port = 9200,
    cache_dir: CacheDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Running, stopped or dead (pid gone), with version, URL, data directory and heap. Exit 1 unless running."""
    from indexer.node import node

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
            ("ca_certs", found.ca_certs),
            ("creds", found.credentials),
            ("died", found.died),
        ):
            if value is not None:
                typer.echo(f"  {label:<9} {value}")
        if found.nodes and len(found.nodes) > 1:
            for number, member in enumerate(found.nodes, 1):
                typer.echo(f"  node {number}    {member['state']}  {member['url']}  pid {member['pid']}")
    if found.state != "running":
        raise typer.Exit(1)


@opensearch.command()
def logs(
    port: Port = 9200,
    lines: Annotated[int, typer.Option("--lines", "-n", help="How many of the last lines.")] = 50,
    node_number: Node = None,
    cache_dir: CacheDir = None,
) -> None:
    """The last lines of the node's log (of a cluster: --node K, or --port of that node)."""
    from indexer.node import node

    with reporting():
        typer.echo(node.logs(port, lines, cache_dir, node=node_number))


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
    from indexer.node import image as images

    with reporting():
        name = images.base(cache_dir) if base else images.build(version=version, cache_dir=cache_dir)
    typer.echo(name)


@opensearch.command()
def upgrade(
    version: Annotated[str, typer.Option("--version", help="The OpenSearch version to take the cluster to.")],
    port: Port = 9200,
    cache_dir: CacheDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object a node on stdout.")] = False,
) -> None:
    """Take a cluster `start --nodes N` started to another OpenSearch version node by node (a rolling upgrade),
    each node with the lawindex plugin built for it, while the cluster serves; each node's time."""
    from dataclasses import asdict

    from indexer.node import upgrade as rolling

    began = time.monotonic()
    with reporting():
        steps = rolling.upgrade(port, version, cache_dir)
    for step in steps:
        if as_json:
            emit_json(asdict(step))
        else:
            took = "already on it" if step.skipped else f"{step.seconds:.1f} s"
            typer.echo(f"{step.name}  {step.was} -> {step.now}  {took}")
    typer.echo(f"the cluster on port {port} runs OpenSearch {version}: {time.monotonic() - began:.1f} s", err=True)
