"""What every command shares: turning a LawindexError into one line and an exit code, and output."""

from __future__ import annotations

import errno
import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

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


def connect(
    url: str | None, ca_certs: str | None, insecure: bool, timeout: float | None, json_lines: bool = False
) -> Connection:
    """The Connection the options describe; users and passwords come only from the environment. `--insecure`
    warns on stderr (as a JSON object with `json_lines`)."""
    from indexer.opensearch.cluster.connection import Connection

    if insecure and json_lines:
        from indexer.service.access_log import json_line

        json_line("warning", "--insecure: TLS certificates are not verified")
    elif insecure:
        typer.echo("warning: --insecure: TLS certificates are not verified", err=True)
    return Connection.from_env(url, ca_certs=ca_certs, insecure=insecure, timeout=timeout)


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
