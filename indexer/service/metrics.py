"""`/metrics` of `lawindex serve`: what it answered, how fast, and what it refused, in Prometheus's text format.

Through prometheus-client, the library Prometheus keeps for Python. With `--workers N` every worker counts in
files of a directory the service makes at its start (`PROMETHEUS_MULTIPROC_DIR`, prometheus-client's
multiprocess mode), and whichever worker a scrape reaches adds every worker's files up: a scrape never sees
one worker's share. The series (docs/operations.md shows each):

- `lawindex_requests_total{route, state, way, status}`: every HTTP request the app answered;
- `lawindex_request_seconds{route}`: end to end, from the request's headers to its last byte;
- `lawindex_opensearch_seconds`: each round trip to OpenSearch (indexer.observe);
- `lawindex_embedder_seconds`: each embedding of a question (by meaning or hybrid);
- `lawindex_in_flight`: requests under way, all workers together;
- `lawindex_refusals_total{status, reason}`: 408, 429, 431 and 503, whether the connection layer
  (indexer.service.client_limits) or the app gave it;
- `lawindex_answers_total{state, way, path}`: each answer by the path that ranked it: `plugin` (the lawindex
  query), `window` (the first window, proven), `widened` (a wider one), `reference` (every row ranked in
  process: by meaning and hybrid);
- `lawindex_generation_age_seconds{state, index}`: how long ago the index now serving each state was loaded,
  read from the cluster at each scrape.

Labels are bounded: a state label is a USPS code or empty, a route one of the app's routes or `other`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from indexer.retrieval.corpus import STATES

if TYPE_CHECKING:
    from opensearchpy import OpenSearch
    from prometheus_client.metrics_core import Metric

    from indexer.retrieval.answers import Answer

# The variable prometheus-client's multiprocess mode reads, at import, in every worker.
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# A question takes 1-3 ms on a warm node (benchmarks/serve.py); a widened window or a batch, tens of ms.
REQUEST_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ROUND_TRIP_BUCKETS = (0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)
# Embedding one question (a static table's rows summed): tens of microseconds.
EMBEDDER_BUCKETS = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.025)
REFUSED = frozenset({408, 429, 431, 503})
PATHS = ("plugin", "window", "widened", "reference")

_ROUTES = (
    (re.compile(r"/v1/states/([^/]+)/ask"), "/v1/states/{state}/ask"),
    (re.compile(r"/v1/states/([^/]+)/laws/.*"), "/v1/states/{state}/laws/{law_id}"),
    (re.compile(r"/v1/states/([^/]+)/laws"), "/v1/states/{state}/laws"),
    (re.compile(r"/v1/states/([^/]+)/families/.*"), "/v1/states/{state}/families/{family}"),
)
_PLAIN = frozenset({"/v1/states", "/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", "/redoc"})


def route_of(path: str) -> tuple[str, str]:
    """(the route's template, the state code or "") of a request's path: a bounded label set."""
    if path in _PLAIN:
        return path, ""
    for pattern, route in _ROUTES:
        found = pattern.fullmatch(path)
        if found is not None:
            code = found.group(1).upper()
            return route, code if code in STATES else ""
    return "other", ""


def path_of(answer: Answer) -> str:
    """Which path ranked `answer`: plugin, window, widened or reference (module docstring)."""
    window = answer.window
    if window is None:
        return "reference"
    if window.plugin:
        return "plugin"
    return "widened" if window.widened else "window"


@dataclass
class Record:
    """One request as the service saw it: filled in by the route that answers it, read once it is sent."""

    request_id: str
    method: str
    route: str
    state: str
    began: float
    way: str = ""
    status: int = 0
    opensearch: float = 0.0  # seconds of OpenSearch round trips
    embedder: float = 0.0
    paths: list[str] = field(default_factory=list)
    windows: list[list[int]] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    def answered(self, answer: Answer) -> None:
        """One answer given: its path and windows kept for the log, counted in the metrics."""
        path = path_of(answer)
        self.paths.append(path)
        self.windows.append(list(answer.window.sizes) if answer.window is not None else [])
        if self.method != "GET":  # a GET's question is read from its query, and only when it is logged
            self.questions.append(answer.question)
        if METRICS is not None:
            METRICS.answer(answer.state, answer.by, path)


class Metrics:
    """The service's series (module docstring), in this process; `exposition()` is every worker's."""

    def __init__(self, client: Callable[[], OpenSearch] | None, namespace: str) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # a `_created` series beside each: noise to an operator, cost to a scrape

        self.multiprocess = bool(os.environ.get(MULTIPROCESS))
        self.registry = CollectorRegistry()
        self.client = client
        self.namespace = namespace
        registry = self.registry
        self.requests = Counter(
            "lawindex_requests", "HTTP requests answered, by route, state, way and status",
            ["route", "state", "way", "status"], registry=registry,
        )  # fmt: skip
        self.seconds = Histogram(
            "lawindex_request_seconds", "Seconds from a request's headers to its answer's last byte",
            ["route"], buckets=REQUEST_BUCKETS, registry=registry,
        )  # fmt: skip
        self.opensearch = Histogram(
            "lawindex_opensearch_seconds", "Seconds of each round trip to OpenSearch",
            buckets=ROUND_TRIP_BUCKETS, registry=registry,
        )  # fmt: skip
        self.embedder = Histogram(
            "lawindex_embedder_seconds", "Seconds to embed a question (by meaning or hybrid)",
            buckets=EMBEDDER_BUCKETS, registry=registry,
        )  # fmt: skip
        self.in_flight = Gauge(
            "lawindex_in_flight", "Requests under way (every worker)", registry=registry, multiprocess_mode="livesum"
        )
        self.refusals = Counter(
            "lawindex_refusals", "Requests refused (400 not HTTP, 408, 429, 431, 503), by status and reason",
            ["status", "reason"], registry=registry,
        )  # fmt: skip
        self.answers = Counter(
            "lawindex_answers", "Answers given, by state, way and the path that ranked them",
            ["state", "way", "path"], registry=registry,
        )  # fmt: skip
        # label children kept: `.labels()` hashes and locks; a kept child is one dict lookup (2 us a request less)
        self._children: dict[tuple[Any, ...], Any] = {}
        self._ages: dict[str, float | None] = {}  # per concrete index: when it was loaded (its `_meta`)

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def request(self, record: Record, seconds: float, reason: str | None = None) -> None:
        """A request answered, or refused past the connection layer (`reason`: by whom; by default the
        app, and a 503 there is OpenSearch not answering)."""
        self._child(self.requests, record.route, record.state, record.way, str(record.status)).inc()
        self._child(self.seconds, record.route).observe(seconds)
        if record.status in REFUSED:
            self.refused(record.status, reason or ("opensearch" if record.status == 503 else "app"))

    def refused(self, status: int, reason: str) -> None:
        self._child(self.refusals, str(status), reason).inc()

    def answer(self, state: str, way: str, path: str) -> None:
        self._child(self.answers, state, way, path).inc()

    def exposition(self) -> bytes:
        """The text a scrape reads: every worker's series, and each served state's generation age."""
        from prometheus_client import CollectorRegistry, generate_latest

        if self.multiprocess:
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        else:
            registry = self.registry
        text: bytes = generate_latest(registry)
        if self.client is not None:
            text += generate_latest(_Single(_Ages(self)))
        return text

    def generation_ages(self) -> list[tuple[str, str, float]]:
        """(state, index, seconds since it was loaded) of each state served in this namespace now: one
        request for the aliases, and each index's `_meta` read once."""
        from indexer.opensearch.trust import ownership

        assert self.client is not None
        client = self.client()
        found = client.indices.get_alias(
            index=f"{self.namespace}-*", ignore_unavailable=True, allow_no_indices=True, params=ownership.LOCAL
        )
        served = re.compile(re.escape(self.namespace) + r"-([a-z]{2})")
        now = time.time()
        rows = []
        for index, body in sorted(found.items()):
            for alias in body.get("aliases", {}):
                match = served.fullmatch(alias)
                if match is None:
                    continue
                if index not in self._ages:
                    loaded = ownership.meta_of(client, index).get("loaded_at")
                    self._ages[index] = datetime.fromisoformat(loaded).timestamp() if loaded else None
                    if len(self._ages) > 1024:  # generations long gone
                        self._ages = {index: self._ages[index]}
                loaded_at = self._ages[index]
                if loaded_at is not None:
                    rows.append((match.group(1).upper(), index, now - loaded_at))
        return rows


class _Ages:
    """The generation-age gauge, read from the cluster when scraped (a cluster fact, the same in every
    worker: not kept in the multiprocess files)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily(
            "lawindex_generation_age_seconds",
            "Seconds since the index serving each state was loaded",
            labels=["state", "index"],
        )
        try:
            rows = self.metrics.generation_ages()
        except Exception:  # the cluster away: the scrape still has the service's own series
            rows = []
        for state, index, age in rows:
            family.add_metric([state, index], age)
        yield family


class _Single:
    """A registry-like holder of one collector, for `generate_latest`."""

    def __init__(self, collector: _Ages) -> None:
        self.collector = collector

    def collect(self) -> Iterator[Metric]:
        yield from self.collector.collect()


# This process's metrics, once the service made them (None: not measured, `--no-metrics`).
METRICS: Metrics | None = None
# The request this thread or task answers now (set by indexer.service.access_log.Observed; a route's thread
# sees it through the context anyio copies, FastAsk's pool thread through its own `set`).
CURRENT: ContextVar[Record | None] = ContextVar("lawindex_request", default=None)


def install(client: Callable[[], OpenSearch] | None, namespace: str, measured: bool) -> Metrics | None:
    """This process's metrics (with `measured`), and every OpenSearch round trip and embedding told to them
    and to the request under way (indexer.observe)."""
    global METRICS
    from indexer import observe

    if measured and METRICS is None:
        METRICS = Metrics(client, namespace)
    made = METRICS if measured else None
    observe.watch("opensearch", lambda seconds: _round_trip(made, seconds))
    observe.watch("embedder", lambda seconds: _embedded(made, seconds))
    return made


def _round_trip(metrics: Metrics | None, seconds: float) -> None:
    if metrics is not None:
        metrics.opensearch.observe(seconds)
    record = CURRENT.get()
    if record is not None:
        record.opensearch += seconds


def _embedded(metrics: Metrics | None, seconds: float) -> None:
    if metrics is not None:
        metrics.embedder.observe(seconds)
    record = CURRENT.get()
    if record is not None:
        record.embedder += seconds
