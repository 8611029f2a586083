"""What the unit tests share as fixtures (plain helpers are modules beside this one: commands.py, laws.py)."""

from __future__ import annotations

import functools
import http.server
import socketserver
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

Server = TypeVar("Server", bound=socketserver.BaseServer)

# How often a test's server looks whether it should stop. serve_forever's default, 0.5 s, is what each
# shutdown() waits at worst: half a second a test, for nothing.
POLL_INTERVAL = 0.01


@pytest.fixture
def serving() -> Iterator[Callable[[Server], Server]]:
    """`serving(server)` serves `server` (a socketserver: an HTTP server on 127.0.0.1, port 0) from a thread
    until the test ends, then shuts it down and closes its socket."""
    started: list[tuple[socketserver.BaseServer, threading.Thread]] = []

    def serve(server: Server) -> Server:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL}, daemon=True)
        thread.start()
        started.append((server, thread))
        return server

    yield serve
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _Repo(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serving: Callable[[Any], Any]) -> Path:
    """A Maven repository on 127.0.0.1 that serves exactly the files put in it (404 for the others), as Maven
    Central serves files and their digests; LAWINDEX_MAVEN_REPO points at it, and no digest is given by hand."""
    from indexer.node import distribution

    root = tmp_path / "repo"
    root.mkdir()
    server = serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Repo, directory=str(root))))
    monkeypatch.setenv("LAWINDEX_MAVEN_REPO", f"http://127.0.0.1:{server.server_address[1]}/")
    monkeypatch.delenv(distribution.USER_DIGEST, raising=False)
    return root
