"""OpenSearch's own limits, and how `ask` and `--family` stay exact within them.

Three limits cut answers that the reference gives, each found by a hostile user:

- `indices.query.bool.max_clause_count` (1,024 by default, a dynamic cluster setting): a question whose
  expansion passes it was refused by the node, and ended in a traceback. Its terms are now asked in
  groups of at most the limit, one request a group (`indexer.retrieval.bound.grouped_bound`: why the
  window proof composes over groups).
- `index.max_result_window` (10,000 by default, per index): a window widened past it, as ties wider than
  it make it, was refused. A window larger than the limit is now read in pages with `search_after`,
  sorted by `_score` then corpus order, so each page goes on exactly where the last one ended.
- pages: `--family` asked for 1,000 rows and silently returned no more. It now reads every page.

Neither limit is read from the cluster before it matters (that would cost a request a question): the
node's refusal says the limit it enforced (`maxClauseCount is set to 8`, `less than or equal to: [20]`),
and the engine remembers it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opensearchpy import TransportError

# The most rows one request asks for: a page of a family, of a window, of the plugin's ties. A family is a
# handful of rows, so one request nearly always holds it. A window of 16,384 laws asked at once (12,000
# exact ties, which widen it 16 -> 64 -> ... -> 16,384) made the node build every hit's source in one
# answer; on a 512 MB heap that is what trips the parent breaker. Past PAGE rows a window is read in pages.
PAGE = 1000

_CLAUSES = re.compile(r"maxClauseCount is set to (\d+)")
_WINDOW = re.compile(r"Result window is too large, from \+ size must be less than or equal to: \[(\d+)\]")


class TooManyClauses(Exception):
    """The node refused a query of `sent` clauses; `limit` is the most it takes, when it said so."""

    def __init__(self, sent: int, limit: int | None) -> None:
        super().__init__(f"{sent} clauses, limit {limit}")
        self.sent = sent
        self.limit = limit

    def smaller(self) -> int:
        """How many clauses to send a request from now on: fewer than were refused, always."""
        return max(1, min(self.limit or self.sent // 2, self.sent - 1))


class WindowTooLarge(Exception):
    """The index refused a request for more hits than `index.max_result_window`, which is `limit`."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"result window {limit}")
        self.limit = limit


def _reasons(info: object) -> Iterator[tuple[str, str]]:
    """Every (type, reason) pair in an OpenSearch error body, root causes and causes included."""
    if isinstance(info, dict):
        if "type" in info or "reason" in info:
            yield str(info.get("type", "")), str(info.get("reason", ""))
        for value in info.values():
            yield from _reasons(value)
    elif isinstance(info, list):
        for value in info:
            yield from _reasons(value)


def limit_refused(error: TransportError, clauses: int, size: int) -> TooManyClauses | WindowTooLarge | None:
    """The limit that made OpenSearch refuse a search of `clauses` term clauses for `size` hits, if one
    did (the error to raise instead of `error`); None for any other failure."""
    for kind, reason in _reasons(error.info):
        window = _WINDOW.search(reason)
        if window:
            return WindowTooLarge(int(window.group(1)))
        found = _CLAUSES.search(reason)
        if found or kind in ("too_many_clauses", "too_many_nested_clauses"):
            return TooManyClauses(clauses, int(found.group(1)) if found else None)
    return None


def groups(terms: list[str], most: int | None) -> list[list[str]]:
    """`terms` in order, cut into groups of at most `most` (one group when there is no known limit)."""
    if most is None or len(terms) <= most:
        return [terms]
    return [terms[start : start + most] for start in range(0, len(terms), most)]


Search = Callable[[dict[str, Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Candidates:
    """OpenSearch's best `size` laws for one group of terms: complete when fewer matched than that, so
    that no law outside it has any of the group's words; else every law outside scores at most `lowest`."""

    terms: list[str]
    hits: list[dict[str, Any]]
    complete: bool

    @property
    def lowest(self) -> float:
        """The lowest OpenSearch score in the window (OpenSearch left out only laws scoring at most this)."""
        return min((float(hit["_score"]) for hit in self.hits), default=0.0)


def best(search: Search, query: dict[str, Any], size: int, page: int | None) -> list[dict[str, Any]]:
    """OpenSearch's `size` best hits for `query`: one request when at most `page` (the result window, as
    learnt) and PAGE rows, else pages of at most that many (`pages`). Either way every law they leave out
    scores at most the last one returned."""
    page = min(page or PAGE, PAGE)
    if size <= page:
        return search({"size": size, "track_total_hits": False, "query": query})
    hits: list[dict[str, Any]] = []
    for found in pages(search, query, page):
        hits += found[: size - len(hits)]
        if len(hits) >= size:
            break
    return hits


def pages(search: Search, query: dict[str, Any], page: int) -> Iterator[list[dict[str, Any]]]:
    """The hits of `query` in pages of `page` (at most PAGE), sorted by `_score` and then corpus order, each
    read with `search_after` from the last one's sort values, until a page is not full. The pages together
    are a prefix of that order, so every law they have not reached yet scores at most the last one read
    (`sort[0]` of a hit is its score): what `best` and the plugin's proof of its ties rely on."""
    body: dict[str, Any] = {
        "size": min(page, PAGE),
        "track_total_hits": False,
        "query": query,
        "sort": [{"_score": "desc"}, {"order": "asc"}],
    }
    while True:
        found = search(body)
        yield found
        if len(found) < body["size"]:
            return
        body["search_after"] = found[-1]["sort"]


def every(search: Search, query: dict[str, Any], source: list[str], page: int) -> list[dict[str, Any]]:
    """Every hit of `query`, in corpus order (`order`), a page of at most `page` at a time."""
    body: dict[str, Any] = {"size": page, "sort": [{"order": "asc"}], "_source": source, "query": query}
    hits: list[dict[str, Any]] = []
    while True:
        found = search(body)
        hits += found
        if len(found) < page:
            return hits
        body["search_after"] = found[-1]["sort"]
