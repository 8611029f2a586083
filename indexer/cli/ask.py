"""`lawindex ask`: a state's laws that best answer a question, as the spec's `main()` prints them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.cli import app
from indexer.cli._common import emit_json, reporting

if TYPE_CHECKING:
    from indexer.answers import Answer


class EngineName(StrEnum):
    """The engines `--engine` accepts (indexer.engines.ENGINES)."""

    reference = "reference"
    opensearch = "opensearch"


def _questions(source: str) -> Iterator[str]:
    """The lines of `source` (a file, or `-` for standard input), without their line ends; blank lines
    are skipped: in a file of questions a blank line is spacing, not a question."""
    if source == "-":
        lines: Iterator[str] = iter(sys.stdin)
        yield from (line.rstrip("\r\n") for line in lines if line.strip())
        return
    from indexer.errors import BadInput

    try:
        with open(source, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield line.rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"{source}: cannot read questions: {error}") from None


def _print(answer: Answer, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                "state": answer.state,
                "question": answer.question,
                "words": answer.words,
                "terms": answer.terms,
                "hits": [
                    {"id": hit.law.id, "kind": hit.law.kind, "score": hit.score, "law": hit.law.law}
                    for hit in answer.hits
                ],
            }
        )
        return
    typer.echo(f"words: {' '.join(answer.words)}")
    for hit in answer.hits:
        typer.echo(f"{hit.law.id}  {hit.law.law}")
    if not answer.words:
        typer.echo(f"note: {answer.question!r} has no words to search by (only stopwords or none)", err=True)


@app.command()
def ask(
    state: Annotated[str, typer.Argument(help="The state's USPS code, like TX or MD.")],
    question: Annotated[
        str | None, typer.Argument(help="The question, in quotes. Omit it with --from.", show_default=False)
    ] = None,
    engine_name: Annotated[
        EngineName, typer.Option("--engine", help="Which engine answers: the in-process reference or OpenSearch.")
    ] = EngineName.reference,
    corpora: Annotated[
        Path, typer.Option("--corpora", help="The directory of <STATE>.jsonl files (reference engine).")
    ] = Path("corpora"),
    from_file: Annotated[
        str | None,
        typer.Option("--from", help="Answer every line of FILE (one question a line; - for standard input)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object a question, one a line.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="How many laws at most.")] = 8,
) -> None:
    """The laws of STATE that best answer QUESTION: its words on one line, then one law a line (id  law).

    A question over 2,000 characters is refused, not cut. A question of stopwords only is answered with
    no laws, and a note on stderr.
    """
    with reporting():
        from indexer.engines import engine
        from indexer.errors import BadInput

        if (question is None) == (from_file is None):
            raise BadInput("give a QUESTION or --from FILE, not both and not neither")
        chosen = engine(engine_name.value, corpora=corpora)
        questions = [question] if question is not None else _questions(from_file or "-")
        for number, asked in enumerate(questions):
            answer = chosen.ask(state, asked, limit)
            if number and not as_json:
                typer.echo("")
            _print(answer, as_json)
