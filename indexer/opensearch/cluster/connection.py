"""The connection to OpenSearch: one place that builds the client and turns its failures into ours.

Credentials come from OPENSEARCH_USER and OPENSEARCH_PASSWORD only, never from the command line, and
never reach a message: URLs are shown without their user-info and the password is kept out of repr.

Long: the client and everything said about a cluster's answers (errors translated, URLs and settings
checked), which every command goes through; the fast window search is apart (cluster/fast_search.py).
"""

from __future__ import annotations

import os
import re
import socket
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import urlsplit

from indexer.errors import (
    BadInput,
    ClusterBlocked,
    ClusterNotFound,
    ClusterRefused,
    NotOpenSearch,
    TimedOut,
    TlsFailed,
    Unreachable,
    WriteBlocked,
)
from indexer.observe import timed
from indexer.opensearch.cluster.reasons import redacted as redacted
from indexer.opensearch.cluster.reasons import short_reason
from indexer.retrieval.corpus import state_code

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

_N = TypeVar("_N", int, float)

DEFAULT_URL = "http://127.0.0.1:9200"
START_HINT = "start a local node with `lawindex opensearch start`, or point OPENSEARCH_URL (or --url) at a cluster"


DEFAULT_NAMESPACE = "lawindex"
DEAD_TIMEOUT_S = 2.0
DEAD_TIMEOUT_DOUBLINGS = 2
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
    # Which copy of a shard answers searches and gets (`_primary`, `_replica`, `_local`, ...; OpenSearch's
    # `preference`): None lets OpenSearch choose. The tests ask both copies to prove them the same.
    preference: str | None = None

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
        return cls(
            url=",".join(check_urls(chosen)),
            user=os.environ.get("OPENSEARCH_USER") or None,
            password=os.environ.get("OPENSEARCH_PASSWORD") or None,
            ca_certs=ca_certs,
            insecure=insecure,
            timeout=_setting("timeout", timeout, "LAWINDEX_TIMEOUT", float, 10.0),
            retries=_setting("retries", retries, "LAWINDEX_RETRIES", int, 2),
            namespace=namespace_of(namespace or os.environ.get("LAWINDEX_NAMESPACE") or DEFAULT_NAMESPACE),
        )

    @property
    def urls(self) -> list[str]:
        """The cluster's URLs: `url` holds one, or several separated by commas (one node each)."""
        return [part for part in self.url.split(",") if part]

    def client(self, *, check: bool = True) -> OpenSearch:
        """An opensearch-py client for this connection, once the server at the URL has shown that it is
        OpenSearch (`GET /`, see `check_root`); imported here, so that `lawindex --help` stays fast.
        `check=False` skips the request: the client as configured, for a test of its configuration."""
        from opensearchpy import OpenSearch

        # Several URLs: opensearch-py's connection pool sends each request to the next live host (round
        # robin, hosts shuffled once so that short-lived CLI processes do not all start on the first),
        # marks a host dead on a connection error and sends the request again to another one; a dead
        # host is tried again after dead_timeout (60 s, doubling while it stays dead). No sniffing: the
        # addresses nodes publish need not be the ones this machine reaches them by.
        hosts = self.urls
        from indexer.opensearch.cluster.failover import ProbingPool

        client = OpenSearch(
            transport_class=_transport(self.preference),
            connection_pool_class=ProbingPool,
            hosts=hosts,
            randomize_hosts=len(hosts) > 1,
            http_auth=(self.user, self.password or "") if self.user else None,
            verify_certs=not self.insecure,
            ssl_show_warn=False,
            ca_certs=self.ca_certs,
            timeout=self.timeout,
            # At least one more try than there are other hosts: a request whose host died reaches a live one.
            max_retries=self.retries if len(hosts) == 1 else max(self.retries, 2 * len(hosts)),
            # A dead host is tried again after 2 s, doubling to 8 s at most while it stays dead: with the
            # defaults (60 s, doubling to 32 minutes, and 8 threads each marking it), a node back from a
            # restart stayed shunned, and when the last node marked alive went down in a rolling restart
            # every request failed.
            dead_timeout=DEAD_TIMEOUT_S,
            timeout_cutoff=DEAD_TIMEOUT_DOUBLINGS,
            # A request that timed out is sent to another node when there is one and the request is safe
            # to repeat, within the same --timeout (cluster/failover.py); on one node it is not sent again.
            # A refused connection is retried (LAWINDEX_RETRIES), which costs nothing.
            retry_on_timeout=False,
            pool_maxsize=32,
        )
        if check:
            with errors_translated(self):
                _VERSIONS[client] = check_root(self, client)
        return client


