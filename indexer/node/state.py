"""What runs at a port, from its record: the status `lawindex opensearch status` shows, each node's
state (running, stopped by `stop`, or dead: its process gone unasked), and the wait until it is green."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from indexer.errors import NodeError
from indexer.node import containers
from indexer.node.host import HOST
from indexer.node.record import HEAP_DUMP, ClusterRecord, Member, NodeRecord, nodes

State = Literal["running", "stopped", "dead"]

# A cached start on these 2-core machines takes 15-25 s; a first start adds the download (~5 s here).
GREEN_TIMEOUT_S = 180.0
# How long an empty command line is taken for a process inside execve (see `_command_line`).
EXEC_WINDOW_S = 0.5
# The line a start writes to the node's console log (stdout.log) before the node's own output.
START_MARK = "== lawindex starts the node:"


class NodeView(TypedDict):
    """One node of what runs at a port, as `status --json` shows it under `nodes`."""

    name: str
    http_port: int
    transport_port: int | None
    url: str
    pid: int | None
    state: State
    log: str | None


@dataclass(frozen=True)
class NodeStatus:
    """What is (or was) on a port: running, stopped by `stop`, or dead (its process gone unasked)."""

    state: State
    port: int
    url: str
    version: str | None = None
    pid: int | None = None
    data_dir: str | None = None
    heap: str | None = None
    log: str | None = None
    java: str | None = None
    container: str | None = None
    reused: bool = False
    # What runs: "distribution", "official image" or "local image"; the image's name; the user the
    # distribution runs as; why the runtime was chosen over the ones before it.
    runs: str | None = None
    image: str | None = None
    user: str | None = None
    home: str | None = None
    note: str | None = None
    # One object per node of the cluster started at this port (one for a single node): its HTTP and
    # transport ports, name, pid, state and log.
    nodes: list[NodeView] | None = None
    # A secured node (--secure): the CA to trust, and the file of OPENSEARCH_USER/OPENSEARCH_PASSWORD
    # lines for the least-privileged user (mode 600). Never a password.
    ca_certs: str | None = None
    credentials: str | None = None
    # A dead node's cause of death where its console log tells it (`died_of`): OutOfMemoryError, with the
    # heap dump it left.
    died: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The status as a JSON-ready dict."""
        return asdict(self)

    def describe(self) -> str:
        """One line for people: what runs and as whom."""
        if self.runs in ("official image", "local image"):
            return f"{self.runs} {self.image} (container {self.container})"
        who = f", as user {self.user}" if self.user else ""
        return f"the distribution at {self.home} on Java {self.java}{who} (pid {self.pid})"


def is_our_node(pid: int, home: str) -> bool:
    """Whether `pid` is alive and is the node whose home is `home`: its bin/opensearch, or the JVM that
    script becomes (exec, same pid) — not a recycled pid."""
    with contextlib.suppress(ChildProcessError, OSError):
        # Reap it if this very process started it and it died: a zombie still answers kill(pid, 0).
        os.waitpid(pid, os.WNOHANG)
    cmdline = _command_line(pid)
    if cmdline is None:
        return False
    return f"-Dopensearch.path.home={home}".encode() in cmdline or f"{home}/bin/opensearch".encode() in cmdline


def _command_line(pid: int) -> list[bytes] | None:
    """The arguments of live process `pid`; None when there is none (or only a zombie).

    A starting node's pid execs four times (sh, env, bash, java), and while a process is inside execve
    the kernel shows it an empty command line (its new memory is mapped before its arguments are: 21% of
    reads of a process that execs in a loop). An empty one is read again for up to EXEC_WINDOW_S; a
    process whose command line stays empty (a kernel thread) is not a node."""
    deadline = time.monotonic() + EXEC_WINDOW_S
    while True:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            return None
        if raw or time.monotonic() >= deadline:
            return raw.split(b"\0")
        time.sleep(0.005)


