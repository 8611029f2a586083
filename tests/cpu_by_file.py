"""CPU by test file: a pytest plugin (`-p tests.cpu_by_file`) that, with LAWINDEX_CPU_BY_FILE=PATH set, writes
one line per test file of the CPU seconds its tests spent, setup and teardown included: the node's (every node
of OPENSEARCH_URL, from `_nodes/stats/process`), pytest's own process, and the processes its tests ran and
waited for (`lawindex` commands). Run the files one at a time (no xdist) for figures that are each file's own.

    LAWINDEX_CPU_BY_FILE=/tmp/cpu.tsv OPENSEARCH_URL=http://127.0.0.1:9250 \
        python -m pytest -p tests.cpu_by_file -p no:xdist tests/integration
"""

from __future__ import annotations

import collections
import json
import os
import urllib.request
from collections.abc import Iterator

import pytest

_spent: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])


def _node_cpu() -> float:
    url = os.environ.get("OPENSEARCH_URL", "").split(",")[0].rstrip("/")
    if not url:
        return 0.0
    try:
        with urllib.request.urlopen(f"{url}/_nodes/stats/process", timeout=30) as response:
            stats = json.loads(response.read())
    except OSError:
        return float("nan")
    return sum(n["process"]["cpu"]["total_in_millis"] for n in stats["nodes"].values()) / 1000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not os.environ.get("LAWINDEX_CPU_BY_FILE"):
        yield
        return
    node, times = _node_cpu(), os.times()
    yield
    after, now = _node_cpu(), os.times()
    row = _spent[item.nodeid.split("::")[0]]
    row[0] += after - node
    row[1] += now.user + now.system - times.user - times.system
    row[2] += now.children_user + now.children_system - times.children_user - times.children_system
    row[3] += now.elapsed - times.elapsed


def pytest_sessionfinish() -> None:
    path = os.environ.get("LAWINDEX_CPU_BY_FILE")
    if not path or not _spent:
        return
    rows = sorted(_spent.items(), key=lambda kv: -(kv[1][0] + kv[1][1] + kv[1][2]))
    with open(path, "w", encoding="utf-8") as out:
        out.write("file\tnode_cpu_s\tpytest_cpu_s\tcommands_cpu_s\ttotal_cpu_s\twall_s\n")
        for name, (node, own, children, wall) in rows:
            out.write(f"{name}\t{node:.1f}\t{own:.1f}\t{children:.1f}\t{node + own + children:.1f}\t{wall:.1f}\n")
