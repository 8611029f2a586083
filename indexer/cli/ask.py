"""`lawindex ask`: a state's laws that best answer a question, as the spec's `main()` prints them."""

import contextlib
import itertools
import sys
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.cli._common import (
    NO_OPTIONS,
    Cluster,
    connection_options,
    emit_json,
    emit_line,
    fusion_options,
    reporting,
)
from indexer.cli.application import app
from indexer.errors import LawindexError
from indexer.retrieval.request import DEFAULT_WAY, RETRIEVED_LAWS, Way

if TYPE_CHECKING:
    from indexer.retrieval.answers import Answer, Reached
    from indexer.retrieval.corpus import Law
    from indexer.retrieval.embedding import Embedder
    from indexer.retrieval.explain import Contribution
    from indexer.service.engines import Engine


# A question is at most 2,000 characters (contract/request.json), 8,000 bytes of UTF-8; a line far past that
# is not a question, and no line is read past this bound.
MAX_LINE_BYTES = 1 << 16
# A file of questions (`--from FILE`) is a regular file of at most this (indexer.retrieval.files): a million
# short questions, 8,000 of the longest. Standard input is a stream, read a bounded line at a time.
MAX_FROM_BYTES = 64 << 20


class EngineName(StrEnum):
    """The engines `--engine` accepts (indexer.service.engines.ENGINES)."""

    reference = "reference"
    opensearch = "opensearch"


def _questions(source: str) -> Iterator[tuple[int, str | LawindexError]]:
    """The numbered lines of `source` (a file, or `-` for standard input) without their line ends, or
    the error a line is (bytes that are not UTF-8). Blank lines are skipped: in a file of questions a
    blank line is spacing, not a question."""
    from indexer.errors import BadInput
    from indexer.retrieval.files import binary_stream

    stream = sys.stdin.buffer if source == "-" else None
    try:
        with contextlib.nullcontext(stream) if stream else binary_stream(Path(source), MAX_FROM_BYTES) as handle:
            for number in itertools.count(1):
                # Bounded: `--from /dev/zero` (no line end, ever) was read until a MemoryError.
                raw = handle.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                if len(raw) > MAX_LINE_BYTES:
                    where = "stdin" if source == "-" else source
                    raise BadInput(
                        f"{where}:{number}: a line of more than {MAX_LINE_BYTES:,} bytes: not a file of questions"
                    )
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    yield number, BadInput(f"not UTF-8 (byte {error.start + 1})")
                    continue
                if line.strip():
                    yield number, line
    except OSError as error:
        raise BadInput(f"{source}: cannot read questions: {error.strerror or error}") from None


def _vector_of(source: str) -> object:
    """The JSON value in `source` (a file, or - for standard input): the question's own vector, checked by the
    contract's rules as the request is built; BadInput naming the file where it cannot be read as JSON."""
    import orjson

    from indexer.errors import BadInput

    try:
        raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as error:
        raise BadInput(f"--vector-from {source}: cannot read it: {error.strerror or error}") from None
    try:
        value: object = orjson.loads(raw)  # NaN and Infinity are not JSON: refused here
    except orjson.JSONDecodeError as error:
        raise BadInput(f"--vector-from {source}: not a JSON array of numbers: {error}") from None
    return value


def _print(
    answer: "Answer", as_json: bool, parts: "list[list[Contribution]] | None" = None, flush: bool = True
) -> None:
    if as_json:
        from indexer.retrieval.answers import answer_json

        emit_line(answer_json(answer, parts), flush)
        return
    typer.echo(f"words: {' '.join(answer.words)}")
    for number, hit in enumerate(answer.hits):
        if answer.reached is None:
            typer.echo(f"{hit.law.id}  {hit.law.law}")
        else:
            typer.echo(f"{hit.law.id}  {_ranks(answer.reached[number])}  {hit.law.law}")
        if parts is not None:
            if answer.reached is not None:
                typer.echo(
                    f"    cosine {answer.reached[number].cosine:.6f}"
                    + (f"  rrf {hit.score:.6f}" if answer.by == "hybrid" else "")
                )
            if parts[number]:
                _print_parts(sum(part.score for part in parts[number]) if answer.reached else hit.score, parts[number])
    if not answer.words:
        typer.echo(f"note: {answer.question!r} has no words to search by (only stopwords or none)", err=True)


