"""What lawindex's client sent again, by why (a count a process keeps): the bounded retries of
indexer.opensearch.cluster.failover (a node that refused or dropped the connection, or timed out, tried on
another) and connection.py's (a 5xx of a node leaving the cluster, asked again after a pause). The rolling upgrade's
test and benchmarks read it; nothing decides by it."""

from __future__ import annotations

import threading
from collections import Counter

_counts: Counter[str] = Counter()
_guard = threading.Lock()


def note(why: str) -> None:
    """One request sent again, for `why`."""
    with _guard:
        _counts[why] += 1


def counts() -> Counter[str]:
    """The retries since the process began (or since `reset`), by why."""
    with _guard:
        return Counter(_counts)


def reset() -> None:
    with _guard:
        _counts.clear()
