"""`lawindex verify`: the exact `ask`, OpenSearch's own ranking and the reference scorer, side by side."""

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.cli._common import NO_OPTIONS, Cluster, JsonOption, connection_options, emit_json, reporting
from indexer.cli.application import app

if TYPE_CHECKING:
    from rich.console import Console

    from indexer.opensearch.cluster.connection import Connection
    from indexer.opensearch.verify import Ranking, StateReport


@app.command()
@connection_options
def verify(
    states: Annotated[list[str] | None, typer.Argument(help="States to verify [default: every corpus file]")] = None,
    from_file: Annotated[
        Path | None, typer.Option("--from", help="Questions, one a line [default: each law's own and variants]")
    ] = None,
    corpora: Annotated[Path, typer.Option("--corpora", help="Folder of <STATE>.jsonl corpus files")] = Path("corpora"),
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """Check that `ask` on OpenSearch returns the reference scorer's top 8 for every question.

    Prints, per state: the questions; how many got the reference's top 8 (ids and order) from the exact
    ask (must be all) and from OpenSearch's own BM25 (with the reason for each difference); the largest
    relative error of the Lucene mode against OpenSearch's _score; and how often the window widened. On
    an index built for the lawindex plugin, also how many the plugin's own query of size 8 got right.
    Exits 7 when the exact ask (or the plugin query) disagrees even once, 4 when a law's document was altered
    after it was loaded (every document is checked against the digests sealed with the statistics; such a
    state is not asked).
    """
    from rich.console import Console

    from indexer.errors import DamagedIndex, Disagreement
    from indexer.opensearch.read.engine import OpenSearchEngine
    from indexer.opensearch.verify import read_questions
    from indexer.opensearch.verify import verify as run
    from indexer.retrieval.corpus import read_corpora

    with reporting():
        connection = cluster.connect()
        chosen = read_corpora(corpora, states or None)
        questions = read_questions(from_file) if from_file is not None else None
        engine = OpenSearchEngine(connection)
        if not as_json:
            _say_fit(connection, {law_file.state for law_file in chosen})
        console = Console(stderr=True)
        with console.status("verifying", spinner="dots") if sys.stderr.isatty() and not as_json else nullcontext():
            reports = run(engine, chosen, questions)
        if as_json:
            for report in reports:
                emit_json(report.as_json())
        else:
            out = Console()
            for report in reports:
                _print(out, report)
        altered = [f"{report.state}: {', '.join(report.altered)}" for report in reports if report.altered]
        if altered:
            raise DamagedIndex(
                f"laws altered after they were loaded (never served) in {'; '.join(altered)}",
                hint="`lawindex load DIR --force` rebuilds those states",
            )
        wrong = sum(len(report.disagreements) for report in reports)
        plugin_wrong = sum(len(report.plugin_disagreements) for report in reports)
        if plugin_wrong:
            if not as_json:
                for report in reports:
                    for differing in report.plugin_disagreements:
                        typer.echo(f"\n{report.state}: {differing.question!r}", err=True)
                        typer.echo(_rankings(differing.reference, differing.other, "plugin query"), err=True)
            if not wrong:
                raise Disagreement(f"the plugin query disagreed with the reference on {plugin_wrong} question(s)")
        if wrong:
            if not as_json:
                for report in reports:
                    for differing in report.disagreements:
                        typer.echo(f"\n{report.state}: {differing.question!r}", err=True)
                        typer.echo(_rankings(differing.reference, differing.other), err=True)
            raise Disagreement(f"the exact ask disagreed with the reference on {wrong} question(s)")


def _say_fit(connection: "Connection", states: set[str]) -> None:
    """On stderr: the cluster's version, whether its lawindex plugin matches it, and each state's paths there."""
    from indexer.opensearch.cluster.versions import cluster_fit
    from indexer.opensearch.read.status import status

    fit = cluster_fit(connection.client())
    typer.echo(fit.describe(), err=True)
    for row in status(connection, fit):
        if row.state in states:
            typer.echo(f"{row.state} can take: {row.paths}", err=True)


def _rankings(reference: "Ranking", exact: "Ranking", other: str = "exact ask") -> str:
    lines = [f"  {'reference':<30} {other}"]
    for place in range(max(len(reference.ids), len(exact.ids))):
        left = f"{reference.ids[place]} {reference.scores[place]!r}" if place < len(reference.ids) else ""
        right = f"{exact.ids[place]} {exact.scores[place]!r}" if place < len(exact.ids) else ""
        lines.append(f"  {left:<30} {right}")
    return "\n".join(lines)


def _print(console: "Console", report: "StateReport") -> None:
    from rich.table import Table

    table = Table(title=f"{report.state}: {report.questions} questions in {report.seconds:.1f}s", title_justify="left")
    table.add_column("")
    table.add_column("top 8 = reference", justify="right")
    table.add_column("")
    table.add_row("exact ask", f"{report.exact_same} / {report.questions}", f"{report.exact_percent:.1f}%")
    if report.plugin_same is not None:
        percent = 100.0 * report.plugin_same / report.questions if report.questions else 100.0
        table.add_row("plugin query", f"{report.plugin_same} / {report.questions}", f"{percent:.1f}%")
    table.add_row("OpenSearch BM25", f"{report.native_same} / {report.questions}", f"{report.native_percent:.1f}%")
    for reason, count in report.reasons.most_common():
        table.add_row(f"  differs: {reason}", str(count), "")
    table.add_row(
        "Lucene mode vs _score",
        f"{report.lucene_error:.2g}",
        f"largest relative error, {report.lucene_hits} hits",
    )
    table.add_row(
        "window widened",
        f"{report.widened} / {report.questions}",
        f"widest {report.widest}",
    )
    console.print(table)
