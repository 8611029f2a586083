"""What a download says on stderr while it runs, so that a first start says what it is waiting for.

A rich bar per download on a terminal (several at once, from threads, share one display), else a few plain
lines (its start, each quarter, its end) (issue 48.5). Standard library only, rich where it is installed:
scripts/demo runs the first download before pip has installed anything (`python3 -m indexer.node.fetch`)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

MB = 1_000_000
# Plain lines: a download this small says only its end (the plugin's jars); a bigger one each quarter too.
QUIET_BELOW = 16 * MB

_lock = threading.Lock()
_display: Any = None  # the rich Progress shared by the downloads under way on a terminal
_running = 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _terminal() -> bool:
    return sys.stderr.isatty()


def megabytes(size: float) -> str:
    """`160.0 MB`, or `25 kB` below a megabyte (a small jar)."""
    return f"{size / MB:,.1f} MB" if size >= MB else f"{size / 1000:,.0f} kB"


class Download:
    """The progress of one download (or one wait on another process's): `update` with the bytes so far, `done`
    at the end. `total` is None when the server gives no length."""

    def __init__(self, what: str, total: int | None) -> None:
        self.what = what
        self.total = total
        self.began = time.monotonic()
        self.done_bytes = 0
        self._quarter = 0
        self._task: Any = None
        if _terminal() and self._open_bar():
            return
        if total is None or total >= QUIET_BELOW:
            _say(f"{what}{f' ({megabytes(total)})' if total else ''} ...")

    def _open_bar(self) -> bool:
        global _display, _running
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )
        except ImportError:  # before pip has installed rich (scripts/demo's background fetch): plain lines
            return False
        with _lock:
            if _display is None:
                _display = Progress(
                    TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True),
                )  # fmt: skip
                _display.start()
            self._task = _display.add_task(self.what, total=self.total)
            _running += 1
        return True

    def update(self, done_bytes: int) -> None:
        self.done_bytes = done_bytes
        if self._task is not None:
            _display.update(self._task, completed=done_bytes)
            return
        if self.total and self.total >= QUIET_BELOW:
            quarter = min(3, done_bytes * 4 // self.total)
            if quarter > self._quarter:
                self._quarter = quarter
                _say(f"  {self.what}: {megabytes(done_bytes)} of {megabytes(self.total)} ({quarter * 25}%)")

    def done(self, note: str = "") -> None:
        """The download ended (`note`: what became of it, when not a success)."""
        global _display, _running
        took = time.monotonic() - self.began
        if self._task is not None:
            with _lock:
                _display.update(self._task, completed=self.done_bytes, total=self.total or self.done_bytes)
                _running -= 1
                if _running == 0:
                    _display.stop()
                    _display = None
            if note:
                _say(f"{self.what}: {note}")
            return
        rate = f", {megabytes(self.done_bytes / took)}/s" if took > 0 and self.done_bytes else ""
        _say(f"  {self.what}: {note or f'{megabytes(self.done_bytes)} in {took:.1f} s{rate}'}")
