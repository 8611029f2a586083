"""`lawindex serve`: the HTTP service, on the same engine and with the same JSON as `lawindex ask --json`."""

import signal
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.cli._common import NO_OPTIONS, Cluster, connection_options, reporting
from indexer.cli.application import app

if TYPE_CHECKING:
    from indexer.service.page import View


class LogFormat(StrEnum):
    """The access log's format: none but uvicorn's own lines, or a JSON object a request."""

    text = "text"
    json = "json"


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


@app.command()
@connection_options
def serve(
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port to listen on.")] = 8077,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Worker processes, each with its own engine.")
    ] = 1,
    cluster: Cluster = NO_OPTIONS,  # --url, --ca-certs, --insecure, --timeout (connection_options)
    header_timeout: Annotated[
        float,
        typer.Option("--header-timeout", min=0.1, help="Seconds a request's headers may take to arrive."),
    ] = 10.0,
    body_timeout: Annotated[
        float,
        typer.Option("--body-timeout", min=0.1, help="Seconds a request's body may take."),
    ] = 30.0,
    max_connections: Annotated[
        int | None,
        typer.Option(
            "--max-connections",
            min=1,
            show_default=False,
            help="Open connections at most; past it a new one takes the place of one stalled in its headers, "
            "else silent over 1 s, else idle [default: 4096, or what the open-file limit allows].",
        ),
    ] = None,
    max_in_flight: Annotated[
        int,
        typer.Option(
            "--max-in-flight",
            min=1,
            help="Requests under way at most, per worker; past it 503 with Retry-After.",
        ),
    ] = 256,
    metrics: Annotated[
        bool, typer.Option("--metrics/--no-metrics", help="Serve /metrics (Prometheus text; docs/operations.md).")
    ] = True,
    log_format: Annotated[
        LogFormat,
        typer.Option(
            "--log-format",
            help="text: no access log; json: every line on stderr one JSON object, one a request (docs/operations.md).",
        ),
    ] = LogFormat.text,
    log_questions: Annotated[
        bool,
        typer.Option("--log-questions", help="Put each question's text in the JSON log (off: it is the learner's)."),
    ] = False,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="A folder of judged-questions files (JSON lines, as `lawindex eval` reads them): the page's eval "
            "view at /eval draws each as `eval --html` does.",
        ),
    ] = None,
) -> None:
    """Answer questions over HTTP: GET /v1/states/{state}/ask?q=... returns what `lawindex ask --json` prints.

    Endpoints are listed at /docs (and /openapi.json). SIGTERM or Ctrl-C lets the requests in flight
    finish, then exits 0.
    """
    # From here on a SIGTERM ends the service cleanly (exit 0), as it does once uvicorn drains it: nothing is
    # in flight yet. (Before Python reaches this line, the signal ends the process as it would any.)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _stopped)
    json_lines = log_format is LogFormat.json  # then every line on stderr is one JSON object, this one's too
    with reporting(json_lines):
        from indexer.service.access_log import Observing, json_line
        from indexer.service.client_limits import Limits, open_files_for
        from indexer.service.serve import check_address
        from indexer.service.serve import serve as run

        # The defaults are Limits' own (tests/unit/test_serve_limits.py holds them equal).
        limits = Limits(
            header_timeout=header_timeout, body_timeout=body_timeout, max_connections=max_connections,
            max_in_flight=max_in_flight,
        )  # fmt: skip
        views = [] if questions is None else [_eval_view(questions)]
        connection = cluster.connect(json_lines)
        check_address(host, port)
        open_files_for(limits)
        banner = (
            f"lawindex serve: http://{host}:{port} over OpenSearch at {connection.url} "
            f"({workers} worker{'s' if workers > 1 else ''})"
        )
        if json_lines:
            json_line("info", banner, url=f"http://{host}:{port}", opensearch=connection.url, workers=workers)
        else:
            typer.echo(banner, err=True)
        run(
            connection,
            host=host,
            port=port,
            workers=workers,
            settings=asdict(cluster),
            limits=limits,
            observing=Observing(metrics=metrics, log_format=log_format.value, log_questions=log_questions),
            views=views,
        )


def _eval_view(folder: Path) -> "View":
    """The page's eval view over `folder`; BadInput, before the service starts, when it is not a folder."""
    from indexer.errors import BadInput
    from indexer.evaluation.view import view

    if not folder.is_dir():
        raise BadInput(f"--questions {folder}: not a folder", hint="give the folder that holds the .jsonl files")
    return view(folder.resolve())
