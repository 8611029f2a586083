"""`lawindex serve` as its own process, for the service's tests: started on a free port, waited for, stopped.

Ports come from LAWINDEX_SERVE_PORTS (`8070-8099` by default), so that several engineers' test runs on
one machine do not take each other's ports.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import Corpus
from tests.integration.support import LAWINDEX, drop_namespace, unique_namespace


def _port_range() -> range:
    """LAWINDEX_SERVE_PORTS; under pytest-xdist, this worker's share of it (every n-th port from its number):
    two workers that probed the same free port at once each started a service on it, and one's questions were
    answered by the other's service (a 404 for another test's namespace, in CI)."""
    low, high = os.environ.get("LAWINDEX_SERVE_PORTS", "8070-8099").split("-")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if worker.startswith("gw") and workers > 1:
        return range(int(low) + int(worker[2:]) % workers, int(high) + 1, workers)
    return range(int(low), int(high) + 1)


def free_port() -> int:
    """A port of the range that nothing listens on now."""
    for port in _port_range():
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_port_range()} (LAWINDEX_SERVE_PORTS)")


@dataclass
class Service:
    """A running `lawindex serve`: its URL and its process."""

    url: str
    process: subprocess.Popen[bytes]
    log: str = ""

    def stop(self, timeout: float = 60, *, signalled: bool = False) -> int:
        """SIGTERM (unless `signalled` already), then its exit code (the log is kept in `log`). Never a second
        SIGTERM: one that lands while Python finalizes meets the default handler again, and kills."""
        if not signalled and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        self.log = err.decode("utf-8", "replace")
        return self.process.returncode


def start(env: dict[str, str], *args: str, ready: str = "/healthz", wait: float = 60) -> Service:
    """`lawindex serve ARGS` on a free port, once `ready` answers 200 (or anything, for ready="")."""
    port = free_port()
    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port), *args],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    service = Service(f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            service.stop()
            raise RuntimeError(f"lawindex serve exited {process.returncode}: {service.log}")
        try:
            if httpx.get(service.url + (ready or "/healthz"), timeout=5).status_code == 200 or not ready:
                return service
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    service.stop()
    raise RuntimeError(f"lawindex serve was not ready in {wait}s: {service.log}")


@contextmanager
def running(env: dict[str, str], *args: str, ready: str = "/healthz") -> Iterator[Service]:
    """A `lawindex serve` for the block; stopped after it, and it must exit 0 on SIGTERM, traceback-free."""
    service = start(env, *args, ready=ready)
    try:
        yield service
    except BaseException:
        service.stop()  # never left running; the block's own failure is the one reported
        raise
    code = service.stop()
    assert "Traceback" not in service.log, service.log
    assert code == 0, service.log


@contextmanager
def loaded(opensearch_url: str, corpora: list[Corpus]) -> Iterator[dict[str, str]]:
    """`corpora` loaded in a namespace of their own (dropped after): the environment that reaches them, for a
    module's `env` fixture."""
    namespace = unique_namespace()
    connection = Connection.from_env(opensearch_url, namespace=namespace)
    load(connection, corpora)
    yield {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    drop_namespace(connection.client(), namespace)


def more_files() -> None:
    """As many open files as the hard limit allows, up to 8,192: for a process that holds a thousand connections."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))


async def reopened(port: int, stop: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """A connection to the service on 127.0.0.1:`port`, tried every half second until it opens; None once `stop`
    (a multiprocessing Event) is set."""
    while not stop.is_set():
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.5)
    return None


def in_parallel(slow: Callable[[], Coroutine[Any, Any, None]], many: int, stop: Any) -> None:
    """`many` tasks of `slow` on one event loop until `stop` (a multiprocessing Event) is set, then cancelled."""

    async def run() -> None:
        tasks = [asyncio.create_task(slow()) for _ in range(many)]
        while not stop.is_set():
            await asyncio.sleep(0.2)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(run())
