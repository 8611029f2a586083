"""The service's status for each library error: what the library caught decides, not the message's words."""

from __future__ import annotations

import pytest
from opensearchpy import exceptions as os_errors

from indexer.errors import (
    BadInput,
    ClusterRefused,
    LawindexError,
    LoadFailed,
    NoIndex,
    NotFound,
    TimedOut,
    Unreachable,
)
from indexer.service.responses import status_of


def raised_from(error: LawindexError, cause: Exception) -> LawindexError:
    """`error` as the library raises it: `raise error from None` inside `except cause`."""
    try:
        try:
            raise cause
        except Exception:
            raise error from None
    except LawindexError as raised:
        return raised


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (BadInput("not a state code: 'ZZ'"), 400),
        (NotFound("MD has no law 'x'"), 404),
        (NoIndex("no index for WY"), 404),
        (raised_from(ClusterRefused("no index for WY"), os_errors.NotFoundError(404, "index_not_found", {})), 404),
        (raised_from(ClusterRefused("refused the credentials (401)"), os_errors.AuthenticationException(401)), 502),
        (ClusterRefused("answered 429"), 502),
        (TimedOut("did not answer within 1s"), 504),
        (raised_from(Unreachable("did not answer within 1s"), os_errors.ConnectionTimeout("TIMEOUT", "t", None)), 504),
        (raised_from(Unreachable("TLS failed"), os_errors.SSLError("N/A", "ssl", None)), 502),
        (raised_from(Unreachable("did not answer"), os_errors.ConnectionError("N/A", "refused", None)), 503),
        (Unreachable("did not answer"), 503),
        (LoadFailed("a load"), 500),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_each_error_has_its_status(error: LawindexError, status: int) -> None:
    assert status_of(error) == status
