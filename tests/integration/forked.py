"""`lawindex` commands as processes of their own, forked from one that has already imported the library.

A command started fresh spends about half a second of CPU on the interpreter and its imports (opensearch-py,
numpy, pydantic, typer; WordLlama for meaning) before it does its work, and the integration tests run hundreds
of them. So each pytest process starts one *zygote* (`Zygote`), once: it prepares the process as
`indexer.cli.main` does before anything is imported (one BLAS thread, the collector's threshold, no aiohttp),
imports the application and every module of the library, and then only forks. A command is a fork of it:

- a process of its own (its pid, its exit status, a signal that ends it ends only it), whose parent waits;
- the test's environment (`os.environ` replaced whole, so the C library's too), working folder and argv;
- standard input from a file or /dev/null, standard output and error to files, opened as the interpreter
  opens them (stdout block-buffered, stderr line-buffered, the zygote's encodings);
- `indexer.cli.main()`, the console script's entry point, then the exit handlers, as an interpreter exits.

What it does not repeat is what an interpreter decides at its start or a module at its import. Nothing in
`indexer` reads the environment at import (each command reads it when it runs); a command whose environment
changes what the interpreter or rich settle at start (`PYTHON*`, the locale, the terminal's colour and width
variables) runs fresh instead, and `LAWINDEX_FRESH_COMMANDS=1` runs every command fresh (the same tests, for a
comparison). `lawindex serve`'s modules (indexer.service: uvicorn, FastAPI, prometheus-client's multiprocess
mode, which reads its folder from the environment at import) are not imported ahead.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import logging
import os
import pkgutil
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `lawindex` as a fresh process, through the same entry point as the console script.
FRESH = [sys.executable, "-c", "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"]
# Read by the interpreter or rich when they start, not when a command runs: a command that sets one runs fresh.
AT_START = ("PYTHON", "LANG", "LC_", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "OPENBLAS_")
NOT_AHEAD = ("indexer.service",)


def starts_fresh(env: dict[str, str], started_in: dict[str, str]) -> bool:
    """Whether a command with `env` must start a fresh interpreter: asked to, or `env` differs from the
    zygote's (`started_in`) in something read at an interpreter's start."""
    if env.get("LAWINDEX_FRESH_COMMANDS") == "1":
        return True
    names = set(env) | set(started_in)
    return any(name.startswith(AT_START) and env.get(name) != started_in.get(name) for name in names)


class Zygote:
    """One zygote for this process, started on first use and stopped at its exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        # Made at the first start (not at import: the zygote imports this module too), removed at the stop.
        self._folder: Path | None = None
        self.environment = dict(os.environ)  # the zygote's: this process's when it imported this module
        atexit.register(self.stop)

    def _started(self) -> Path:
        """The folder of the running zygote (its socket, the commands' files), started if it is not."""
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="lawindex-zygote."))
            if self._process is None or self._process.poll() is not None:
                (self._folder / "socket").unlink(missing_ok=True)
                self._process = subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        "from tests.integration.forked import serve; serve()",
                        str(self._folder / "socket"),
                    ],
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    env=self.environment,
                )
                assert self._process.stdout is not None
                ready = self._process.stdout.readline()
                if ready != b"ready\n":
                    self._process.kill()
                    raise AssertionError(f"the command zygote did not start: {ready!r}")
            return self._folder

    def stop(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._process.terminate()
                try:
                    self._process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            self._process = None
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    def run(
        self, args: list[str], env: dict[str, str], stdin: bytes | None, timeout: float
    ) -> tuple[int, bytes, bytes]:
        """`lawindex ARGS` forked: exit code (minus the signal that ended it), stdout, stderr; on `timeout`
        seconds the command is killed and subprocess.TimeoutExpired raised, as subprocess.run does."""
        zygote = self._started()
        with tempfile.TemporaryDirectory(dir=zygote) as folder:
            files = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
            if stdin is not None:
                Path(files["stdin"]).write_bytes(stdin)
            request = {
                "args": args,
                "env": env,
                "cwd": os.getcwd(),
                **files,
                "stdin": files["stdin"] if stdin is not None else os.devnull,
            }
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(str(zygote / "socket"))
                connection.sendall(json.dumps(request).encode() + b"\n")
                answers = connection.makefile("rb")
                pid = int(answers.readline())
                connection.settimeout(timeout)
                try:
                    status = answers.readline()
                except TimeoutError:
                    os.kill(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired(["lawindex", *args], timeout) from None
            if not status:
                raise AssertionError(f"the command zygote lost `lawindex {' '.join(args)}` (pid {pid})")
            return int(status), Path(files["stdout"]).read_bytes(), Path(files["stderr"]).read_bytes()


_ZYGOTE = Zygote()


def run(
    args: list[str], env: dict[str, str], stdin: bytes | None = None, timeout: float = 120
) -> tuple[int, bytes, bytes]:
    """`lawindex ARGS` as a process of its own with `env` (complete): forked from this process's zygote, or
    fresh where `starts_fresh` says so. Exit code, stdout, stderr."""
    if starts_fresh(env, _ZYGOTE.environment):
        done = subprocess.run([*FRESH, *args], input=stdin, capture_output=True, env=env, timeout=timeout)
        return done.returncode, done.stdout, done.stderr
    return _ZYGOTE.run(args, env, stdin, timeout)


# The zygote's side.


def serve() -> None:
    """The zygote: prepared and imported as a command would be, then one fork per connection on the socket
    named by argv[1]; it ends when its parent does."""
    path = sys.argv[1]
    # What indexer.cli.main does before it imports anything (read there for why).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import gc

    gc.set_threshold(100_000)
    sys.modules.setdefault("aiohttp", None)  # type: ignore[arg-type]
    import indexer
    from indexer import cli

    cli._app()
    for module in pkgutil.walk_packages(indexer.__path__, "indexer."):
        if not module.name.startswith(NOT_AHEAD):
            importlib.import_module(module.name)
    for name in ("tokenizers", "safetensors.numpy"):  # what the embedder imports as it loads
        importlib.import_module(name)
    if logging.getLogger().handlers:
        raise SystemExit(
            f"an import configured the root logger, as a fresh command's would not: {logging.getLogger().handlers}"
        )
    gc.freeze()  # what is imported stays, and the forks' collections need not walk it
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda number, _frame: stopping.append(number))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while os.getppid() == parent and not stopping:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            connection = None
        if connection is not None:
            if os.fork() == 0:
                listener.close()
                _one(connection)
            connection.close()
        while True:  # the forks that have answered
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
    # Stopped: the forks still answering are awaited, so that their CPU is counted with the zygote's.
    with contextlib.suppress(ChildProcessError):
        while True:
            os.waitpid(-1, 0)


def _one(connection: socket.socket) -> None:
    """In a fork of the zygote: read one request, fork the command, answer its pid and then its exit code."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        connection.settimeout(None)
        request = json.loads(connection.makefile("rb").readline())
        pid = os.fork()
        if pid == 0:
            connection.close()
            _command(request)
        connection.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        code = 0
    finally:
        os._exit(code)


def _command(request: dict) -> None:  # type: ignore[type-arg]
    """In the command's own process: its folder, environment and standard streams, then main() and exit."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for fd, name, flags in (
            (0, "stdin", os.O_RDONLY),
            (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(request[name], flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        # As the interpreter opens them: the same encodings, stdout block-buffered, stderr line-buffered.
        encoding, errors = sys.__stdout__.encoding, sys.__stdout__.errors  # type: ignore[union-attr]
        sys.stdin = sys.__stdin__ = open(0, encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
        sys.stdout = sys.__stdout__ = open(1, "w", encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
            2, "w", buffering=1, encoding=encoding, errors="backslashreplace", closefd=False
        )
        sys.argv = ["lawindex", *request["args"]]
        from indexer.cli import main

        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = _exit_code(exit_.code)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # the process ends: nothing to tell it to
                stream.flush()
        os._exit(code)


def _exit_code(code: object) -> int:
    """The status an interpreter exits with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