def member_state(member: Member) -> State:
    """Whether one node runs, was stopped by `stop`, or is dead."""
    if member.container:
        return "running" if containers.running(member.container) else ("dead" if member.live else "stopped")
    if member.pid is None:
        return "stopped"
    return "running" if is_our_node(member.pid, str(member.home)) else "dead"


def node_view(member: Member) -> NodeView:
    port = member.port
    return {
        "name": member.name or f"lawindex-{port}",
        "http_port": port,
        "transport_port": member.transport_port,
        "url": f"{member.scheme or 'http'}://{HOST}:{port}",
        "pid": member.pid,
        "state": member_state(member),
        "log": member.log,
    }


def status_from(record: NodeRecord | None, port: int, *, reused: bool = False) -> NodeStatus:
    """The status of what `record` (at `port`) says was started; stopped when there is no record."""
    if record is None:
        return NodeStatus(state="stopped", port=port, url=f"http://{HOST}:{port}")
    views = [node_view(member) for member in nodes(record)]
    first = nodes(record)[0]
    # A cluster runs while any of its nodes does (it may still serve); each node says its own state.
    states = {view["state"] for view in views}
    state: State = "running" if "running" in states else ("dead" if "dead" in states else "stopped")
    causes = [died_of(member) for member, view in zip(nodes(record), views, strict=True) if view["state"] == "dead"]
    return NodeStatus(
        state=state,
        port=port,
        url=",".join(view["url"] for view in views),
        version=record.version,
        pid=first.pid,
        data_dir=first.data_dir,
        heap=record.heap,
        log=first.log,
        java=record.java,
        container=first.container,
        reused=reused,
        runs=record.runs,
        image=record.image,
        user=record.user,
        home=first.home,
        note=record.note,
        nodes=views,
        ca_certs=record.ca_certs,
        credentials=record.credentials,
        died="; ".join(cause for cause in causes if cause) or None,
    )


# The most of a console log read for a cause of death: the end of it, where a JVM's last words are.
CONSOLE_TAIL_BYTES = 1 << 20


def died_of(member: Member) -> str | None:
    """Why a dead node died, when its console log (stdout.log, since its last start) says it was of
    OutOfMemoryError: the JVM's own words, and the heap dump it left (indexer.node.launch.HEAP_DUMP), if any."""
    log = log_path(member)
    if log is None:
        return None
    console = log.parent / "stdout.log"
    try:
        with console.open("rb") as file:
            file.seek(max(0, console.stat().st_size - CONSOLE_TAIL_BYTES))
            text = file.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    since = text[text.rfind(START_MARK) :] if START_MARK in text else text
    found = _OOM.search(since)
    if found is None:
        return None
    cause = f"OutOfMemoryError: {found.group(1).strip() or 'the heap'}"
    if member.heap:
        cause += f" (heap {member.heap})"
    dump = log.parent / HEAP_DUMP
    if dump.is_file():
        size = dump.stat().st_size / 2**20
        cause += f"; heap dump {dump} ({size:,.0f} MiB; the first is kept: remove it to keep the next)"
    return f"{member.name or f'lawindex-{member.port}'} died of {cause}"


# Death by OutOfMemoryError, as the console says it: OpenSearch's handler ("fatal error in thread [...],
# exiting", or "... on the network layer"), the JVM's for an uncaught one ('Exception in thread "main"'), or
# -XX:+ExitOnOutOfMemoryError's "Terminating due to", each with the error on its line or within three after.
# The JVM's bare "java.lang.OutOfMemoryError: ... Dumping heap" is not enough: it is printed for an error that
# was caught (a painless script's array past the heap leaves the node up).
_OOM = re.compile(
    r'(?:fatal error[^\n]*|Exception in thread "[^"\n]*"|Terminating due to)(?:[^\n]*\n){0,3}?[^\n]*?'
    r"java\.lang\.OutOfMemoryError:?([^\n\]]*)"
)


# --- logs -------------------------------------------------------------------------------------------


