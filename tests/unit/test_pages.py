"""No request asks for more than search_limits.PAGE laws: `search_limits.best` reads a wide window in pages, and
`search_limits.pages` pages on with `search_after` until a page is not full. The search here answers from a list
in the order OpenSearch sorts by (score descending, then corpus order), as a node does."""

from __future__ import annotations

from typing import Any

import numpy as np

from indexer.opensearch.read import search_limits
from indexer.opensearch.read.rescore import Scored, plugin_proven

ROWS = [{"_id": str(n), "_score": float(5000 - n // 7), "order": n} for n in range(5000)]


class Node:
    """A search over ROWS by (_score desc, order asc), with the sizes it was asked for."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        self.sizes.append(body["size"])
        rows = ROWS
        if "search_after" in body:
            score, order = body["search_after"]
            rows = [row for row in ROWS if (-row["_score"], row["order"]) > (-score, order)]
        return [{**row, "sort": [row["_score"], row["order"]]} for row in rows[: body["size"]]]


def test_a_window_past_a_page_is_read_in_pages_and_is_the_same_prefix() -> None:
    node = Node()
    got = search_limits.best(node, {"match_all": {}}, 4096, None)
    assert [row["_id"] for row in got] == [row["_id"] for row in ROWS[:4096]]
    assert max(node.sizes) == search_limits.PAGE and len(node.sizes) == 5


def test_a_learnt_result_window_smaller_than_a_page_bounds_the_pages() -> None:
    node = Node()
    assert len(search_limits.best(node, {"match_all": {}}, 100, 20)) == 100
    assert node.sizes == [20] * 5


def test_a_window_within_a_page_is_one_request() -> None:
    node = Node()
    assert len(search_limits.best(node, {"match_all": {}}, 1000, None)) == 1000
    assert node.sizes == [1000]


def test_pages_end_with_the_first_page_that_is_not_full() -> None:
    node = Node()
    pages = list(search_limits.pages(node, {"match_all": {}}, 256))
    assert sum(len(page) for page in pages) == len(ROWS)
    assert [len(page) for page in pages[:-1]] == [256] * (len(pages) - 1) and len(pages[-1]) < 256
    assert max(node.sizes) == 256


def _scored(scores: list[float]) -> list[Scored]:
    return [Scored({}, score, order) for order, score in enumerate(scores)]


def test_the_plugin_s_boundary_is_proven_only_below_the_float_nearest_the_limit_th_score() -> None:
    s = 1.2345678901234567
    nearest = float(np.float32(s))
    below = float(np.nextafter(np.float32(nearest), np.float32(0)))
    # A law left out with the limit-th's own float could tie it and win on corpus order: not proven.
    assert not plugin_proven(_scored([2.0, s]), {"_score": nearest}, 2)
    # One float below: every law left out scores less than s.
    assert plugin_proven(_scored([2.0, s]), {"_score": below}, 2)
    assert plugin_proven(_scored([2.0, s]), {"_score": 9.0, "sort": [below, 7]}, 2)
    # Fewer laws read than the limit: nothing to prove against.
    assert not plugin_proven(_scored([2.0]), {"_score": 0.5}, 2)