# What a node answers (500) when the node holding the shard copy it routed a request to has just left the
# cluster (a node stopped, killed or restarting): the request goes again, as the cluster reroutes to
# another copy within moments. Any other 500 is raised at once.
_NODE_LEFT = ("node_not_connected_exception", "node_disconnected_exception", "node_closed_exception")
NODE_LEFT_TRIES = 6


def _transport(preference: str | None) -> type[Any]:
    """An opensearch-py Transport that sends a request again when the node behind its shard left, and
    (with `preference`) asks every search and get for the copy `preference` names."""
    from opensearchpy import TransportError

    from indexer.opensearch.cluster import retried
    from indexer.opensearch.cluster.failover import FailoverTransport

    class Rerouting(FailoverTransport):
        def perform_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            path = url.split("?", 1)[0]
            if preference is not None and (
                path.endswith(("/_search", "/_msearch", "/_count", "/_mget")) or "/_doc/" in path
            ):
                params = dict(kwargs.get("params") or {})
                params.setdefault("preference", preference)
                kwargs["params"] = params
            for attempt in range(NODE_LEFT_TRIES):
                try:
                    with timed("opensearch"):  # lawindex serve's per-round-trip histogram (indexer.observe)
                        return super().perform_request(method, url, *args, **kwargs)
                except TransportError as error:
                    if error.status_code != 500 or str(error.error) not in _NODE_LEFT:
                        raise
                    if attempt == NODE_LEFT_TRIES - 1:
                        raise
                    retried.note("node left")
                    time.sleep(0.25 * (attempt + 1))
            raise AssertionError("unreachable")

    return Rerouting


# The version each checked client's server reported, so that nothing asks `GET /` twice.
_VERSIONS: weakref.WeakKeyDictionary[OpenSearch, str] = weakref.WeakKeyDictionary()


def server_version(client: OpenSearch) -> str:
    """The OpenSearch version (`3.9.0`) of the server `client` talks to: as checked when it was made."""
    known = _VERSIONS.get(client)
    if known is None:
        known = _VERSIONS[client] = str(client.info()["version"]["number"])
    return known


def check_root(connection: Connection, client: OpenSearch) -> str:
    """The version the server at the connection's URL reports, or NotOpenSearch when what answers `GET /`
    is not OpenSearch's root: a JSON object with `version.number` and a `tagline` or `cluster_name`, of
    the `opensearch` distribution. An HTTP file server gave a SerializationError traceback on load and
    pages of HTML on status before this was asked first."""
    from opensearchpy import exceptions as os_errors

    url = redacted(connection.url)
    hint = "point --url (or OPENSEARCH_URL) at an OpenSearch cluster's HTTP port (9200 by default)"
    try:
        info: object = client.info()
    except os_errors.SerializationError as error:
        said = f"the server at {url} is not OpenSearch: GET / answered {_what(error)}"
        raise NotOpenSearch(said, hint=hint) from None
    except (os_errors.ConnectionError, os_errors.AuthenticationException, os_errors.AuthorizationException):
        raise
    except os_errors.TransportError as error:
        # A proxy's 502, 503 or 504 is OpenSearch not answering behind it: said as such by `errors_translated`.
        if isinstance(error.status_code, int) and error.status_code >= 500:
            raise
        raise NotOpenSearch(
            f"the server at {url} is not OpenSearch: GET / answered {error.status_code}", hint=hint
        ) from None
    if not isinstance(info, dict):
        raise NotOpenSearch(f"the server at {url} is not OpenSearch: GET / answered text, not JSON", hint=hint)
    version = info.get("version")
    number = version.get("number") if isinstance(version, dict) else None
    if not isinstance(number, str) or not ("tagline" in info or "cluster_name" in info):
        raise NotOpenSearch(
            f"the server at {url} is not OpenSearch: GET / answered JSON that is not OpenSearch's", hint=hint
        )
    distribution = version.get("distribution") if isinstance(version, dict) else None
    if distribution != "opensearch":
        product = "Elasticsearch" if "You Know, for Search" in str(info.get("tagline")) else str(distribution)
        raise NotOpenSearch(f"the server at {url} is not OpenSearch: it is {product} {number}", hint=hint)
    return number


