"""A cluster with a node that is alive and silent (a stopped process, a frozen VM, a full GC): found and
avoided, instead of waited on by every request.

opensearch-py's pool marks a node dead only on a refused or dropped connection; a request that timed out
was raised without being tried elsewhere, so a silent node stayed in the rotation and cost a whole
`--timeout` to a request in three, for as long as it stayed silent (a batch of 300 questions: 879 s
instead of 12). Here, with several URLs:

- a request's `--timeout` is shared between the nodes it may try: an attempt gets the time left divided
  by the nodes that have not yet timed out on it (10 s on three nodes: 3.3 s each), so a silent node
  costs a third of the timeout once and the request goes on to another node within the same budget; once each
  node whose probe answered has timed out on it, the rest of its time goes to one of them again, not to a node
  that did not answer its probe (CI once spent a request's last third on the silent node after
  two live ones had each been late once);
- a node that timed out is marked dead at once, and is put back only once a probe (`GET /_nodes/_local`,
  off the request path, in a thread of its own) answers: the pool's own resurrection handed it back to a
  real request every 2-8 s, each one waiting its share again;
- a timeout starts a round of probes of every node, which the request waits for until all nodes but one
  have answered: the silent node is left out of the rotation, and a search names the nodes that answered
  in `preference=_prefer_nodes:`, since a live node asked without it waited on the silent node's shard
  copy in 5 searches of 20 (measured here: adaptive replica selection knows nothing yet of a node that
  stopped answering). A probe waits 5 s: a live node starved of CPU that answered after the 1 s a probe
  once had was left out, and when the one node left named by the preference held no copy of the index,
  the search went to the silent copy again, attempt after attempt (issue 47 item 4, the likeliest way a
  request failed on two live nodes of three in CI);
- what is sent again after a timeout is what is safe to send twice (`repeatable`): reads, and the writes
  lawindex makes so that a second copy changes nothing (bulk `create` with the load's own ids, an index
  created under a name of the load's own, deletes, refreshes, alias actions whose `must_exist` makes a
  repeat fail rather than apply twice, lock writes conditional on `if_seq_no` or `op_type=create`; a lost
  answer is read back by the caller, write/load.py and write/lock.py);
- when no node answers, the error names each URL and what it did (`NoNodeAnswered`).

One URL behaves as before: its timeout is its own, and a request that timed out is not sent again.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

from opensearchpy import ConnectionPool, Transport
from opensearchpy.exceptions import ConnectionError, ConnectionTimeout, TransportError

from indexer.opensearch.cluster import retried

# Seconds a probe of a node may take: `GET /_nodes/_local` is answered from the node's memory, in
# milliseconds on a quiet node; the 1 s a probe once had left no room for a live node starved of CPU (a
# probe that gave up took it out of the rotation, issue 47 item 4). A node that does not answer in 5 s is
# not one to send a question to. A probe runs in a thread of its own: a request does not wait this long.
PROBE_TIMEOUT_S = 5.0
# The most a request whose attempt timed out waits for a round of probes (a third of its time left at
# most). The round ends sooner, once every node but one has answered (the one that has not is the silent
# one, or a live node put back when its probe answers): the nodes that answered are the ones the request
# goes on to, and the ones `_prefer_nodes` names.
ROUND_WAIT_S = 2.5
# The least an attempt is given when a request's time is shared between nodes.
LEAST_ATTEMPT_S = 0.5


def repeatable(method: str, path: str, params: dict[str, Any] | None) -> bool:
    """True when a request may be sent again after it timed out (it may have been applied): reads, and the
    writes lawindex makes so that a second copy changes nothing, or fails instead of applying twice."""
    if method in ("GET", "HEAD"):
        return True
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if method == "POST" and last in ("_search", "_msearch", "_count", "_mget", "_refresh", "_aliases"):
        return True
    if method == "POST" and last == "_bulk":
        # The loader's bulk bodies are `create` actions with explicit ids into an index of the load's own:
        # a repeat answers 409 for what the first copy wrote, which load.py counts as written.
        return True
    if method == "DELETE":
        return True
    params = params or {}
    # A lock document written only if absent, or only over the version read: a repeat conflicts.
    if "if_seq_no" in params or params.get("op_type") == "create":
        return True
    # PUT /<index>: an index under a generation's name, which is one load's alone (a repeat answers
    # resource_already_exists, which load.py takes as made).
    return method == "PUT" and path.count("/") == 1


class NoNodeAnswered(ConnectionError):
    """Every node a request was sent to failed: `tried` holds each URL and what it did, in order."""

    def __init__(self, tried: list[tuple[str, str]], timed_out: bool, last: TransportError) -> None:
        super().__init__("N/A", "; ".join(f"{url} {what}" for url, what in tried), last)
        self.tried = tried
        self.timed_out = timed_out


def _why(error: TransportError) -> str:
    """Why a request was sent again, as indexer.opensearch.cluster.retried counts it."""
    if isinstance(error, ConnectionTimeout):
        return "timed out"
    if isinstance(error, ConnectionError):
        return "connection failed"
    return f"answered {error.status_code}"


def _what(error: TransportError, seconds: float) -> str:
    if isinstance(error, ConnectionTimeout):
        return f"did not answer within {seconds:.3g}s"
    if isinstance(error, ConnectionError):
        from indexer.opensearch.cluster.reasons import short_reason

        return f"did not answer: {short_reason(error)}"
    return f"answered {error.status_code}"


class ProbingPool(ConnectionPool):
    """A pool that puts a dead node back in the rotation only after it answered a probe, and knows each
    node's id (for `preference=_prefer_nodes:`, which takes ids)."""

    def __init__(self, connections: Any, **kwargs: Any) -> None:
        super().__init__(connections, **kwargs)
        self._guard = threading.Lock()
        self._probing: set[Any] = set()
        # Who waits for a node's probe under way to answer (a round of `probe_all`).
        self._waiting: dict[Any, list[threading.Semaphore]] = {}
        self.ids: dict[Any, str] = {}
        # The nodes whose last probe answered (none under way): where a request goes back to once it has waited
        # on every node in the rotation, rather than to one that never answered.
        self.heard: set[Any] = set()
        self._round = threading.Lock()
        self._round_at = 0.0

    def mark_dead(self, connection: Any, now: float | None = None) -> None:
        with self._guard:
            super().mark_dead(connection, now)

    def resurrect(self, force: bool = False) -> Any:
        if force:
            # No live node: a request must go somewhere, so to one of them (as the pool does).
            return super().resurrect(True)
        with self._guard:
            if self.dead.empty():
                return None
            until, connection = self.dead.get(block=False)
            if until > time.time() or connection in self._probing:
                self.dead.put((until, connection))
                return None
        self._start_probe(connection)
        return None

    def suspects(self) -> bool:
        """True when a node is marked dead (then searches prefer the shard copies on the others)."""
        return len(self.connections) < len(self.orig_connections)

    def live_ids(self) -> list[str]:
        """The ids of the nodes in the rotation that are known (every one of them, or none)."""
        with self._guard:
            live = list(self.connections)
        ids = [self.ids.get(connection) for connection in live]
        return sorted(i for i in ids if i) if all(ids) else []

    def probe_all(self, wait: float = ROUND_WAIT_S) -> None:
        """Probe every node at once (a request timed out: its node, or a node holding a shard copy it was
        routed to, is silent), and wait for the round: until every node but one has answered, at most
        `wait` seconds. Those that answered are in the rotation; those that did not are out of it until their
        probe answers (a node starved of CPU answers late and is put back then; a silent one never does).
        One round a second at most, shared by the threads whose requests timed out together."""
        with self._round:
            if time.monotonic() - self._round_at < 1.0:
                return
            deadline = time.monotonic() + wait
            answered = threading.Semaphore(0)
            for connection in self.orig_connections:
                self._start_probe(connection, answered)
            enough = max(1, len(self.orig_connections) - 1)
            for _ in range(enough):
                if not answered.acquire(timeout=max(0.0, deadline - time.monotonic())):
                    break
            with self._guard:
                for connection in self._probing:
                    if connection in self.connections:
                        self.connections.remove(connection)
            self._round_at = time.monotonic()

    def _start_probe(self, connection: Any, answered: threading.Semaphore | None = None) -> None:
        """A probe of `connection` in a thread of its own, unless one is under way; `answered` is released
        when it answers (at once when the node answered a probe under way)."""
        with self._guard:
            if answered is not None:
                self._waiting.setdefault(connection, []).append(answered)
            if connection in self._probing:
                return
            self._probing.add(connection)
            self.heard.discard(connection)
        threading.Thread(target=self._probe, args=(connection,), name="lawindex-probe", daemon=True).start()

    def _probe(self, connection: Any) -> None:
        try:
            _, _, data = connection.perform_request(
                "GET", "/_nodes/_local", {"filter_path": "nodes.*.name"}, timeout=PROBE_TIMEOUT_S
            )
            found = json.loads(data).get("nodes") or {}
            if len(found) == 1:
                self.ids[connection] = next(iter(found))
            answered = True
        except Exception:  # any failure keeps it dead: a probe is never anyone's error
            answered = False
        with self._guard:
            self._probing.discard(connection)
            waiting = self._waiting.pop(connection, [])
            if answered:
                self.heard.add(connection)
                if connection not in self.connections:
                    self.connections.append(connection)
                self.dead_count.pop(connection, None)
                self._undead(connection)
                for round_ in waiting:
                    round_.release()
                return
            if connection in self.connections:
                self.connections.remove(connection)
            self._undead(connection)
            # Back on its timeout, one failure longer: mark_dead's arithmetic.
            count = self.dead_count.get(connection, 0) + 1
            self.dead_count[connection] = count
            self.dead.put((time.time() + self.dead_timeout * 2 ** min(count - 1, self.timeout_cutoff), connection))

    def _undead(self, connection: Any) -> None:
        """`connection` out of the dead queue (held under _guard)."""
        kept = []
        while not self.dead.empty():
            entry = self.dead.get(block=False)
            if entry[1] is not connection:
                kept.append(entry)
        for entry in kept:
            self.dead.put(entry)


