"""Signals: `stopping_on_signals` turns SIGINT and SIGTERM into a `Stop` that a load checks between bulk
chunks and before each state and each swap; nothing is raised inside a request or a clean-up, so a second
signal cannot cut one short."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from indexer.errors import LoadInterrupted


class Stop:
    """A request to stop, set once by a signal (or a caller), checked by a load between its steps."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signal_number: int | None = None

    def set(self, signal_number: int = signal.SIGINT) -> None:
        if self.signal_number is None:
            self.signal_number = signal_number
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        return self._event.wait(seconds)

    @property
    def name(self) -> str:
        return signal.Signals(self.signal_number or signal.SIGINT).name

    def check(self, state: str) -> None:
        """Raise LoadInterrupted when a stop was asked for."""
        if self.is_set():
            raise LoadInterrupted(f"{state}: stopped by {self.name}", self.signal_number or signal.SIGINT)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[Stop]:
    """A Stop that SIGINT and SIGTERM set, instead of raising KeyboardInterrupt or ending the process;
    the handlers before are restored afterwards unless a signal came (then further signals are only noted
    until the process ends). Outside the main thread it only yields the Stop."""
    stop = Stop()

    def handle(signal_number: int, _frame: FrameType | None) -> None:
        stop.set(signal_number)

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    before = {number: signal.signal(number, handle) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        # Once stopped, the process is on its way out: a further Ctrl-C must not land on Python's default
        # handler (a KeyboardInterrupt traceback), nor, once the interpreter has reset its handlers while
        # it ends, on the system's (killed by SIGINT: exit -2 instead of 130). Ignored, which the
        # interpreter's shutdown leaves alone.
        for number, handler in before.items():
            signal.signal(number, signal.SIG_IGN if stop.is_set() else handler)
