"""The connection to OpenSearch: one place that builds the client and turns its failures into ours.

Credentials come from OPENSEARCH_USER and OPENSEARCH_PASSWORD only, never from the command line, and
never reach a message: URLs are shown without their user-info and the password is kept out of repr.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from indexer.corpus import state_code
from indexer.errors import BadInput, ClusterRefused, Unreachable

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

_N = TypeVar("_N", int, float)

DEFAULT_URL = "http://127.0.0.1:9200"
START_HINT = "start a local node with `lawindex opensearch start`, or point OPENSEARCH_URL (or --url) at a cluster"


DEFAULT_NAMESPACE = "lawindex"
_NAMESPACE = re.compile(r"[a-z][a-z0-9_]{0,39}")


def namespace_of(text: str) -> str:
    """`text` as the first part of every index and alias name, or BadInput: lowercase letters, digits, _."""
    if not _NAMESPACE.fullmatch(text):
        raise BadInput(
            f"not a namespace: {text!r}",
            hint="a namespace is 1 to 40 lowercase letters, digits or _, starting with a letter",
        )
    return text


def alias_of(state: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The alias a state's laws are served under: `lawindex-tx`. Only ever made from a valid state code."""
    return f"{namespace_of(namespace)}-{state_code(state).lower()}"


def index_prefix(state: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The prefix every generation of a state's index shares: `lawindex-tx-`."""
    return alias_of(state, namespace) + "-"


@dataclass(frozen=True)
class Connection:
    """Where OpenSearch is and how to talk to it: URL, credentials, TLS, timeouts and retries."""

    url: str = DEFAULT_URL
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_certs: str | None = None
    insecure: bool = False
    # Seconds a request may take before it counts as not answered; a slow cluster gets --timeout.
    timeout: float = 10.0
    # Requests retried by the client when the connection is refused or dropped (not on a timeout).
    retries: int = 2
    # The first part of every index and alias name, so that several lawindexes (a test run, staging)
    # can share a cluster without touching each other's states.
    namespace: str = DEFAULT_NAMESPACE

    @classmethod
    def from_env(
        cls,
        url: str | None = None,
        *,
        ca_certs: str | None = None,
        insecure: bool = False,
        timeout: float | None = None,
        retries: int | None = None,
        namespace: str | None = None,
    ) -> Connection:
        """A connection from the arguments, then OPENSEARCH_URL, OPENSEARCH_USER, OPENSEARCH_PASSWORD,
        LAWINDEX_TIMEOUT, LAWINDEX_RETRIES and LAWINDEX_NAMESPACE."""
        chosen = url or os.environ.get("OPENSEARCH_URL") or DEFAULT_URL
        parts = urlsplit(chosen)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadInput(f"not an OpenSearch URL: {shown(chosen)!r}", hint="use a URL like http://127.0.0.1:9200")
        if parts.username or parts.password:
            raise BadInput(
                f"the URL {shown(chosen)} carries credentials",
                hint="set OPENSEARCH_USER and OPENSEARCH_PASSWORD instead; they are never read from the command line",
            )
        try:
            parts.port  # noqa: B018 -- a port that is not a number raises here, not later in the client
        except ValueError:
            raise BadInput(f"not an OpenSearch URL: {shown(chosen)!r} (bad port)") from None
        return cls(
            url=chosen.rstrip("/"),
            user=os.environ.get("OPENSEARCH_USER") or None,
            password=os.environ.get("OPENSEARCH_PASSWORD") or None,
            ca_certs=ca_certs,
            insecure=insecure,
            timeout=_setting("timeout", timeout, "LAWINDEX_TIMEOUT", float, 10.0),
            retries=_setting("retries", retries, "LAWINDEX_RETRIES", int, 2),
            namespace=namespace_of(namespace or os.environ.get("LAWINDEX_NAMESPACE") or DEFAULT_NAMESPACE),
        )

    def client(self) -> OpenSearch:
        """An opensearch-py client for this connection (imported here: `lawindex --help` stays fast)."""
        from opensearchpy import OpenSearch

        return OpenSearch(
            hosts=[self.url],
            http_auth=(self.user, self.password or "") if self.user else None,
            verify_certs=not self.insecure,
            ssl_show_warn=False,
            ca_certs=self.ca_certs,
            timeout=self.timeout,
            max_retries=self.retries,
            # A request that timed out is not sent again: --timeout bounds the wait for a silent
            # cluster. A refused connection is retried (LAWINDEX_RETRIES), which costs nothing.
            retry_on_timeout=False,
            pool_maxsize=32,
        )


def _setting(name: str, given: _N | None, variable: str, kind: type[_N], default: _N) -> _N:
    """A timeout or retry count from its option, else its environment variable, else its default; BadInput
    for one that is not a number, or a timeout that is not positive or a retry count below 0 (a timeout of
    0 would fail every request at once, and "abc" was a ValueError traceback)."""
    text = os.environ.get(variable)
    where = f"--{name}" if given is not None else variable
    if given is None and text is not None:
        try:
            given = kind(text)
        except ValueError:
            raise BadInput(
                f"{variable}={text!r} is not a number", hint=f"unset it for the default, {default}"
            ) from None
    value = default if given is None else given
    if value < 0 or (kind is float and value == 0) or value != value:  # NaN is not a timeout either
        raise BadInput(f"{where} must be {'above 0' if kind is float else '0 or more'}, got {value}")
    return value


def shown(url: str) -> str:
    """`url` as it may be shown to people: without user-info."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()


@contextmanager
def talking(connection: Connection) -> Iterator[None]:
    """Run requests to OpenSearch; its failures become Unreachable (exit 3) or ClusterRefused (exit 4)."""
    from opensearchpy import exceptions as os_errors

    url = shown(connection.url)
    try:
        yield
    except os_errors.SSLError as error:
        raise Unreachable(
            f"TLS to {url} failed: {_reason(error)}",
            hint="pass the cluster's CA with --ca-certs; --insecure skips verification (not for production)",
        ) from None
    except os_errors.ConnectionTimeout:
        raise Unreachable(
            f"OpenSearch at {url} did not answer within {connection.timeout:g}s",
            hint=f"raise --timeout, or {START_HINT}",
        ) from None
    except os_errors.ConnectionError as error:
        raise Unreachable(f"OpenSearch did not answer at {url}: {_reason(error)}", hint=START_HINT) from None
    except os_errors.AuthenticationException:
        raise ClusterRefused(
            f"OpenSearch at {url} refused the credentials (401)",
            hint="check OPENSEARCH_USER and OPENSEARCH_PASSWORD",
        ) from None
    except os_errors.AuthorizationException:
        raise ClusterRefused(
            f"OpenSearch at {url} refused the request (403): the user lacks a permission",
            hint="the user needs read (and, to load, write and manage) on lawindex-* indices",
        ) from None
    except os_errors.TransportError as error:
        raise ClusterRefused(f"OpenSearch at {url} answered {error.status_code}: {_reason(error)}") from None


def _reason(error: Exception) -> str:
    """The short reason inside an opensearch-py error, without the request it came from."""
    from opensearchpy import exceptions as os_errors

    if isinstance(error, os_errors.ConnectionError):
        cause = error.info if isinstance(error.info, Exception) else None
        text = str(cause or error.error)
        # urllib3 wraps the OS's words in its own; the last clause is the one a person needs, without
        # OpenSSL's source line ("self-signed certificate (_ssl.c:1006)").
        text = re.sub(r"\s*\(_ssl\.c:\d+\)?", "", text)
        return text.rsplit(": ", 1)[-1].strip(" ')\"") or "no answer"
    if isinstance(error, os_errors.TransportError):
        info = error.info
        if isinstance(info, dict):
            cause = info.get("error", info)
            if isinstance(cause, dict):
                root = (cause.get("root_cause") or [cause])[0]
                return f"{root.get('type', 'error')}: {root.get('reason', '')}".strip(": ")
            return str(cause)
        return str(error.error)
    return str(error)
