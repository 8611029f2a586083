"""`lawindex history` and `lawindex rollback`: a state's kept generations, and the way back to one."""

from dataclasses import asdict
from typing import Annotated

import typer

from indexer.cli._common import NO_OPTIONS, Cluster, JsonOption, connection_options, emit_json, reporting
from indexer.cli.application import app


@app.command()
@connection_options
def history(
    state: Annotated[str, typer.Argument(help="The state's USPS code, like TX.")],
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """List a state's kept generations, newest first (the serving one marked), then its loads and rollbacks.

    With --json: one object a generation (`"kind": "generation"`), then one an event (`"kind": "load"` or
    `"rollback"`)."""
    from rich.console import Console
    from rich.table import Table

    from indexer.opensearch.cluster.connection import errors_translated
    from indexer.opensearch.write.history import history as read
    from indexer.retrieval.corpus import state_code

    with reporting():
        code = state_code(state)
        connection = cluster.connect()
        with errors_translated(connection):
            found = read(connection.client(), code, connection.namespace)
    if as_json:
        for row in found.generations:
            emit_json({"kind": "generation", "state": code, **asdict(row)})
        for event in found.events:
            emit_json({"state": code, **event})
        return
    if not found.generations and not found.events:
        typer.echo(f"{code} has no generation: lawindex load corpora/ --state {code}", err=True)
        return
    table = Table(title=f"{code}: generations kept behind {found.alias}")
    for column in ("", "index", "loaded at", "sha256", "laws", "lawindex", "OpenSearch", "path", "host"):
        table.add_column(column)
    for row in found.generations:
        table.add_row(
            "serving" if row.serving else "",
            row.index,
            row.loaded_at,
            row.sha256[:12],
            str(row.laws),
            row.lawindex,
            row.opensearch,
            row.path,
            row.host,
        )
    console = Console()
    console.print(table)
    if found.events:
        events = Table(title=f"{code}: loads and rollbacks")
        for column in ("at", "kind", "from", "to", "host", "lawindex"):
            events.add_column(column)
        for event in found.events:
            events.add_row(
                str(event.get("at", "")),
                str(event.get("kind", "")),
                ", ".join(event.get("from", [])) or "-",
                str(event.get("to", "")),
                str(event.get("host", "")),
                str(event.get("lawindex", "")),
            )
        console.print(events)


@app.command()
@connection_options
def rollback(
    state: Annotated[str, typer.Argument(help="The state's USPS code, like TX.")],
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="The generation to serve [default: the newest kept one older than the serving one].",
            show_default=False,
        ),
    ] = None,
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for a load of the same state to end", min=0)
    ] = 120.0,
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """Serve a kept generation of a state again: its seal and ownership checked, the alias swapped in one
    call under the state's lock, the rollback recorded. Only an intact generation of that state is ever
    swapped in (exit 4 otherwise; exit 2 when there is none to go back to)."""
    from indexer.opensearch.cluster.connection import errors_translated
    from indexer.opensearch.write.history import rollback as back
    from indexer.opensearch.write.stop import stopping_on_signals
    from indexer.retrieval.corpus import state_code

    with reporting(), stopping_on_signals() as stop:
        code = state_code(state)
        connection = cluster.connect()
        with errors_translated(connection):
            done = back(connection.client(), code, connection.namespace, to, wait=wait, stop=stop)
    if as_json:
        emit_json({**asdict(done), "seconds": round(done.seconds, 3)})
        return
    typer.echo(
        f"{code}: {done.alias} now serves {done.to_index} (was {', '.join(done.from_index) or 'nothing'}), "
        f"in {done.seconds:.2f} s"
    )
