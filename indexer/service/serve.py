"""`lawindex serve`: the retrieval service the TypeScript pipeline calls instead of its in-process bm25.

An ASGI app (FastAPI on uvicorn) over the CLI's own engine, `indexer.opensearch.read.engine.OpenSearchEngine`: one
engine per worker process, shared by every request, so each concrete index's statistics are fetched once
and a reload is seen by the next request (the engine follows the alias; never a mix). The engine is the
synchronous one, run in the worker's thread pool, not an async rewrite of it: it is the exact engine the
CLI and its tests use, and with its window search on the light path (`opensearch.cluster.fast_search`) the
sync engine in a pool is the fastest transport measured (benchmarks/serve.py; its figures in
benchmarks/RESULTS.md). An async engine would also be a second copy of the exact ranking to keep equal to the first.

Every answer is the CLI's `--json` object, serialised by the same calls (`indexer.service.output.answer_json`
for an answer, `indexer.service.output.dumps` for the rest), so the bytes are the same; every refusal is
`{"error": ..., "hint": ...}` with the CLI's own message, and no traceback ever reaches a response.

The app is built in parts: its routes (indexer.service.routes), the fast ask path beside them that must
stay byte-equal to them (fast_ask), the body's limit (body_limit), the slow-client limits (limits) and the
answers' statuses and bodies (responses); this module runs them under uvicorn and stops them on signals.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import asdict
from types import FrameType
from typing import Any

from indexer.errors import BadInput
from indexer.opensearch.cluster.connection import Connection
from indexer.service.access_log import Observing, log_config, observed
from indexer.service.body_limit import BodyLimit
from indexer.service.client_limits import PROTOCOL, InFlight, Limits, configure, open_files_for
from indexer.service.fast_ask import FastAsk
from indexer.service.metrics import MULTIPROCESS
from indexer.service.page import View
from indexer.service.routes import create_app

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8077
# The settings a worker process reads when uvicorn starts several (`--workers N` imports the app anew).
SETTINGS_VARIABLE = "LAWINDEX_SERVE_SETTINGS"


def app_from_environment() -> Any:
    """The app for a uvicorn worker process (`--workers N`): settings from LAWINDEX_SERVE_SETTINGS."""
    settings = json.loads(os.environ.get(SETTINGS_VARIABLE, "{}"))
    connection = Connection.from_env(
        settings.get("url"),
        ca_certs=settings.get("ca_certs"),
        insecure=bool(settings.get("insecure", False)),
        timeout=settings.get("timeout"),
    )
    limits = Limits(**settings.get("limits", {}))
    configure(limits)
    views = [View(**view) for view in settings.get("views", [])]
    return _service(connection, limits, Observing(**settings.get("observing", {})), views)


def _service(
    connection: Connection, limits: Limits, observing: Observing | None = None, views: Sequence[View] = ()
) -> Any:
    """The whole ASGI app of a worker: its metrics and access log (indexer.service.access_log), the body read
    (within its limit) before the request counts against the bound on requests in flight
    (indexer.service.client_limits.InFlight), then the fast ask path; `views`, the page's views from above."""
    app = create_app(connection, views)
    in_flight = InFlight(FastAsk(app), limits.max_in_flight)
    return observed(
        BodyLimit(in_flight), observing or Observing(), lambda: app.state.engine.client, connection.namespace, in_flight
    )


def check_address(host: str, port: int) -> None:
    """Nothing, or BadInput when `host:port` cannot be listened on (taken, or not this machine's address):
    said in one line before uvicorn starts, where it would log the error and exit 1."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise BadInput(f"cannot listen on {host}:{port}: {error.strerror or error}", hint="check --host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as error:
            raise BadInput(
                f"cannot listen on {host}:{port}: {error.strerror or error}",
                hint="choose another --port, or stop what listens there",
            ) from None


def _stopped(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM or SIGINT outside uvicorn's own handling: before it starts (nothing is in flight), or raised
    again by uvicorn once it has drained the requests in flight. Either way the stop is a clean one: exit 0."""
    raise SystemExit(0)


def serve(
    connection: Connection,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    workers: int = 1,
    settings: dict[str, Any] | None = None,
    limits: Limits | None = None,
    observing: Observing | None = None,
    views: Sequence[View] = (),
) -> None:
    """Run the service until SIGTERM or SIGINT, which stop new connections and let requests in flight finish.
    `limits`: how long a request may take to arrive, how many connections and requests (client_limits);
    `views`: the page's views from the layers above (the eval view: indexer.service.page.View)."""
    import uvicorn

    check_address(host, port)
    limits = open_files_for(limits or Limits())
    configure(limits)
    logged = log_config((observing or Observing()).log_format)
    common: dict[str, Any] = {
        # uvicorn's httptools protocol with the timeouts and bounds it lacks.
        "http": PROTOCOL,
        "host": host,
        "port": port,
        "access_log": False,
        "server_header": False,
        "log_level": "info",
        # Requests in flight get this long to finish after SIGTERM; a question takes milliseconds.
        "timeout_graceful_shutdown": 30,
        **({"log_config": logged} if logged is not None else {}),
    }
    if logged is not None:
        logging.captureWarnings(True)  # a Python warning is a logger's line too: JSON, not text
    if workers <= 1:
        # uvicorn drains on SIGTERM, then raises the signal again under the handler found at its start, so
        # that the process "dies of it" (exit -15). The drain is the whole of a graceful stop here: exit 0.
        # Not restored afterwards: a second SIGTERM while the process ends must not kill it either.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _stopped)
        uvicorn.run(_service(connection, limits, observing, views), **common)
        return
    observing = observing or Observing()
    os.environ[SETTINGS_VARIABLE] = json.dumps(
        {
            **(settings or {"url": connection.url}),
            "limits": limits.json_obj(),
            "observing": observing.json_obj(),
            "views": [asdict(view) for view in views],
        }
    )
    if not observing.metrics:
        uvicorn.run("indexer.service.serve:app_from_environment", factory=True, workers=workers, **common)
        return
    # Several workers count into files of one directory, which a scrape of any of them adds up
    # (prometheus-client's multiprocess mode, read by each worker at its import); made empty for this run.
    import shutil
    import tempfile

    counted = tempfile.mkdtemp(prefix="lawindex-metrics-")
    os.environ[MULTIPROCESS] = counted
    try:
        uvicorn.run("indexer.service.serve:app_from_environment", factory=True, workers=workers, **common)
    finally:
        shutil.rmtree(counted, ignore_errors=True)
