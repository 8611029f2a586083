"""The fast window search: `POST /<index>/_search` in one write on a keep-alive socket, beside opensearch-py's
path that it must equal (tests/unit/test_fast_search.py holds them equal) and that answers everything else."""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from indexer.observe import timed

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from indexer.opensearch.cluster.connection import Connection


class FastSearch:
    """`POST /<index>/_search`, the one request a question makes, on a lighter path than opensearch-py's.

    A question's window search cost the service 0.66 ms of CPU through opensearch-py and urllib3 (their
    transport, retry and header objects, the headers and the body in two writes, the urllib3 response, a
    `str` of the body, then `json.loads`); 0.30 ms through the stdlib's http.client (which parses headers
    with the email package, and also writes twice), and 0.15 ms as here: the request in one write on a
    keep-alive socket of the thread's own, the answer read by its Content-Length, and parsed by orjson
    (0.14 ms of `json.loads` for a window of 16 laws, 19 kB). The headers are those of the opensearch-py
    client's own connection (its user agent, its credentials), so OpenSearch sees the same request.

    Only the plain case is answered here: a 200 with a Content-Length and a JSON object. Anything else (an
    error status, a chunked or unexpected answer, a connection that fails twice, a body that is not JSON) is
    asked again through opensearch-py, so that every error is exactly its own, with its retries and its
    messages (which `errors_translated` turns into lawindex's); a search changes nothing, so asking twice is safe. A
    timeout is said at once, as opensearch-py's ConnectionTimeout, not waited for twice. https goes through
    opensearch-py always: its TLS settings are the ones users give; so do several hosts (a cluster's URLs).
    """

    def __init__(self, connection: Connection, client: OpenSearch) -> None:
        self.client = client
        self.timeout = connection.timeout
        parts = urlsplit(connection.urls[0])
        # One plain-http node and no copy asked for: several hosts need the pool's choice of a live host and
        # its retries on another, and a `preference` is added by the client's transport.
        self.light = parts.scheme == "http" and len(connection.urls) == 1 and connection.preference is None
        self.address = (parts.hostname or "127.0.0.1", parts.port or 9200)  # as opensearch-py reads a bare http URL
        # The client's own connection: its headers (user agent, content type, credentials) and path prefix.
        own = client.transport.get_connection()
        self.prefix = str(getattr(own, "url_prefix", "") or "")
        headers = dict(getattr(own, "headers", None) or {"content-type": "application/json"})
        headers["host"] = f"{self.address[0]}:{self.address[1]}"
        self.headers = "".join(f"{name}: {value}\r\n" for name, value in headers.items() if name != "content-length")
        self._local = threading.local()

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        """What `client.search(index=index, body=body)` returns, or the exception it raises."""
        if self.light:
            with timed("opensearch"):
                found = self._light(f"{self.prefix}/{quote(index, safe=',*')}/_search", body)
            if found is not None:
                return found
        result: dict[str, Any] = self.client.search(index=index, body=body)
        return result

    def _light(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The answer of a plain 200, or None for opensearch-py to ask again (and say what went wrong)."""
        import orjson

        payload = orjson.dumps(body)
        request = f"POST {path} HTTP/1.1\r\n{self.headers}content-length: {len(payload)}\r\n\r\n".encode() + payload
        for attempt in range(2):
            reused = getattr(self._local, "socket", None) is not None
            try:
                answered = self._exchange(request)
            except TimeoutError as error:
                self._drop()
                from opensearchpy.exceptions import ConnectionTimeout

                raise ConnectionTimeout("TIMEOUT", str(error), error) from None
            except (OSError, ValueError):
                self._drop()
                if reused and attempt == 0:
                    continue  # a kept-alive connection the node had closed: once more on a new one
                return None
            if answered is None:
                return None
            try:
                found: object = orjson.loads(answered)
            except orjson.JSONDecodeError:
                return None
            return found if isinstance(found, dict) else None
        return None

    def _exchange(self, request: bytes) -> bytearray | None:
        """The body of a 200 answered with a Content-Length, or None (the socket dropped) for anything else.
        The whole answer within the timeout: a node that sends a byte now and then (a stalling proxy, a
        node in and out of GC) no longer holds a question for a timeout per read."""
        deadline = time.monotonic() + self.timeout
        sock = self._socket()
        sock.settimeout(self.timeout)
        sock.sendall(request)
        buffer = bytearray()
        while (end := buffer.find(b"\r\n\r\n")) < 0:
            buffer += _received(sock, deadline)
        status, *lines = bytes(buffer[:end]).split(b"\r\n")
        length: int | None = None
        plain = status.startswith(b"HTTP/1.1 200 ")
        for line in lines:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" or (name == b"connection" and value.strip().lower() == b"close"):
                plain = False
        body = buffer[end + 4 :]
        if length is not None:
            while len(body) < length:
                body += _received(sock, deadline)
        if not plain or length is None or len(body) != length:
            self._drop()  # what else is on the wire is not known: the next request gets a new connection
            return None
        return body

    def _socket(self) -> socket.socket:
        """This thread's connection to the node, opened on first use."""
        sock: socket.socket | None = getattr(self._local, "socket", None)
        if sock is None:
            sock = socket.create_connection(self.address, timeout=self.timeout)
            # As urllib3 does: a request is one small write, and Nagle would hold it for an ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.socket = sock
        return sock

    def _drop(self) -> None:
        sock: socket.socket | None = getattr(self._local, "socket", None)
        self._local.socket = None
        if sock is not None:
            sock.close()


def _received(sock: socket.socket, deadline: float) -> bytes:
    """The next bytes on `sock` before `deadline` (TimeoutError after it); ConnectionResetError when the node
    closed it."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the answer did not come whole within the timeout")
    sock.settimeout(left)
    chunk = sock.recv(65536)
    if not chunk:
        raise ConnectionResetError("the node closed the connection")
    return chunk
