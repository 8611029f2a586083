"""A slowloris against `lawindex serve`, and what normal clients get meanwhile; then SIGTERM with it connected.

    python benchmarks/slowloris.py --url URL [--port 10170] [--slow 5000] [--seconds 10] [--files 4096]
                                   [--slow-bodies 3000] [--against DIR]

The sample Texas is loaded in a namespace of this run's own and `lawindex serve` started on it, in its own
process, with the same open-file limit on every side (--files, soft and hard, set before it starts: the
probe of issue 20 found the default 20,000 taken by two runs of 10,500 half-sent requests). For each side
(this checkout, and with --against DIR another checkout's source, e.g. the commit before a change):

- quiet: normal clients alone for --seconds;
- slowloris: --slow connections, each sending a request line and then a header line every 3 s, never the
  blank line that ends the headers, and opened again whenever the server closes it; once they are open
  (or refused), normal clients for --seconds;
- slow bodies (issue 26): the slowloris ended, --slow-bodies requests whose headers are whole and whose body
  trickles (`"x", ` every 3 s, never the end; opened again when the server closes one at its 30 s body
  timeout); once they are open, normal clients for --seconds. Before, each held one of the 256 places in
  flight, and normal requests were answered 503;
- stop: SIGTERM with the slow bodies connected: the seconds to exit, the exit code, and the tracebacks in
  the server's log.

Normal clients: 4 on kept-alive connections and 4 opening a connection a request (aiohttp, 10 s timeout),
each asking `GET /v1/states/TX/ask` in a loop. Printed per side and phase: requests, errors, q/s, p50 and
p99 (ms), and the slowloris phase's p50 and p99 over the quiet phase's of the same side (the ratio the run
compares); the server's open descriptors and resident memory after the slowloris.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora

LAWINDEX = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
CORPORA = Path(__file__).resolve().parents[1] / "corpora"
QUESTION = "/v1/states/TX/ask?q=how+far+from+a+fire+hydrant+can+i+park"
HOST = "127.0.0.1"


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


@dataclass
class Normal:
    """What the normal clients of one phase got."""

    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self, name: str) -> str:
        done = len(self.latencies)
        errors = sum(self.errors.values())
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.errors.items()))
        return (
            f"{name:<24} {done + errors:>7} {errors:>7} {done / self.seconds:>8.0f} "
            f"{percentile(self.latencies, 0.5) * 1000:>8.2f} {percentile(self.latencies, 0.99) * 1000:>8.2f}"
            + (f"   errors: {kinds}" if kinds else "")
        )


async def normal_clients(port: int, seconds: float, keep: bool, clients: int = 4) -> Normal:
    out = Normal()
    deadline = time.monotonic() + seconds

    async def client() -> None:
        connector = aiohttp.TCPConnector(limit=1, force_close=not keep)
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            while time.monotonic() < deadline:
                began = time.monotonic()
                try:
                    async with session.get(f"http://{HOST}:{port}{QUESTION}") as response:
                        await response.read()
                        if response.status == 200:
                            out.latencies.append(time.monotonic() - began)
                            continue
                        kind = f"HTTP {response.status}"
                except (TimeoutError, aiohttp.ClientError, OSError) as error:
                    kind = type(error).__name__
                out.errors[kind] = out.errors.get(kind, 0) + 1
                await asyncio.sleep(0.05)

    began = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    out.seconds = time.monotonic() - began
    return out


class Slowloris:
    """Connections that never finish their request (`body`: headers whole, a body that trickles), held by
    a process of their own: on the normal clients' event loop, thousands of them delayed the normal
    clients' requests by seconds after they connected, and the figures would have been the loop's."""

    def __init__(self, port: int, count: int, body: bool = False) -> None:
        context = multiprocessing.get_context("fork")
        self.port, self.count, self.body = port, count, body
        self.counts = context.Array("q", 3)  # opened, let go by the server, refused at connect
        self.stopping = context.Event()
        self.process = context.Process(target=self._hold, daemon=True)

    @property
    def opened(self) -> int:
        return int(self.counts[0])

    @property
    def closed_by_server(self) -> int:
        return int(self.counts[1])

    @property
    def refused(self) -> int:
        return int(self.counts[2])

    def _count(self, which: int) -> None:
        with self.counts.get_lock():
            self.counts[which] += 1

    def _hold(self) -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        asyncio.run(self._run())

    async def _run(self) -> None:
        gate = asyncio.Semaphore(200)
        tasks = [asyncio.create_task(self._one(gate)) for _ in range(self.count)]
        while not self.stopping.is_set():
            await asyncio.sleep(0.2)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, gate: asyncio.Semaphore) -> None:
        while not self.stopping.is_set():
            async with gate:
                try:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), 10)
                except (TimeoutError, OSError):
                    self._count(2)
                    await asyncio.sleep(1)
                    continue
            self._count(0)
            try:
                if self.body:
                    writer.write(
                        b"POST /v1/states/TX/ask HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                        b'content-length: 100000\r\n\r\n{"questions": ['
                    )
                else:
                    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                while not self.stopping.is_set():
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(reader.read(4096), 3)
                        self._count(1)  # an answer (408, 503) or the end: the server let go
                        break
                    writer.write(b'"x", ' if self.body else b"X-Slow: 1\r\n")
                    await writer.drain()
            except OSError:
                self._count(1)
            finally:
                writer.close()

    def start(self) -> None:
        self.process.start()

    async def ramp(self, timeout: float = 60) -> None:
        """Until every connection was opened once (or refused once)."""
        deadline = time.monotonic() + timeout
        while self.opened + self.refused < self.count and time.monotonic() < deadline:
            await asyncio.sleep(0.2)

    async def end(self) -> None:
        self.stopping.set()
        await asyncio.get_running_loop().run_in_executor(None, self.process.join, 30)
        if self.process.is_alive():
            self.process.kill()


def start_serve(port: int, env: dict[str, str], files: int, source: str | None) -> tuple[subprocess.Popen[bytes], Path]:
    log = Path(tempfile.mkstemp(prefix="slowloris-serve-", suffix=".log")[1])

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    process = subprocess.Popen(
        [*LAWINDEX, "serve", "--port", str(port)],
        env={**os.environ, **env, **({"PYTHONPATH": source} if source else {})},
        # `python -c` puts its working folder first on sys.path: run from this checkout, the other side
        # would import this checkout's lawindex, whatever PYTHONPATH says.
        cwd=source,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        preexec_fn=limit_files,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/readyz", timeout=2) as response:
                if response.status == 200:
                    return process, log
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"lawindex serve on {port} was not ready: {log.read_text()[-2000:]}")


def proc_numbers(pid: int) -> tuple[int, float]:
    """(open descriptors, resident MiB) of a process."""
    files = len(os.listdir(f"/proc/{pid}/fd"))
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return files, rss


async def side(name: str, port: int, env: dict[str, str], args: argparse.Namespace, source: str | None) -> None:
    process, log = start_serve(port, env, args.files, source)
    header = f"{'':<24} {'requests':>7} {'errors':>7} {'q/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    print(f"\n== {name} ({source or 'this checkout'}), server open-file limit {args.files}", flush=True)
    print(header)
    quiet = {keep: await normal_clients(port, args.seconds, keep) for keep in (True, False)}
    for keep, got in quiet.items():
        print(got.line(f"quiet, {'kept-alive' if keep else 'new conn.'}"), flush=True)
    for body in (False, True):
        what = "slow bodies" if body else "slow headers"
        slow = Slowloris(port, args.slow_bodies if body else args.slow, body=body)
        slow.start()
        await slow.ramp()
        print(f"{what}: {slow.opened} opened, {slow.refused} refused at connect", flush=True)
        loaded = {keep: await normal_clients(port, args.seconds, keep) for keep in (True, False)}
        for keep, got in loaded.items():
            print(got.line(f"{what}, {'kept-alive' if keep else 'new conn.'}"), flush=True)
            base = quiet[keep]
            print(
                f"{'':<24} p50 x{percentile(got.latencies, 0.5) / percentile(base.latencies, 0.5):.2f}, "
                f"p99 x{percentile(got.latencies, 0.99) / percentile(base.latencies, 0.99):.2f} of quiet",
                flush=True,
            )
        files, rss = proc_numbers(process.pid)
        print(
            f"server: {files} open descriptors, {rss:.0f} MiB resident; {what} so far: {slow.opened} opened, "
            f"{slow.closed_by_server} let go by the server, {slow.refused} refused",
            flush=True,
        )
        if not body:
            await slow.end()
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    while process.poll() is None and time.monotonic() - began < 90:
        await asyncio.sleep(0.1)
    took = time.monotonic() - began
    if process.poll() is None:
        process.kill()
    await slow.end()
    text = log.read_text(encoding="utf-8", errors="replace")
    print(
        f"SIGTERM with {args.slow_bodies} slow bodies connected: exit "
        f"{process.wait()} after {took:.1f} s; {text.count('Traceback')} tracebacks, "
        f"{text.count('Exception in ASGI application')} 'Exception in ASGI application'",
        flush=True,
    )
    log.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    parser.add_argument("--port", type=int, default=10170, help="this side's port; --against's is the next")
    parser.add_argument("--slow", type=int, default=3000, help="slow-header connections")
    parser.add_argument("--slow-bodies", type=int, default=3000, help="slow-body connections (held at SIGTERM)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each phase of normal clients")
    parser.add_argument("--files", type=int, default=4096, help="the server's open-file limit (soft and hard)")
    parser.add_argument("--against", default=None, help="a checkout whose `lawindex serve` is run first")
    args = parser.parse_args()
    # This process holds the slowloris: its own descriptors raised to the hard limit.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    namespace = f"lawindex_slowloris{os.getpid()}"
    connection = Connection.from_env(args.url, namespace=namespace)
    load(connection, read_corpora(CORPORA, ["TX"]))
    env = {"OPENSEARCH_URL": args.url, "LAWINDEX_NAMESPACE": namespace}
    try:
        if args.against:
            asyncio.run(side("before", args.port + 1, env, args, args.against))
        asyncio.run(side("after", args.port, env, args, None))
    finally:
        from tests.integration.support import drop_namespace

        drop_namespace(connection.client(), namespace)


if __name__ == "__main__":
    main()