def log_path(member: Member) -> Path | None:
    return Path(member.log) if member.log else None


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of `path` ("" when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def log_tail_note(log: Path | None, lines: int = 10) -> str:
    """What a failed start shows of the node's logs: the last `lines` of what it printed since this start."""
    if log is None:
        return ""
    # stdout.log has what the node logged on its console (every log line) and what the JVM said before
    # any log existed (a bad JVM option, a missing class); the log file alone misses the latter. Each
    # start marks where its part begins (earlier starts' lines would mislead).
    console = log.parent / "stdout.log"
    try:
        text = console.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    began = text.rfind(START_MARK)
    if began >= 0:
        since = text[began:].splitlines()[1:]
        if not since:
            return f"; it printed nothing since it was started ({console})"
        return "; last lines of its logs:\n" + "\n".join(since[-lines:])
    found = tail(console, lines) or tail(log, lines)
    return f"; last lines of its logs:\n{found}" if found else ""


# --- green ------------------------------------------------------------------------------------------


def get_json(
    url: str, timeout: float = 2.0, context: Any = None, headers: dict[str, str] | None = None
) -> dict[str, Any] | None:
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
            return body
    except (OSError, ValueError, urllib.error.URLError):
        return None


def admin_access(record: NodeRecord) -> tuple[Any, dict[str, str]]:
    """The SSL context and headers that reach a secured record's nodes as admin (none for a plain one)."""
    if not isinstance(record, ClusterRecord) or not record.secure:
        return None, {}
    import base64
    import ssl

    context = ssl.create_default_context(cafile=str(record.ca_certs))
    secret = Path(str(record.admin_credentials)).read_text(encoding="utf-8").strip()
    token = base64.b64encode(f"admin:{secret}".encode()).decode()
    return context, {"Authorization": f"Basic {token}"}


def wait_green(record: NodeRecord, port: int, timeout: float = GREEN_TIMEOUT_S) -> str:
    """Poll the nodes `record` (at `port`) names until each has joined and says the cluster is green
    with all of them; the version the first reports. Fails as soon as none of them runs any more."""
    members = nodes(record)
    cluster = isinstance(record, ClusterRecord)
    url = f"http://{HOST}:{port}"
    log = log_path(members[0])
    context, headers = admin_access(record)
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        views = [node_view(m) for m in members]
        if not any(v["state"] == "running" for v in views):
            what = f"nodes on port {port}.." if cluster else f"node on {url}"
            causes = [cause for cause in map(died_of, members) if cause]
            said = f" ({'; '.join(causes)})" if causes else ""
            raise NodeError(
                f"the OpenSearch {what} exited while starting{said}" + log_tail_note(log),
                hint=f"see {log}" if log else None,
            )
        # Every node asked on its own port: a node just relaunched answers only once it has started and
        # joined, while the others may still report the node it replaces (stopped a moment ago) as a
        # member of a green cluster. Returning on their word let a rolling restart stop a second node
        # while the first was still down, and the cluster lost its quorum.
        answers = [
            get_json(
                f"{view['url']}/_cluster/health?wait_for_status=green&wait_for_nodes={len(members)}&timeout=1s",
                timeout=5,
                context=context,
                headers=headers,
            )
            if view["state"] == "running"
            else None
            for view in views
        ]
        for health in answers:
            if health:
                seen = f"{health.get('status')}, {health.get('number_of_nodes')} node(s)"
        if all(
            health and health.get("status") == "green" and health.get("number_of_nodes") == len(members)
            for health in answers
        ):
            root = get_json(views[0]["url"], context=context, headers=headers) or {}
            return str(root.get("version", {}).get("number", "unknown"))
        # Each of a cluster's nodes is asked in turn every second; a single node every half second.
        time.sleep(1.0 if cluster else 0.5)
    if not cluster:
        raise NodeError(f"the OpenSearch node on {url} was not green after {timeout:.0f} s" + log_tail_note(log))
    raise NodeError(
        f"the OpenSearch cluster on port {port} was not green with {len(members)} node(s) after {timeout:.0f} s"
        + (f" (last: {seen})" if seen else "")
        + log_tail_note(log)
    )