def _what(error: Exception) -> str:
    """What a SerializationError says the server answered: `text/html`, or `something not JSON`."""
    found = re.search(r"mimetype, unable to deserialize: ([\w.+-]+/[\w.+-]+)", str(error))
    return found.group(1) if found else "something that is not JSON"


# A host name or IPv4 address as a URL may carry it; an IPv6 address comes in brackets. Anything else
# (spaces, `%`, `*`) reaches the resolver as a name that cannot be one.
_HOST = re.compile(r"[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]")
# A path prefix, for a cluster behind a proxy that serves it under one (`https://proxy/opensearch`):
# plain segments only. A segment starting with `_` is an API (`/_search`), never a prefix.
_PREFIX = re.compile(r"(/(?!_)(?!\.\.?(?:/|$))[A-Za-z0-9._~-]+)*/?")


def check_urls(text: str) -> list[str]:
    """The URLs of a comma-separated list (one or more), each checked by `check_url`, all of one scheme;
    BadInput otherwise."""
    urls = [part.strip().rstrip("/") for part in text.split(",")]
    listed = ",".join(redacted(url) if "@" in url else url for url in urls)
    for url in urls:
        if not url:
            raise BadInput(
                f"not an OpenSearch URL list: {listed!r} (an empty entry)",
                hint="separate a cluster's URLs by commas: http://127.0.0.1:9200,http://127.0.0.1:9201",
            )
        check_url(url)
    if len({urlsplit(url).scheme for url in urls}) > 1:
        raise BadInput(
            f"the URLs {listed!r} mix http and https",
            hint="one cluster speaks one scheme; list its nodes' URLs with the same one",
        )
    return urls


