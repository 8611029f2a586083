"""How the service answers: a library error's HTTP status (`status_of`), a refusal, and the JSON bodies
every route and the fast ask path write (`{"error": ..., "hint": ...}` with the CLI's own message)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.responses import Response

from indexer.errors import (
    BadInput,
    ClusterRefused,
    LawindexError,
    NoIndex,
    NoMeaning,
    NotFound,
    TimedOut,
    Unreachable,
)
from indexer.service.output import (
    ErrorOut,
    dumps,
)

# Seconds a client is told to wait when OpenSearch does not answer (503): a node restart takes longer.
RETRY_AFTER = 5

JSON = "application/json"
JSON_BYTES = JSON.encode()


@dataclass(frozen=True)
class Refusal(Exception):
    """An error as the service answers it: the status and the CLI's message."""

    status: int
    body: ErrorOut


def status_of(error: LawindexError) -> int:
    """The HTTP status of a library error: 400 bad input, 404 nothing there, 503 no answer, 504 too slow,
    502 a refusal (credentials, a rejected request, TLS)."""
    from opensearchpy import exceptions as os_errors

    # What the library caught, for the errors it raised from it (`raise ... from None` keeps the context):
    # a missing alias behind "no index", a timeout behind "did not answer", a certificate behind TLS.
    cause = error.__context__
    if isinstance(error, NotFound | NoIndex):
        return 404
    if isinstance(error, BadInput):
        return 400
    if isinstance(error, Unreachable):
        if isinstance(error, TimedOut) or isinstance(cause, os_errors.ConnectionTimeout):
            return 504
        if isinstance(cause, os_errors.SSLError):
            return 502
        return 503
    if isinstance(error, NoMeaning):
        return 501  # --by meaning or hybrid where the cluster or the index has no vectors
    if isinstance(error, ClusterRefused):
        return 404 if isinstance(cause, os_errors.NotFoundError) else 502
    return 500


def internal_error(error: Exception) -> ErrorOut:
    return ErrorOut(error=f"internal error: {type(error).__name__}", hint="see the server's log")


def json_response(obj: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(obj).encode("utf-8"), status_code=status, media_type=JSON, headers=headers)


def error_response(status: int, body: ErrorOut) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER)} if status == 503 else None
    return json_response(body.json_obj(), status, headers)
