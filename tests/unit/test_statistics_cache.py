"""`StatisticsCache.fresh`'s rule for a read under way: a request for the statistics now behind the alias (a retry
that has just found the cached generation stale) never shares a read begun before it came, which may have read
the alias before it moved; a request content with those already kept (`cached`) still shares it.

A real cache; its one read of OpenSearch (`_fetch`) replaced by one that reads a stand-in alias and is held open
until the test lets it end, so the order of events is made, never timed.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any, cast

import pytest

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.statistics import IndexStatistics, StatisticsCache


def _statistics(index: str) -> IndexStatistics:
    return IndexStatistics(
        index=index,
        size=0,
        average=0.0,
        vocabulary={},
        spelling=cast(Any, None),
        doc_count=0,
        total_length=0,
        digests=b"",
    )


class _Watched:
    """The cache's lock, telling when a thread named `who` has left it for the first time (it has come, and
    looked at the reads under way)."""

    def __init__(self, who: str) -> None:
        self._lock = threading.Lock()
        self.who = who
        self.left = threading.Event()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._lock.release()
        if threading.current_thread().name == self.who:
            self.left.set()


class _Alias:
    """A stand-in for the state's alias, and reads of it held open: the first read says when it has read the
    alias and ends only when `release` is set."""

    def __init__(self) -> None:
        self.index = "lawindex-tx-1"
        self.reads: list[str] = []
        self.reading = threading.Event()
        self.release = threading.Event()

    def fetch(self, state: str) -> IndexStatistics:
        read = self.index
        self.reads.append(read)
        if len(self.reads) == 1:
            self.reading.set()
            assert self.release.wait(60)
        return _statistics(read)


def _race(monkeypatch: pytest.MonkeyPatch, cached: bool) -> tuple[list[str], dict[str, str]]:
    """A first read of the alias under way; the alias moves; a second request comes (`cached` or not) before the
    first read ends. The reads made, and what each request got."""
    cache = StatisticsCache(Connection(), lambda: cast(Any, None))
    alias = _Alias()
    watched = _Watched("second")
    monkeypatch.setattr(cache, "_fetch", alias.fetch)
    monkeypatch.setattr(cache, "_lock", watched)
    got: dict[str, str] = {}

    def ask(name: str, cached: bool) -> None:
        got[name] = cache.fresh("TX", cached=cached).index

    first = threading.Thread(target=ask, args=("first", False), name="first")
    first.start()
    assert alias.reading.wait(60)
    alias.index = "lawindex-tx-2"  # the alias moves while the first read is under way
    second = threading.Thread(target=ask, args=("second", cached), name="second")
    second.start()
    assert watched.left.wait(60)  # the second request has come, the first read still under way
    alias.release.set()
    first.join(60)
    second.join(60)
    return alias.reads, got


def test_a_request_for_the_statistics_now_never_shares_a_read_begun_before_it_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads, got = _race(monkeypatch, cached=False)
    assert got == {"first": "lawindex-tx-1", "second": "lawindex-tx-2"}
    assert reads == ["lawindex-tx-1", "lawindex-tx-2"]


def test_a_request_content_with_the_kept_statistics_shares_the_read_under_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads, got = _race(monkeypatch, cached=True)
    assert got == {"first": "lawindex-tx-1", "second": "lawindex-tx-1"}
    assert reads == ["lawindex-tx-1"]  # one read, shared (benchmarks/first_questions.py)