def check_url(url: str) -> None:
    """Nothing, or BadInput for a URL that cannot be an OpenSearch cluster's: a scheme other than http(s),
    no host, credentials in it, a port that is empty, 0 or not one (opensearch-py reads port 0 and an
    empty port as 9200, and talked to the wrong node), a query or a fragment, or a path that is not a
    plain prefix."""
    parts = urlsplit(url)
    show = repr(redacted(url))
    hint = "use a URL like http://127.0.0.1:9200"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"not an OpenSearch URL: {show}", hint=hint)
    if parts.username is not None or parts.password is not None:
        raise BadInput(
            f"the URL {redacted(url)} carries credentials",
            hint="set OPENSEARCH_USER and OPENSEARCH_PASSWORD instead; they are never read from the command line",
        )
    host = parts.netloc.rsplit("@", 1)[-1]
    name, colon, port_text = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon:
        name = host
    if not _HOST.fullmatch(name):
        raise BadInput(f"not an OpenSearch URL: {show} (the host {name!r} cannot be one)", hint=hint)
    try:
        port = parts.port
    except ValueError:
        port = None
        colon = "bad"
    if colon and (port is None or port == 0 or not port_text.isascii() or not port_text.isdigit()):
        raise BadInput(f"not an OpenSearch URL: {show} (bad port {port_text!r}: a TCP port is 1-65535)", hint=hint)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise BadInput(f"not an OpenSearch URL: {show} (a query or fragment has no place in it)", hint=hint)
    if not _PREFIX.fullmatch(parts.path):
        raise BadInput(
            f"not an OpenSearch URL: {show} (the path {parts.path!r} is not a plain prefix)",
            hint=hint + "; a path is only for a cluster behind a proxy, like https://proxy/opensearch",
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


@contextmanager
def errors_translated(connection: Connection) -> Iterator[None]:
    """Run requests to OpenSearch; its failures become Unreachable (exit 3) or ClusterRefused (exit 4), each of the
    class that gives its HTTP status (errors.HTTP_STATUS): TimedOut, TlsFailed, ClusterNotFound, ..."""
    from opensearchpy import exceptions as os_errors

    from indexer.opensearch.cluster.failover import NoNodeAnswered

    url = redacted(connection.url)
    try:
        yield
    except NoNodeAnswered as error:
        said = "; ".join(f"{where} {what}" for where, what in error.tried)
        if error.timed_out:
            raise TimedOut(
                f"no node of the cluster answered within {connection.timeout:g}s: {said}",
                hint=f"raise --timeout, or {START_HINT}",
            ) from None
        raise Unreachable(f"no node of the cluster answered: {said}", hint=START_HINT) from None
    except os_errors.SSLError as error:
        raise TlsFailed(
            f"TLS to {url} failed: {short_reason(error)}",
            hint="pass the cluster's CA with --ca-certs; --insecure skips verification (not for production)",
        ) from None
    except os_errors.ConnectionTimeout:
        raise TimedOut(
            f"OpenSearch at {url} did not answer within {connection.timeout:g}s",
            hint=f"raise --timeout, or {START_HINT}",
        ) from None
    except os_errors.ConnectionError as error:
        tls = _speaks_tls(connection.urls)
        if tls is not None:
            raise Unreachable(
                f"OpenSearch at {redacted(tls)} closed a plain-HTTP request: the port looks like TLS (https)",
                hint=f"use {redacted('https' + tls[4:])} (with --ca-certs for its CA)",
            ) from None
        raise Unreachable(f"OpenSearch did not answer at {url}: {short_reason(error)}", hint=START_HINT) from None
    except os_errors.TransportError as error:
        _refused(url, error)


def _speaks_tls(urls: list[str]) -> str | None:
    """The first http:// URL whose port completes a TLS handshake (a secured node asked in plain HTTP,
    which closes the connection: "RemoteDisconnected"), or None. Asked only once a request has failed."""
    import ssl

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            continue
        try:
            with (
                socket.create_connection((parts.hostname, parts.port or 9200), timeout=2.0) as raw,
                context.wrap_socket(raw, server_hostname=parts.hostname),
            ):
                return url
        except (OSError, ValueError):
            continue
    return None


def _refused(url: str, error: Exception) -> NoReturn:
    """The LawindexError for a request OpenSearch answered and refused: a block, credentials, a missing
    permission, or anything else it said."""
    from opensearchpy import exceptions as os_errors

    blocks = _blocks(error)
    if blocks:
        said = "; ".join(blocks)
        if any(_WRITE_BLOCK.search(block) for block in blocks):
            raise WriteBlocked(
                f"OpenSearch at {url} is read-only: a cluster block forbids writes ({said})",
                hint="lift the block (cluster.blocks.read_only, or the index's index.blocks.*, which the disk "
                "flood-stage watermark sets) and load again; what was served before still serves",
            ) from None
        raise ClusterBlocked(f"OpenSearch at {url} refused the request: a cluster block ({said})") from None
    if isinstance(error, os_errors.AuthenticationException):
        raise ClusterRefused(
            f"OpenSearch at {url} refused the credentials (401)",
            hint="check OPENSEARCH_USER and OPENSEARCH_PASSWORD",
        ) from None
    if isinstance(error, os_errors.AuthorizationException):
        raise ClusterRefused(
            f"OpenSearch at {url} refused the request (403): the user lacks a permission ({short_reason(error)})",
            hint="the user needs read (and, to load, write and manage) on lawindex-* indices",
        ) from None
    status = getattr(error, "status_code", "an error")
    refused = ClusterNotFound if isinstance(error, os_errors.NotFoundError) else ClusterRefused
    raise refused(f"OpenSearch at {url} answered {status}: {short_reason(error)}") from None


# What a block forbids is in its description: `cluster read-only (api)`, `index read-only / allow delete
# (api)`, `index write (api)`, `index metadata (api)`, the flood-stage watermark's. `index read (api)`
# forbids reads, and a block while the cluster starts (`state not recovered`) forbids everything.
_WRITE_BLOCK = re.compile(r"read-only|write|metadata|flood-stage", re.IGNORECASE)
_BLOCK = re.compile(r"\[(?:FORBIDDEN|TOO_MANY_REQUESTS|SERVICE_UNAVAILABLE)/\d+/([^\]]+)\]")


def _blocks(error: Exception) -> list[str]:
    """The descriptions of the blocks that refused a request (`cluster read-only (api)`), or none."""
    info = getattr(error, "info", None)
    text = str(info) if isinstance(info, dict) else ""
    if "cluster_block_exception" not in text:
        return []
    return list(dict.fromkeys(_BLOCK.findall(text)))