def _ranks(reached: "Reached") -> str:
    """`[words 3, meaning 12]`: the rank each way gave a hit, the ways that did not reach it left out."""
    ranks = [f"{way} {rank}" for way, rank in (("words", reached.words), ("meaning", reached.meaning)) if rank]
    return f"[{', '.join(ranks)}]"


def _print_parts(score: float, parts: "list[Contribution]") -> None:
    """A hit's parts as a small table under it: word, tf, df, idf, length, score."""
    rows = [("word", "tf", "df", "idf", "length", "score")]
    rows += [(p.word, str(p.tf), str(p.df), f"{p.idf:.4f}", str(p.length), f"{p.score:.4f}") for p in parts]
    rows.append(("", "", "", "", "total", f"{score:.4f}"))
    widths = [max(len(row[column]) for row in rows) for column in range(6)]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        typer.echo("    " + "  ".join(cells).rstrip())


EngineOption = Annotated[
    EngineName,
    typer.Option("--engine", help="Which engine answers: OpenSearch, or the in-process reference over --corpora."),
]
CorporaOption = Annotated[
    Path,
    typer.Option(
        "--corpora",
        help="The directory of <STATE>.jsonl files (reference engine; the counts of a file of 4 MiB or more are "
        "kept under <cache>/reference for the next process: docs/spelling.md).",
    ),
]


def embedder_of(name: str | None) -> "Embedder | None":
    """The embedder `--embedder` names (None: the default): BadInput (exit 2) for a name lawindex does not have, or
    a missing extra."""
    from indexer.retrieval.embedders import named

    return None if name is None else named(name)


EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="By meaning or hybrid: the embedder the state was loaded with (lawindex-road-256 or all-minilm-l6-v2)"
        " [default: lawindex-road-256]. The reference engine embeds with it; OpenSearch asks each index by its own"
        " and refuses one loaded with another.",
    ),
]


def engine_for(name: EngineName, corpora: Path, cluster: Cluster, embedder: "Embedder | None" = None) -> "Engine":
    from indexer.service.engines import engine

    connection = cluster.connect() if name is EngineName.opensearch else None
    return engine(name.value, corpora=corpora, connection=connection, embedder=embedder)


def _print_law(law: "Law", as_json: bool) -> None:
    if as_json:
        from indexer.service.output import law_obj

        emit_json(law_obj(law))
    else:
        typer.echo(f"{law.id}  {law.law}")


