"""The service's status for each library error: its class decides (errors.HTTP_STATUS), not the message's words nor
what was being handled when it was raised; and the library raises the class that gives each case its status."""

from __future__ import annotations

from typing import NoReturn

import pytest
from opensearchpy import exceptions as os_errors

from indexer.errors import (
    BadInput,
    ClusterBlocked,
    ClusterNotFound,
    ClusterRefused,
    CorpusError,
    DamagedIndex,
    ForeignNoStatistics,
    LawindexError,
    LoadFailed,
    NoIndex,
    NoMeaning,
    NoStatistics,
    NotFound,
    NotOpenSearch,
    NotOurs,
    TimedOut,
    TlsFailed,
    Unreachable,
    WriteBlocked,
    http_status,
)
from indexer.opensearch.cluster.connection import Connection, errors_translated


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
        (CorpusError("TX.jsonl", 3, "law", "empty"), 400),
        (NotFound("MD has no law 'x'"), 404),
        (NoIndex("no index for WY"), 404),
        (ClusterNotFound("answered 404: index_not_found_exception"), 404),
        (NoStatistics("the statistics document of lawindex-tx-1 is missing"), 404),
        (ForeignNoStatistics("the alias lawindex-tx points at x"), 404),
        (DamagedIndex("the statistics of lawindex-tx-1 are malformed"), 502),
        (NotOurs("the alias lawindex-tx points at x"), 502),
        (ClusterRefused("refused the credentials (401)"), 502),
        (ClusterBlocked("a cluster block"), 502),
        (WriteBlocked("read-only"), 502),
        (TimedOut("did not answer within 1s"), 504),
        (TlsFailed("TLS failed"), 502),
        (Unreachable("did not answer"), 503),
        (NotOpenSearch("not OpenSearch"), 503),
        (NoMeaning("no vectors"), 501),
        (LoadFailed("a load"), 500),
        (LawindexError("stdout"), 500),
        # What was being handled does not decide: only the class.
        (raised_from(ClusterRefused("no index for WY"), os_errors.NotFoundError(404, "index_not_found", {})), 502),
        (raised_from(Unreachable("TLS failed"), os_errors.SSLError("N/A", "ssl", None)), 503),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_each_error_has_its_status(error: LawindexError, status: int) -> None:
    assert http_status(error) == status


def _translated(failure: Exception) -> LawindexError:
    def fail() -> NoReturn:
        raise failure

    try:
        with errors_translated(Connection(url="https://127.0.0.1:1")):
            fail()
    except LawindexError as error:
        return error
    raise AssertionError("nothing raised")


@pytest.mark.parametrize(
    ("failure", "kind", "status"),
    [
        (os_errors.SSLError("N/A", "certificate verify failed", None), TlsFailed, 502),
        (os_errors.ConnectionTimeout("TIMEOUT", "timed out", None), TimedOut, 504),
        (os_errors.NotFoundError(404, "index_not_found_exception", {}), ClusterNotFound, 404),
        (os_errors.AuthenticationException(401, "unauthorized", {}), ClusterRefused, 502),
        (os_errors.TransportError(429, "too_many_requests", {}), ClusterRefused, 502),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception | type) else str(value),
)
def test_the_client_failures_become_the_classes_of_their_status(
    failure: Exception, kind: type[LawindexError], status: int
) -> None:
    error = _translated(failure)
    assert type(error) is kind and http_status(error) == status, repr(error)
