"""What every command shares: turning a LawindexError into one line and an exit code, and output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from indexer.errors import LawindexError

if TYPE_CHECKING:
    from indexer.opensearch import Connection


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


# Connection options, shared by every command that talks to OpenSearch so a user learns them once.
UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url", help="OpenSearch URL [env: OPENSEARCH_URL; default http://127.0.0.1:9200]", show_default=False
    ),
]
CaCertsOption = Annotated[
    str | None, typer.Option("--ca-certs", help="CA bundle to verify the cluster's TLS certificate")
]
InsecureOption = Annotated[bool, typer.Option("--insecure", help="Do not verify TLS certificates (warns on every use)")]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout", help="Seconds a request may take [env: LAWINDEX_TIMEOUT; default 10]", show_default=False
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object a line on stdout")]


def connect(url: str | None, ca_certs: str | None, insecure: bool, timeout: float | None) -> Connection:
    """The Connection the options describe; users and passwords come only from the environment."""
    from indexer.opensearch import Connection

    if insecure:
        typer.echo("warning: --insecure: TLS certificates are not verified", err=True)
    return Connection.from_env(url, ca_certs=ca_certs, insecure=insecure, timeout=timeout)
