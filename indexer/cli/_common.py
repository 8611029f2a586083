"""What every command shares: turning a LawindexError into one line and an exit code, and output."""

from __future__ import annotations

import errno
import functools
import inspect
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from indexer.errors import LawindexError

if TYPE_CHECKING:
    from indexer.opensearch.cluster.connection import Connection


@contextmanager
def reporting(json_lines: bool = False) -> Iterator[None]:
    """Run a command's library call; a LawindexError becomes `error: ...` on stderr and its exit code (with
    `json_lines`, `serve --log-format json`'s: one JSON object, `level` error, with its `hint` and `exit_code`)."""
    try:
        yield
    except LawindexError as error:
        if json_lines:
            from indexer.service.access_log import json_line

            json_line("error", error.message, hint=error.hint, exit_code=error.exit_code)
            raise typer.Exit(error.exit_code) from None
        typer.echo(f"error: {error.message}", err=True)
        if error.hint:
            typer.echo(f"hint: {error.hint}", err=True)
        raise typer.Exit(error.exit_code) from None


def emit_json(obj: Any, flush: bool = True) -> None:
    """One JSON object on one line of stdout."""
    emit_line(json.dumps(obj, ensure_ascii=False), flush)


def emit_line(line: str, flush: bool = True) -> None:
    """One line on stdout; flushed unless `flush` is False (a batch read from a file, flushed at its end:
    a flush per line was a write per line, 3,000 for Texas's questions)."""
    sys.stdout.write(line + "\n")
    if flush:
        sys.stdout.flush()


# The connection options, written once: `connection_options` adds them to every command that talks to OpenSearch,
# so a user learns them once.
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

Command = TypeVar("Command", bound=Callable[..., Any])


def _with_options(
    command: Command, replaced: str, added: list[inspect.Parameter], made: Callable[[dict[str, Any]], Any]
) -> Command:
    """`command` whose parameter `replaced` becomes the options `added` (at the end of its signature, which typer
    reads): the command is handed `made(<the options' values by name>)` in its place."""
    signature = inspect.signature(command, eval_str=True)
    kept = [one for one in signature.parameters.values() if one.name != replaced]
    names = [one.name for one in added]

    @functools.wraps(command)
    def with_options(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **{replaced: made({name: kwargs.pop(name) for name in names})}, **kwargs)

    with_options.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
    with_options.__annotations__ = {one.name: one.annotation for one in [*kept, *added]}
    del with_options.__wrapped__  # typer reads the signature above, not the command's own
    return with_options  # type: ignore[return-value]


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def fusion_options(command: Command) -> Command:
    """`command` with an option for each of the fusion's parameters (`--rrf-k`, `--words-weight`,
    `--meaning-weight`: contract/request.json's, named there once), handed to it as one mapping `fusion`
    (name -> the value given, None when not given), for indexer.retrieval.request to check: a parameter the
    way does not take is refused, and a range's message is the contract's, on every path."""
    from indexer.retrieval.request import FUSION, parameter

    kinds = {"integer": int, "weight": float}
    added = []
    for name in FUSION:
        rule = parameter(name)
        option = typer.Option(
            f"--{name.replace('_', '-')}",
            help=f"The fusion's {name} (--by {' or '.join(rule['ways'])} only) [default: {rule['default']}]",
            show_default=False,
        )
        added.append(_option(name, Annotated[kinds[rule["type"]] | None, option], None))
    return _with_options(command, "fusion", added, lambda given: given)


@dataclass(frozen=True)
class Cluster:
    """Where a command finds OpenSearch: the connection options as given (users and passwords come only from
    the environment)."""

    url: str | None = None
    ca_certs: str | None = None
    insecure: bool = False
    timeout: float | None = None

    def connect(self, json_lines: bool = False) -> Connection:
        """The Connection the options describe (a warning on stderr with --insecure, every use: as a JSON object
        with `json_lines`)."""
        from indexer.opensearch.cluster.connection import Connection

        if self.insecure and json_lines:
            from indexer.service.access_log import json_line

            json_line("warning", "--insecure: TLS certificates are not verified")
        elif self.insecure:
            typer.echo("warning: --insecure: TLS certificates are not verified", err=True)
        return Connection.from_env(self.url, ca_certs=self.ca_certs, insecure=self.insecure, timeout=self.timeout)


# A command's own default for its `cluster` parameter (connection_options always hands it the options given).
NO_OPTIONS = Cluster()


def connection_options(command: Command) -> Command:
    """`command` with the connection options (`--url`, `--ca-certs`, `--insecure`, `--timeout`), handed to it as
    one `cluster: Cluster`: the options of every command that talks to OpenSearch, written once."""
    added = [
        _option("url", UrlOption, None),
        _option("ca_certs", CaCertsOption, None),
        _option("insecure", InsecureOption, False),
        _option("timeout", TimeoutOption, None),
    ]
    return _with_options(command, "cluster", added, lambda given: Cluster(**given))


class OutputFailed(Exception):
    """Standard output could not be written (a closed pipe, a full disk). Not an OSError on purpose: the
    CLI framework ends a command on a broken pipe's OSError itself, with no word and exit 1, and lets any
    other OSError out as a traceback; this one reaches `finish_output`, and only it."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.errno = error.errno


class _Stdout(io.RawIOBase):
    """Standard output's file descriptor, whose write failures are OutputFailed; after the first, every
    write is dropped, so that nothing is retried into a pipe that is gone (or a disk that is full) and
    the interpreter's last flush has nothing to complain about."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self._descriptor = descriptor
        self.failed = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def isatty(self) -> bool:
        return os.isatty(self._descriptor)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        if self.failed:
            return len(data)
        try:
            return os.write(self._descriptor, data)
        except OSError as error:
            self.failed = True
            raise OutputFailed(error) from None


def guard_stdout() -> None:
    """Make standard output's failures OutputFailed, with its encoding and buffering unchanged."""
    stdout = sys.stdout
    try:
        descriptor = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test's capture): nothing to guard
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_Stdout(descriptor)),
        encoding=stdout.encoding,
        errors=stdout.errors,
        line_buffering=bool(stdout.line_buffering),
    )


# A closed pipe ends a command as SIGPIPE ends other commands in a pipeline: quietly, 128 + 13.
BROKEN_PIPE_EXIT = 141
OUTPUT_FAILED_EXIT = 1


def output_failed(failed: OutputFailed) -> int:
    """The exit code for standard output that could not be written; one line on stderr unless the pipe
    was closed (`lawindex ask ... | head -1` is not an error a reader wants to hear about)."""
    if failed.errno == errno.EPIPE:
        return BROKEN_PIPE_EXIT
    try:
        sys.stderr.write(f"error: cannot write the output: {failed}\n")
        sys.stderr.flush()
    except OSError:
        pass
    return OUTPUT_FAILED_EXIT