@app.command()
@connection_options
@fusion_options
def ask(
    state: Annotated[str, typer.Argument(help="The state's USPS code, like TX or MD.")],
    question: Annotated[
        str | None, typer.Argument(help="The question, in quotes. Omit it with --from or --family.", show_default=False)
    ] = None,
    engine_name: EngineOption = EngineName.opensearch,
    corpora: CorporaOption = Path("corpora"),
    from_file: Annotated[
        str | None,
        typer.Option("--from", help="Answer every line of FILE (one question a line; - for standard input)."),
    ] = None,
    family: Annotated[
        str | None, typer.Option("--family", help="Instead of a question: the process rows of family KEY, in order.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object a question, one a line.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="How many laws at most (1 to 100).")] = RETRIEVED_LAWS,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Under each law, each word's part of its score (word, tf, df, idf, length); by meaning or hybrid"
            " also its cosine.",
        ),
    ] = False,
    by: Annotated[
        Way,
        typer.Option(
            "--by",
            help="words: the spec's BM25; meaning: every row by cosine with the question; hybrid: weighted"
            " reciprocal-rank fusion of the two full rankings (docs/meaning.md).",
        ),
    ] = DEFAULT_WAY,
    vector_from: Annotated[
        str | None,
        typer.Option(
            "--vector-from",
            help="By meaning or hybrid: the question's own vector, a JSON array of numbers in FILE (- for standard"
            " input), from the embedder that made the state's rows' own vectors (docs/meaning.md).",
        ),
    ] = None,
    embedder_name: EmbedderOption = None,
    fusion: "dict[str, object] | None" = None,  # --rrf-k, --words-weight, --meaning-weight (fusion_options)
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """The laws of STATE that best answer QUESTION: its words on one line, then one law a line (id  law).

    A question over 2,000 characters is refused, not cut. A question of stopwords only is answered with
    no laws, and a note on stderr. With --from, a question that fails is reported on stderr (and as
    {"question", "error", "exit_code"} with --json) and the batch goes on; the command then exits with
    the failure's code.
    """
    with reporting():
        from indexer.errors import BadInput, NotFound

        if sum(given is not None for given in (question, from_file, family)) != 1:
            raise BadInput("give one of QUESTION, --from FILE or --family KEY")
        from indexer.retrieval.request import Request

        # Checked once, before any question (a --from batch's questions are each this request's question).
        vector = None if vector_from is None else _vector_of(vector_from)
        asking = Request.of(state, "", {"by": by, "limit": limit, **(fusion or {}), "vector": vector})
        chosen = engine_for(engine_name, corpora, cluster, embedder_of(embedder_name))
        if family is not None:
            rows = chosen.family(state, family)
            if not rows:
                raise NotFound(f"{state.upper()} has no family {family!r}")
            for law in rows:
                _print_law(law, as_json)
            return
        if question is not None:
            answer = chosen.ask(asking.but(question=question))
            _print(answer, as_json, chosen.explain(answer) if explain else None)
            return
    failed = 0
    printed = False
    # Answers to standard input are flushed one by one (a program may wait for each); answers to a file's
    # questions are written in the buffer's blocks, and flushed at the end (main) or before an error.
    flush = from_file in (None, "-")
    with reporting():
        for number, asked in _questions(from_file or "-"):
            try:
                if isinstance(asked, LawindexError):
                    raise asked
                answer = chosen.ask(asking.but(question=asked))
            except LawindexError as error:
                # One question that fails does not end the batch: it is reported, and the batch goes on.
                failed = max(failed, error.exit_code)
                where = "stdin" if flush else from_file
                sys.stdout.flush()  # the answers before it come before its error, on a terminal too
                typer.echo(f"error: {where}:{number}: {error.message}", err=True)
                if as_json:
                    text = asked if isinstance(asked, str) else None
                    emit_json({"state": state, "question": text, "error": error.message, "exit_code": error.exit_code})
                continue
            if printed and not as_json:
                typer.echo("")
            _print(answer, as_json, chosen.explain(answer) if explain else None, flush)
            printed = True
    if failed:
        raise typer.Exit(failed)


@app.command()
@connection_options
def get(
    state: Annotated[str, typer.Argument(help="The state's USPS code, like TX or MD.")],
    law_id: Annotated[str, typer.Argument(metavar="ID", help="The law's id, like MD-S01.")],
    engine_name: EngineOption = EngineName.opensearch,
    corpora: CorporaOption = Path("corpora"),
    as_json: Annotated[bool, typer.Option("--json", help="The law as one JSON object.")] = False,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
) -> None:
    """Print one law of STATE by its id."""
    with reporting():
        law = engine_for(engine_name, corpora, cluster).get(state, law_id)
    if as_json:
        _print_law(law, True)
        return
    for name, value in law.model_dump(exclude_none=True).items():
        typer.echo(f"{name}: {value}")
