"""Every failure a user can cause or meet, each with its own exit code and HTTP status.

The CLI turns a LawindexError into one line on stderr (and a hint where there is a fix) and exits
with its code; nothing else is caught, so a traceback always means a bug in lawindex. `lawindex serve`
answers it with the status `HTTP_STATUS` gives its class (`http_status`): the class decides, never the
message's words or what was being handled when it was raised.
"""

from __future__ import annotations


class LawindexError(Exception):
    """A failure with a message for people and a distinct exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class BadInput(LawindexError):
    """A corpus file, question or argument that lawindex refuses: nothing was written."""

    exit_code = 2


class CorpusError(BadInput):
    """A corpus file that is wrong at a place: file, line (1-based, 0 for the whole file) and field."""

    def __init__(self, file: str, line: int, field: str | None, problem: str) -> None:
        where = file if line == 0 else f"{file}:{line}"
        if field:
            where += f": field '{field}'"
        super().__init__(f"{where}: {problem}")
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem


class Unreachable(LawindexError):
    """OpenSearch did not answer at the URL."""

    exit_code = 3


class ClusterRefused(LawindexError):
    """OpenSearch answered, but refused: wrong credentials, no index for the state, a rejected request."""

    exit_code = 4


class LoadFailed(LawindexError):
    """A load that did not complete; the alias still points where it did before."""

    exit_code = 5


class NodeError(LawindexError):
    """The local OpenSearch node could not be started or stopped (Java missing, port taken, ...)."""

    exit_code = 6


class Disagreement(LawindexError):
    """`lawindex verify` found an exact answer that differs from the reference scorer."""

    exit_code = 7


class NotOpenSearch(Unreachable):
    """A server answered at the URL, but it is not OpenSearch (a file server, a proxy's page, another
    search engine): OpenSearch did not answer there."""


class ClusterBlocked(ClusterRefused):
    """A cluster or index block refused the request (`cluster.blocks.*`, `index.blocks.*`): not a missing
    permission, and no retry lifts it."""


class WriteBlocked(ClusterBlocked, LoadFailed):
    """A block that forbids writes (a read-only cluster, the disk flood-stage watermark): only a load
    writes, and it stops before its swap, so the alias still serves what it served before."""

    exit_code = 5


# Finer kinds, for the service's status codes (`lawindex serve`): each is its parent to the CLI, with the
# parent's exit code, so a caller that catches the parent catches them too.


class NotFound(BadInput):
    """No law by that id, or no family by that key, in a state that is loaded (HTTP 404)."""


class NoIndex(ClusterRefused):
    """Nothing is loaded under the state's alias (HTTP 404, where other refusals are 502)."""


class TimedOut(Unreachable):
    """OpenSearch accepted the connection but did not answer within the timeout (HTTP 504, not 503)."""


class TlsFailed(Unreachable):
    """TLS to OpenSearch failed: a certificate not trusted, a handshake refused (HTTP 502, not 503)."""


class NotOurs(ClusterRefused):
    """A state's alias points at an index lawindex did not make for that state (or at several indices)."""


class DamagedIndex(ClusterRefused):
    """The index behind a state's alias is closed, or its statistics are missing, malformed or altered."""


class NoStatistics(DamagedIndex):
    """The index behind a state's alias, lawindex's own, has no statistics document (HTTP 404)."""


class ForeignNoStatistics(NotOurs):
    """The index behind a state's alias is not lawindex's own for that state, and has no statistics document
    (HTTP 404, as NoStatistics)."""


class ClusterNotFound(ClusterRefused):
    """OpenSearch answered 404: what a request named is not there (HTTP 404, where other refusals are 502)."""


class LoadBusy(LoadFailed):
    """Another load of the same state holds its lock, past the time this load would wait."""


class LoadInterrupted(LoadFailed):
    """SIGINT or SIGTERM stopped a load: exit 128 + the signal's number (130, 143), as a shell reports it."""

    def __init__(self, message: str, signal_number: int, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.exit_code = 128 + signal_number


class NoMeaning(ClusterRefused):
    """`--by meaning` or `--by hybrid` where the cluster or the index has no vectors (no k-NN plugin, an index
    loaded without them, or vectors of another model): words still answer."""

    exit_code = 8


# The HTTP status `lawindex serve` answers each error with: that of the nearest class up the error's MRO, as
# opensearch-py's exceptions.py maps statuses to its classes. Beside the exit codes above, in one module.
HTTP_STATUS: dict[type[LawindexError], int] = {
    LawindexError: 500,
    BadInput: 400,  # a question, a state code, a parameter
    NotFound: 404,  # no law, no family by that key
    Unreachable: 503,  # no answer: try again (Retry-After)
    TimedOut: 504,
    TlsFailed: 502,
    ClusterRefused: 502,  # credentials, a permission, a rejected request
    NoIndex: 404,
    NoStatistics: 404,
    ForeignNoStatistics: 404,
    ClusterNotFound: 404,
    NoMeaning: 501,  # by meaning or hybrid where the cluster or the index has no vectors
}


def http_status(error: LawindexError | type[LawindexError]) -> int:
    """The HTTP status of an error (or of its class): HTTP_STATUS's, for the nearest of its classes it names."""
    kind = error if isinstance(error, type) else type(error)
    return next(HTTP_STATUS[base] for base in kind.__mro__ if base in HTTP_STATUS)
