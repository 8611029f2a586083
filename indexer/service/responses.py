"""How the service answers: a refusal, and the JSON bodies every route and the fast ask path write
(`{"error": ..., "hint": ...}` with the CLI's own message, the status its class gives: `errors.http_status`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.responses import Response

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


def internal_error(error: Exception) -> ErrorOut:
    return ErrorOut(error=f"internal error: {type(error).__name__}", hint="see the server's log")


def json_response(obj: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(obj).encode("utf-8"), status_code=status, media_type=JSON, headers=headers)


def error_response(status: int, body: ErrorOut) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER)} if status == 503 else None
    return json_response(body.json_obj(), status, headers)
