"""One writer per state: a load holds the state's lock (`StateLock`), a document in the namespace's own
lock index (`lawindex-locks`) created with `op_type=create`, so exactly one of two loaders gets it, on one
machine or on several. The holder renews a lease while it loads; a lease that ran out is taken over with
`if_seq_no`/`if_primary_term`, so of two takers only one wins; the holder confirms it still holds the lock
right before its swap, and a release deletes the document only if it is still its own."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from indexer.errors import LoadBusy, LoadFailed
from indexer.opensearch.cluster.connection import namespace_of
from indexer.opensearch.trust.ownership import OWNER
from indexer.opensearch.write.stop import Stop

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

T = TypeVar("T")


# A holder renews its lease every LEASE / 3 seconds; a lease not renewed for LEASE seconds is stale and
# may be taken over. Long enough that a busy cluster or a garbage-collecting loader keeps its lock; short
# enough that a loader killed with SIGKILL on another machine holds up the next load half a minute.
LEASE = 30.0
# Seconds a load waits for another load of the same state before it gives up (exit 5).
WAIT = 120.0


def locks_index(namespace: str) -> str:
    """The name a load's lock documents are read and written under (`lawindex-locks`): an alias of the
    lock index, so that every write can say `require_alias`. A renewal that outlives a deleted lock index
    must fail, not auto-create a namesake without lawindex's marker, which every later load would refuse
    (a test's namespace, dropped under a lease still being renewed, did that)."""
    return f"{namespace_of(namespace)}-locks"


def locks_concrete_index(namespace: str) -> str:
    """The lock index itself, behind the alias `locks_index`."""
    return f"{locks_index(namespace)}-1"


def _machine() -> str:
    """This machine's boot, so that a pid is compared only with pids of the same running kernel."""
    with contextlib.suppress(OSError):
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# Tokens of the locks this process holds now: a lock of this host and pid whose token is not here was
# left by a load of this process that could not release it (the cluster went away), and is free.
_HELD: set[str] = set()
_HELD_GUARD = threading.Lock()


def ensure_locks_index(client: OpenSearch, namespace: str) -> None:
    """The namespace's lock index, made by lawindex (created here, with its alias, when missing); anything
    else under the name is LoadFailed: lawindex writes nothing into it."""
    from opensearchpy import NotFoundError, RequestError

    alias, concrete = locks_index(namespace), locks_concrete_index(namespace)
    try:
        found = client.indices.get_mapping(index=alias)
    except NotFoundError:
        body = {
            "settings": {"index": {"number_of_shards": 1, "auto_expand_replicas": "0-1"}},
            "mappings": {
                "dynamic": False,
                "_meta": {"lawindex": {"owner": OWNER, "namespace": namespace, "kind": "locks"}},
            },
            "aliases": {alias: {}},
        }
        try:
            client.indices.create(index=concrete, body=body)
            return
        except RequestError as error:
            if error.error not in ("resource_already_exists_exception", "invalid_alias_name_exception"):
                raise
        found = client.indices.get_mapping(index=alias)
    meta = found.get(concrete, {}).get("mappings", {}).get("_meta", {}).get("lawindex", {})
    if list(found) != [concrete] or meta.get("owner") != OWNER or meta.get("kind") != "locks":
        raise LoadFailed(
            f"{alias} is not lawindex's lock index: lawindex did not make it, and will not write to it",
            hint=f"lawindex keeps its loads' locks in {concrete}, behind the alias {alias}; remove or rename "
            f"{', '.join(sorted(found))}, or give lawindex another LAWINDEX_NAMESPACE",
        )


def _busy_retried(write: Callable[[], T], attempts: int = 40) -> T:
    """`write()`, sent again while the cluster answers 429 (its write queue full): a lock document goes
    through the same write queue as the bulk requests of every load under way, and a busy cluster must
    delay a lock, not fail the load (a write queue of one, tests/integration/test_faults.py, did)."""
    from opensearchpy import TransportError

    pause = 0.05
    for _ in range(attempts - 1):
        try:
            return write()
        except TransportError as error:
            # A block answers 429 too (the disk's flood stage): no wait lifts it.
            if error.status_code != 429 or "cluster_block_exception" in str(error.info):
                raise
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
    return write()


class StateLock:
    """The lock of one state's loads, in the cluster: acquire, renew, confirm, release."""

    def __init__(
        self,
        client: OpenSearch,
        state: str,
        namespace: str,
        *,
        wait: float = WAIT,
        lease: float = LEASE,
        stop: Stop | None = None,
        ensured: bool = False,
    ) -> None:
        self.client = client
        self.ensured = ensured  # the lock index is known to be lawindex's (load() checks it once for all states)
        self.state = state
        self.index = locks_index(namespace)
        self.namespace = namespace
        self.wait = wait
        self.lease = lease
        self.stop = stop
        self.token = secrets.token_hex(16)
        self.holder = {"host": socket.gethostname(), "machine": _machine(), "pid": os.getpid(), "token": self.token}
        self._version: tuple[int, int] | None = None  # (seq_no, primary_term) of our document
        self._guard = threading.Lock()  # one write of our document at a time (renewal, confirm, release)
        self._done = threading.Event()
        self._lost = False
        self._renewer: threading.Thread | None = None
        # The other holder's document as last seen, and when (our monotonic clock): a lease whose
        # document has not moved for a whole lease is stale even when the holder's clock runs ahead.
        self._seen: tuple[int, int] | None = None
        self._seen_at = 0.0
        self._acquired_at = ""
        self._released: bool | None = None  # None until release() ran: then whether the document is gone

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()

    def _document(self, acquired_at: str | None = None) -> dict[str, Any]:
        now = time.time()
        return {
            "state": self.state,
            "holder": self.holder,
            "acquired_at": acquired_at or datetime.now(UTC).isoformat(timespec="seconds"),
            "renewed": now,
            "lease_until": now + self.lease,
        }

    def acquire(self) -> None:
        """Take the lock, waiting up to `wait` seconds for a holder to finish; LoadBusy when it does not."""
        if not self.ensured:
            ensure_locks_index(self.client, self.namespace)
        # The token counts as live in this process before its document is written: another thread of this
        # process that reads the document before _held() runs must not take it for a leftover. (It did:
        # of six threads taking one stale lock, two won now and then.)
        with _HELD_GUARD:
            _HELD.add(self.token)
        try:
            self._acquire()
        except BaseException:
            with _HELD_GUARD:
                _HELD.discard(self.token)
            raise

    def _acquire(self) -> None:
        from opensearchpy import ConflictError, NotFoundError

        deadline = time.monotonic() + self.wait
        pause = 0.1
        while True:
            if self.stop is not None:
                self.stop.check(self.state)
            try:
                made = self._put(op_type="create")
                self._held(made)
                return
            except ConflictError:
                pass
            try:
                found = self.client.get(index=self.index, id=self.state)
            except NotFoundError:
                continue  # released in between: try again at once
            if self._ours(found):
                # Our own create, applied, whose answer was lost: the client's repeat conflicted with it.
                self._held(found)
                return
            if self._stale(found):
                try:
                    made = self._put(if_seq_no=found["_seq_no"], if_primary_term=found["_primary_term"])
                    self._held(made)
                    return
                except (ConflictError, NotFoundError):
                    continue  # another taker won, or the holder released it (or our take's answer was lost):
                    # look again
            if time.monotonic() >= deadline:
                raise LoadBusy(
                    f"{self.state}: another load holds its lock ({_who(found.get('_source'))})",
                    hint=f"wait for it to end, or give this load longer with --wait; a lock not renewed for "
                    f"{self.lease:g} s is taken over",
                )
            if self.stop is not None:
                self.stop.wait(pause)
            else:
                time.sleep(pause)
            pause = min(pause * 2, 1.0)

    def _put(self, acquired_at: str | None = None, **conditions: Any) -> Mapping[str, Any]:
        """Write this load's lock document through the lock alias (require_alias: never into an index that
        a deleted lock index's name would auto-create), under `conditions` (op_type=create, or the
        if_seq_no/if_primary_term of the version it replaces); a busy cluster's 429 is waited out."""
        made: Mapping[str, Any] = _busy_retried(
            lambda: self.client.index(
                index=self.index,
                id=self.state,
                body=self._document(acquired_at),
                require_alias=True,
                **conditions,
            )
        )
        return made

    def _held(self, made: Mapping[str, Any]) -> None:
        self._version = (int(made["_seq_no"]), int(made["_primary_term"]))
        self._acquired_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._done.clear()
        self._renewer = threading.Thread(
            target=self._renew_until_done, name=f"lawindex-lease-{self.state}", daemon=True
        )
        self._renewer.start()

    def _stale(self, found: Mapping[str, Any]) -> bool:
        """True when the holder of `found` is gone: its lease ran out, it is a process of this machine that
        ended, or its document has not moved for a whole lease by this process's clock."""
        source = found.get("_source")
        holder = source.get("holder") if isinstance(source, dict) else None
        if not isinstance(source, dict) or not isinstance(holder, dict):
            return True  # not a lock lawindex wrote: nobody holds it
        try:
            if float(source["lease_until"]) < time.time():
                return True
        except (KeyError, TypeError, ValueError):
            return True
        if holder.get("host") == self.holder["host"] and holder.get("machine") == self.holder["machine"]:
            pid = holder.get("pid")
            if pid == os.getpid():
                with _HELD_GUARD:
                    return holder.get("token") not in _HELD
            if isinstance(pid, int) and not _alive(pid):
                return True
        version = (int(found["_seq_no"]), int(found["_primary_term"]))
        if version != self._seen:
            self._seen, self._seen_at = version, time.monotonic()
            return False
        return time.monotonic() - self._seen_at > self.lease

    def _write(self) -> bool:
        """Renew the lease if the document is still ours; False when it is not (taken over or removed)."""
        from opensearchpy import ConflictError, ConnectionError, NotFoundError

        with self._guard:
            if self._lost or self._version is None:
                return False
            seq_no, primary_term = self._version
            try:
                made = self._put(self._acquired_at, if_seq_no=seq_no, if_primary_term=primary_term)
            except (ConflictError, NotFoundError, ConnectionError):
                # Refused, or no answer: the document says whose the lock is now (a renewal applied whose
                # answer was lost conflicts on the client's repeat, and the lock is still ours). A read
                # that fails too is raised: nothing is known.
                found = self._read()
                if found is None or not self._ours(found):
                    self._lost = True
                    return False
                made = found
            self._version = (int(made["_seq_no"]), int(made["_primary_term"]))
            return True

    def _read(self) -> Mapping[str, Any] | None:
        """The lock document as the cluster has it now, or None when there is none."""
        from opensearchpy import NotFoundError

        try:
            found: Mapping[str, Any] = self.client.get(index=self.index, id=self.state)
        except NotFoundError:
            return None
        return found

    def _ours(self, found: Mapping[str, Any]) -> bool:
        source = found.get("_source")
        holder = source.get("holder") if isinstance(source, dict) else None
        return isinstance(holder, dict) and holder.get("token") == self.token

    def outcome(self) -> str:
        """What became of the lock: `released`, `held` (its release failed; it runs out with its lease, or
        the next load of this process takes it), `lost` (taken over), or `none` (never taken)."""
        if self._lost:
            return "lost"
        if self._released is None:
            return "none" if self._version is None else "held"
        return "released" if self._released else "held"

    def _renew_until_done(self) -> None:
        while not self._done.wait(self.lease / 3):
            try:
                if not self._write():
                    return
            except Exception:  # a slow or absent cluster: try again next time round
                continue

    def confirm(self) -> None:
        """Renew now, and raise LoadFailed when the lock is no longer ours (right before a swap)."""
        if not self._write():
            raise LoadFailed(
                f"{self.state}: another load took over this load's lock (its lease ran out); nothing was swapped",
                hint="run the load again",
            )

    def release(self) -> None:
        """Stop renewing and delete the document if it is still ours (best effort: a lost cluster keeps it
        until its lease runs out, or until this process loads the state again)."""
        from opensearchpy import ConflictError, NotFoundError

        self._done.set()
        if self._renewer is not None:
            self._renewer.join()
        with _HELD_GUARD:
            _HELD.discard(self.token)
        with self._guard:
            if self._lost or self._version is None:
                return
            seq_no, primary_term = self._version
            self._version = None
            self._released = False
            with contextlib.suppress(ConflictError, NotFoundError, Exception):
                _busy_retried(
                    lambda: self.client.delete(
                        index=self.index, id=self.state, if_seq_no=seq_no, if_primary_term=primary_term
                    )
                )
            # Read back: a delete applied whose answer was lost (the client's repeat then answers 404, or
            # fails too) is a release all the same; a document still ours is still held.
            with contextlib.suppress(Exception):
                found = self._read()
                self._released = found is None or not self._ours(found)


def _who(source: Any) -> str:
    """The holder of a lock document, for a message."""
    if not isinstance(source, dict) or not isinstance(source.get("holder"), dict):
        return "an unknown holder"
    holder = source["holder"]
    return f"{holder.get('host')} pid {holder.get('pid')}, since {source.get('acquired_at')}"