class FailoverTransport(Transport):
    """opensearch-py's Transport with a request's time shared between nodes, and a timeout tried on
    another node when the request is `repeatable`."""

    def perform_request(
        self,
        method: str,
        url: str,
        params: Any = None,
        body: Any = None,
        timeout: float | None = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> Any:
        method, params, body, ignore, timeout = self._resolve_request_args(method, params, body, ignore, timeout)
        hosts = len(getattr(self.connection_pool, "orig_connections", ())) or 1
        path = url.split("?", 1)[0]
        again_on_timeout = hosts > 1 and repeatable(method, path, params)
        tried: list[tuple[str, str]] = []
        waited: list[Any] = []  # the node of each entry of `tried`
        silent: set[Any] = set()
        deadline: float | None = None
        pool = self.connection_pool
        steer = (
            isinstance(pool, ProbingPool)
            and method in ("GET", "POST")
            and not (params or {}).get("preference")
            and (path.endswith(("/_search", "/_msearch", "/_count", "/_mget")) or "/_doc/" in path)
        )
        for attempt in range(self.max_retries + 1):
            connection = self._next(self.get_connection(), silent)
            sent = params
            if steer and pool.suspects():
                # A silent node still in the cluster holds shard copies, and a search routed to one waits
                # as long as the node is silent: the copies on the nodes that answer are asked first.
                ids = pool.live_ids()
                if ids:
                    sent = {**(params or {}), "preference": "_prefer_nodes:" + ",".join(ids)}
            budget = float(timeout or connection.timeout)
            if deadline is None:
                deadline = time.monotonic() + budget
            left = deadline - time.monotonic()
            share = left / max(1, hosts - len(silent)) if hosts > 1 else budget
            share = max(share, min(LEAST_ATTEMPT_S, budget))
            try:
                status, found_headers, data = connection.perform_request(
                    method, url, sent, body, headers=headers, ignore=ignore, timeout=share
                )
            except TransportError as error:
                if method == "HEAD" and error.status_code == 404:
                    return False
                tried.append((_host(connection), _what(error, share)))
                waited.append(connection)
                if isinstance(error, ConnectionTimeout):
                    silent.add(connection)
                    retry = again_on_timeout and len(silent) < hosts
                else:
                    retry = isinstance(error, ConnectionError) or error.status_code in self.retry_on_status
                if not retry:
                    raise self._failure(tried, waited, silent, error) from None
                with contextlib.suppress(TransportError):
                    self.mark_dead(connection)
                if isinstance(error, ConnectionTimeout) and isinstance(pool, ProbingPool):
                    # A third of the time left at most: the nodes that answered still get their share of it.
                    pool.probe_all(min(ROUND_WAIT_S, max(0.0, deadline - time.monotonic()) / 3))
                if attempt == self.max_retries or (deadline - time.monotonic() <= 0 and silent):
                    raise self._failure(tried, waited, silent, error) from None
                retried.note(_why(error))
                continue
            self.connection_pool.mark_live(connection)
            if method == "HEAD":
                return 200 <= status < 300
            found = {name.lower(): value for name, value in found_headers.items()}
            return self.deserializer.loads(data, found.get("content-type")) if data else data
        raise AssertionError("unreachable")

    def _next(self, connection: Any, silent: set[Any]) -> Any:
        """The node an attempt goes to: `connection` (the pool's next), unless this request already waited on it.
        Then a node it has not waited on whose last probe answered; else one whose last probe answered (only this
        request's attempt on it was late), `connection` first, rather than a node that never answered (the silent
        one); else a node not yet waited on, or `connection`."""
        if connection not in silent:
            return connection
        nodes = list(getattr(self.connection_pool, "orig_connections", ()))
        heard: set[Any] = getattr(self.connection_pool, "heard", set())
        untried = [other for other in nodes if other not in silent]
        for choices in (
            [other for other in untried if other in heard],
            [connection] if connection in heard else [],
            [other for other in nodes if other in heard],
            untried,
        ):
            if choices:
                return choices[0]
        return connection

    def _failure(
        self, tried: list[tuple[str, str]], waited: list[Any], silent: set[Any], error: TransportError
    ) -> TransportError:
        """The error a request ends with: its own when one node was asked, else one naming every node tried, and of
        a node that timed out on it, whether it answered its probe since (a live node, late on this request: the
        cluster overloaded, or a copy it waited on frozen) or did not (a silent node)."""
        if len({url for url, _ in tried}) <= 1 or not isinstance(error, ConnectionError):
            return error
        heard: set[Any] = getattr(self.connection_pool, "heard", set())
        told = [
            (url, f"{what} (it answered its probe)" if node in heard and node in silent else what)
            for (url, what), node in zip(tried, waited, strict=True)
        ]
        return NoNodeAnswered(told, bool(silent), error)


def _host(connection: Any) -> str:
    from indexer.opensearch.cluster.reasons import redacted

    return redacted(str(getattr(connection, "host", "?")) + str(getattr(connection, "url_prefix", "") or ""))
