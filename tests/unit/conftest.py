"""What the unit tests share as fixtures (plain helpers are modules beside this one: commands.py, laws.py)."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

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
