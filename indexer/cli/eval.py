"""`lawindex eval`: recall@8, MRR@8 and nDCG@8 of each way against judged questions (indexer.evaluation.evaluate)."""

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.cli._common import (
    NO_OPTIONS,
    Cluster,
    JsonOption,
    connection_options,
    emit_json,
    fusion_options,
    reporting,
)
from indexer.cli.application import app
from indexer.cli.ask import (
    CorporaOption,
    EngineName,
    EngineOption,
    embedder_of,
    engine_for,
)
from indexer.retrieval.request import Way

if TYPE_CHECKING:
    from indexer.evaluation.evaluate import Report
    from indexer.evaluation.significance import Paired


class Split(StrEnum):
    """The halves `--split` accepts (indexer.evaluation.evaluate.SPLITS)."""

    tuning = "tuning"
    held_out = "held-out"


def _print_paired(found: "Sequence[Paired]", title: str) -> None:
    from indexer.evaluation.significance import ALPHA, RESAMPLES, stars

    typer.echo(f"\npaired tests {title} (randomization, {RESAMPLES:,} resamples, and t; * p < {ALPHA}, ** p < 0.01):")
    for one in found:
        typer.echo(
            f"  {one.first} vs {one.second} on {one.measure}: {one.first_mean:.3f} vs {one.second_mean:.3f}"
            f" ({one.difference:+.3f}{stars(one.randomization_p)}), p = {one.randomization_p:.4f} (randomization),"
            f" {one.t_p:.4f} (t)"
        )


def _print_report(report: "Report") -> None:
    from rich.console import Console
    from rich.table import Table

    from indexer.evaluation.evaluate import CUTOFF, MEASURES, NAMES

    console = Console(highlight=False)
    table = Table(title=f"{len(report.judged)} judged questions")
    for column in ("state", "questions", "way", *(NAMES[name] for name in MEASURES)):
        table.add_column(column, justify="left" if column in ("state", "way") else "right")
    counts = {state: sum(1 for one in report.judged if one.state == state) for state in report.states}
    rows = [(state, counts[state], ways) for state, ways in report.states.items()]
    rows.append(("all", len(report.judged), report.overall))
    for state, count, ways in rows:
        for number, way in enumerate(report.ways):
            table.add_row(
                state if number == 0 else "", str(count) if number == 0 else "", way,
                *(f"{ways[way][name]:.3f}" for name in MEASURES),
                end_section=number == len(report.ways) - 1, style="bold" if state == "all" else None,
            )  # fmt: skip
    console.print(table)
    for i, first in enumerate(report.ways):
        for second in report.ways[i + 1 :]:
            won, lost, tied = report.wins(first, second)
            typer.echo(f"{first} vs {second} on nDCG@8: {won} wins, {lost} losses, {tied} ties")
    pairs = [(a, b) for i, a in enumerate(report.ways) for b in report.ways[i + 1 :]]
    if pairs:
        _print_paired([report.significance(a, b, name) for a, b in pairs for name in MEASURES], "between the ways")
    typer.echo(f"\nrelevant laws missed (not in the first {CUTOFF}), with the rank reached (- : not in the first 100):")
    for number, one in enumerate(report.judged):
        parts = []
        for way in report.ways:
            missed = report.missed(way, number)
            if missed:
                parts.append(f"{way}: " + ", ".join(f"{law} {rank or '-'}" for law, rank in missed))
        if parts:
            typer.echo(f"  {one.id} {one.state} {one.question!r}: " + "; ".join(parts))


@app.command("eval")
@connection_options
@fusion_options
def eval_command(
    qrels: Annotated[
        Path, typer.Argument(help="Judged questions: JSON lines {state, question, relevant: [ids]}, or TREC qrels.")
    ],
    questions: Annotated[
        Path | None, typer.Option("--questions", help="With TREC qrels: JSON lines {id, state, question}.")
    ] = None,
    by: Annotated[
        list[Way] | None, typer.Option("--by", help="A way to evaluate; repeat for several [default: all three].")
    ] = None,
    fusion: "dict[str, object] | None" = None,  # --rrf-k, --words-weight, --meaning-weight (fusion_options)
    split: Annotated[
        Split | None, typer.Option("--split", help="Only the judged questions of this half (their 'split').")
    ] = None,
    earlier: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="An earlier run's --json output: each way tested against itself there, paired by question.",
        ),
    ] = None,
    engine_name: EngineOption = EngineName.opensearch,
    corpora: CorporaOption = Path("corpora"),
    embedder_name: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="Rank by meaning with this embedder's vectors (lawindex-road-256 or all-minilm-l6-v2) [default: "
            "lawindex-road-256]: the reference engine embeds with it; OpenSearch asks each index by the embedder it "
            "was loaded with (lawindex load --embedder) and refuses an index loaded with another.",
            show_default=False,
        ),
    ] = None,
    run: Annotated[
        Path | None,
        typer.Option("--run", help="Write each way's TREC run to FILE (FILE.<way> with several ways)."),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also write the evaluation as pictures to FILE: one self-contained HTML file of SVG figures "
            "(recall@k for k = 1..20, per-question wins and losses, the misses' ranks).",
        ),
    ] = None,
    as_json: JsonOption = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """Recall@8, MRR@8 and nDCG@8 of each way, overall and per state; wins and losses between the ways, and
    whether each difference is more than chance (paired randomization and t tests); with --against, each
    way against an earlier run; and per question the relevant laws each way missed, with the rank each
    reached."""
    with reporting():
        from indexer.errors import BadInput
        from indexer.evaluation.evaluate import (
            against,
            check_relevant,
            evaluate,
            of_split,
            paired_object,
            question_objects,
            read_judged,
            summary_object,
            trec_run,
        )
        from indexer.retrieval.request import Fusion, check_taken

        ways = list(dict.fromkeys(by or list(Way)))
        if Way.hybrid not in ways:
            check_taken(ways[0], fusion or {})  # a fusion given for no way that takes it is refused
        fused = Fusion.of(fusion or {})
        judged = of_split(read_judged(qrels, questions), None if split is None else split.value)
        engine = engine_for(engine_name, corpora, cluster, embedder_of(embedder_name))
        check_relevant(engine, judged, str(qrels))
        report = evaluate(engine, judged, ways, fused)
        compared = None if earlier is None else against(report, earlier)
        if run is not None:
            for way in report.ways:
                target = run if len(report.ways) == 1 else run.with_name(f"{run.name}.{way}")
                try:
                    target.write_text(trec_run(report, way), encoding="utf-8")
                except OSError as error:
                    raise BadInput(f"{target}: cannot write the run: {error.strerror or error}") from None
        if html is not None:
            from indexer.evaluation.html_report import html_report

            try:
                html.write_text(html_report(report), encoding="utf-8")
            except OSError as error:
                raise BadInput(f"{html}: cannot write the report: {error.strerror or error}") from None
    if as_json:
        for obj in question_objects(report):
            emit_json(obj, flush=False)
        summary = summary_object(report)
        if compared is not None:
            summary["against"] = [paired_object(one) for one in compared]
        emit_json(summary)
        return
    _print_report(report)
    if compared is not None:
        _print_paired(compared, f"against {earlier}")
