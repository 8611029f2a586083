"""A local single-node OpenSearch: started, found again, stopped, for development and tests.

Where a Docker engine answers, the node is the official image. Elsewhere it is OpenSearch's own
published jars, resolved from Maven Central by `node/pom.xml` into a cache directory and run by
`node/Launcher.java` (compiled on first use) in a JVM detached from the caller. Each port has one
record, `<cache>/nodes/<port>/node.json`, that says what `start` started there; `stop` ends only that.

The versions are pinned in `node/versions.env` and nowhere else.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from indexer.errors import NodeError

State = Literal["running", "stopped", "dead"]

HOST = "127.0.0.1"
JVM_DIR = Path("/usr/lib/jvm")
# A cached start on these 2-core machines takes 15-25 s; a first start adds the Maven download.
GREEN_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
DEAD_PORT_GRACE_S = 15.0
DOCKER_IMAGE = "opensearchproject/opensearch"
_HEAP = re.compile(r"^[1-9][0-9]*[mMgG]$")


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

    def to_json(self) -> dict[str, Any]:
        """The status as a JSON-ready dict."""
        return asdict(self)


# --- the pins -------------------------------------------------------------------------------------


def node_dir() -> Path:
    """The directory holding pom.xml, Launcher.java and versions.env: the repo's, else the wheel's copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "node", here / "_data" / "node"):
        if (candidate / "versions.env").is_file():
            return candidate
    raise NodeError("node/versions.env not found next to the indexer package; is lawindex installed whole?")


def read_pins(path: Path | None = None) -> dict[str, str]:
    """The KEY=VALUE lines of versions.env (comments and blank lines skipped, quotes stripped)."""
    text = (path or node_dir() / "versions.env").read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        pins[key.strip()] = value.strip().strip("'\"")
    return pins


def pinned_versions(path: Path | None = None) -> list[str]:
    """The pinned OpenSearch versions, the default (3.x) first."""
    pins = read_pins(path)
    try:
        return [pins["OPENSEARCH_VERSION"], pins["OPENSEARCH_LEGACY_VERSION"]]
    except KeyError as missing:
        raise NodeError(f"node/versions.env has no {missing.args[0]}") from None


def default_version() -> str:
    """The version `start` runs when none is asked for."""
    return pinned_versions()[0]


def default_cache_dir() -> Path:
    """$LAWINDEX_CACHE, else $XDG_CACHE_HOME/lawindex, else ~/.cache/lawindex."""
    if os.environ.get("LAWINDEX_CACHE"):
        return Path(os.environ["LAWINDEX_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "lawindex"
    return Path.home() / ".cache" / "lawindex"


# --- Java -----------------------------------------------------------------------------------------


def java_range(version: str) -> tuple[int, int | None]:
    """The Java majors an OpenSearch version runs on: (lowest, highest or None for no bound)."""
    major = int(version.split(".")[0])
    if major >= 3:
        return 21, None
    # 2.19 supports Java 11 to 23 (it ships JDK 23). Through the launcher (no security manager) it did
    # start on Temurin 25 here too, but a JDK it was never tested on is not what tests should run on.
    return 11, 23


def java_major(java_home: Path) -> int | None:
    """The major version of a JDK, read from its `release` file, else from `java -version`."""
    release = java_home / "release"
    text = ""
    if release.is_file():
        text = release.read_text(encoding="utf-8", errors="replace")
    else:
        java = java_home / "bin" / "java"
        if not java.is_file():
            return None
        try:
            done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = done.stderr
    found = re.search(r'version\s*[=\s]\s*"(\d+)(?:\.(\d+))?', text, re.IGNORECASE)
    if not found:
        found = re.search(r'JAVA_VERSION="(\d+)(?:\.(\d+))?', text)
    if not found:
        return None
    first = int(found.group(1))
    # Java 8 and older call themselves 1.x.
    return int(found.group(2) or 0) if first == 1 else first


def java_candidates() -> list[Path]:
    """JDK homes in the order they are tried: JAVA_HOME, then every JDK under /usr/lib/jvm, then PATH."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    if JVM_DIR.is_dir():
        homes.extend(sorted(p for p in JVM_DIR.iterdir() if (p / "bin" / "java").is_file()))
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    unique: list[Path] = []
    for home in homes:
        if home.resolve() not in {u.resolve() for u in unique}:
            unique.append(home)
    return unique


def find_java(version: str, candidates: list[Path] | None = None) -> tuple[Path, int]:
    """The JDK home (and its major) to run `version` with: JAVA_HOME when it fits, else the newest that fits."""
    low, high = java_range(version)
    seen: list[str] = []
    fitting: list[tuple[int, Path]] = []
    for index, home in enumerate(java_candidates() if candidates is None else candidates):
        major = java_major(home)
        if major is None or not (home / "bin" / "javac").is_file():
            seen.append(f"{home} (no JDK)")
            continue
        seen.append(f"Java {major} at {home}")
        if major >= low and (high is None or major <= high):
            if index == 0 and candidates is None and os.environ.get("JAVA_HOME"):
                return home, major
            fitting.append((major, home))
    if fitting:
        major, home = max(fitting, key=lambda f: f[0])
        return home, major
    need = f"Java {low} or newer" if high is None else f"Java {low} to {high}"
    raise NodeError(
        f"OpenSearch {version} needs {need} (a JDK, with javac); found: {', '.join(seen) or 'no Java'}",
        hint=f"install a JDK {low}+ under /usr/lib/jvm or point JAVA_HOME at one",
    )


# --- the record of what start started -------------------------------------------------------------


def _port_dir(cache: Path, port: int) -> Path:
    return cache / "nodes" / str(port)


def _read_record(cache: Path, port: int) -> dict[str, Any] | None:
    path = _port_dir(cache, port) / "node.json"
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record


def _write_record(cache: Path, port: int, record: dict[str, Any]) -> None:
    path = _port_dir(cache, port) / "node.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created if missing): one start per port, one download per version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _is_our_jvm(pid: int, home: str) -> bool:
    """Whether `pid` is alive and is the launcher JVM whose path.home is `home` (not a recycled pid)."""
    with contextlib.suppress(ChildProcessError, OSError):
        # Reap it if this very process started it and it died: a zombie still answers kill(pid, 0).
        os.waitpid(pid, os.WNOHANG)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    return b"Launcher" in cmdline and f"path.home={home}".encode() in cmdline


def _container_running(name: str) -> bool:
    done = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True, text=True, check=False
    )
    return done.returncode == 0 and done.stdout.strip() == "true"


def _status_from(record: dict[str, Any] | None, port: int, *, reused: bool = False) -> NodeStatus:
    url = f"http://{HOST}:{port}"
    if record is None:
        return NodeStatus(state="stopped", port=port, url=url)
    pid = record.get("pid")
    container = record.get("container")
    state: State
    if container:
        state = "running" if _container_running(container) else ("dead" if record.get("live") else "stopped")
    elif pid is None:
        state = "stopped"
    else:
        state = "running" if _is_our_jvm(int(pid), str(record.get("home"))) else "dead"
    return NodeStatus(
        state=state,
        port=port,
        url=url,
        version=record.get("version"),
        pid=int(pid) if pid is not None else None,
        data_dir=record.get("data_dir"),
        heap=record.get("heap"),
        log=record.get("log"),
        java=record.get("java"),
        container=container,
        reused=reused,
    )


def status(port: int = 9200, cache_dir: Path | str | None = None) -> NodeStatus:
    """What `start` left on `port`: running, stopped, or dead (its pid gone without `stop`)."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    return _status_from(_read_record(cache, port), port)


# --- HTTP -----------------------------------------------------------------------------------------


def _get_json(url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
            return body
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _wait_green(url: str, alive: Any, log: Path | None, timeout: float = GREEN_TIMEOUT_S) -> str:
    """Poll until the cluster is green; the node's version. Fails early when `alive()` turns false."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = _get_json(f"{url}/_cluster/health?wait_for_status=green&timeout=1s", timeout=5)
        if health and health.get("status") == "green":
            root = _get_json(url) or {}
            return str(root.get("version", {}).get("number", "unknown"))
        if not alive():
            raise NodeError(
                f"the OpenSearch node on {url} exited while starting" + _log_tail_note(log),
                hint=f"see {log}" if log else None,
            )
        time.sleep(0.5)
    raise NodeError(f"the OpenSearch node on {url} was not green after {timeout:.0f} s" + _log_tail_note(log))


def _log_tail_note(log: Path | None, lines: int = 10) -> str:
    if log is None:
        return ""
    # A JVM that dies on an exception prints it on stdout.log; opensearch.log has the lines before.
    tail = "\n".join(part for part in (_tail(log, lines), _tail(log.parent / "stdout.log", lines)) if part)
    return f"; last lines of its logs:\n{tail}" if tail else ""


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _port_free(port: int) -> bool:
    """Whether nothing listens on (or holds) 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _wait_port_free(port: int, timeout: float) -> bool:
    """Whether the port came free within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not _port_free(port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


# --- Docker ---------------------------------------------------------------------------------------


def docker_available() -> bool:
    """Whether a Docker engine answers (`docker info` succeeds), not merely whether the CLI exists."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _start_container(cache: Path, version: str, port: int, heap: str, extra: dict[str, str]) -> dict[str, Any]:
    """The official image, bound to 127.0.0.1 only; security off because nothing but loopback reaches it."""
    name = f"lawindex-opensearch-{port}"
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    command = [
        "docker", "run", "-d", "--name", name,
        "-p", f"{HOST}:{port}:9200",
        "-e", "discovery.type=single-node",
        "-e", "DISABLE_SECURITY_PLUGIN=true",
        "-e", "DISABLE_INSTALL_DEMO_CONFIG=true",
        "-e", "cluster.routing.allocation.disk.threshold_enabled=false",
        "-e", f"OPENSEARCH_JAVA_OPTS=-Xms{heap} -Xmx{heap}",
        *(part for key, value in extra.items() for part in ("-e", f"{key}={value}")),
        f"{DOCKER_IMAGE}:{version}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NodeError(f"docker could not start {DOCKER_IMAGE}:{version}: {done.stderr.strip()}")
    return {
        "version": version, "port": port, "heap": heap, "container": name, "live": True,
        "data_dir": f"docker volume of {name}", "log": None, "pid": None, "java": None, "home": None,
    }  # fmt: skip


# --- artifacts and the launcher -------------------------------------------------------------------


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NodeError(
            "Maven (mvn) is not on PATH; it resolves OpenSearch's jars from Maven Central",
            hint="install Maven 3.8+ (apt-get install maven)",
        )
    return mvn


def _run(command: list[str], java_home: Path, what: str, cwd: Path) -> None:
    env = dict(os.environ, JAVA_HOME=str(java_home))
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
        raise NodeError(f"{what} failed:\n{output}")


def ensure_artifacts(version: str, cache: Path, java_home: Path) -> Path:
    """The directory with OpenSearch `version`'s jars (lib/) and the compiled launcher (classes/)."""
    sources = node_dir()
    target = cache / f"opensearch-{version}"
    lib = target / "lib"
    with _locked(cache / f"opensearch-{version}.lock"):
        if not (lib / ".complete").is_file():
            shutil.rmtree(lib, ignore_errors=True)
            lib.mkdir(parents=True)
            m2 = cache / "m2"
            # Quiet, batch, and the cache's own local repository: nothing leaks into ~/.m2.
            base = [_mvn(), "-q", "-B", f"-Dmaven.repo.local={m2}"]
            _run(
                [*base, "-f", str(sources / "pom.xml"), f"-Dopensearch.version={version}",
                 "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                java_home, f"resolving OpenSearch {version} from Maven Central", cwd=cache,
            )  # fmt: skip
            api = sorted(lib.glob("log4j-api-*.jar"))
            if not api:
                raise NodeError(f"OpenSearch {version} brought no log4j-api jar; node/pom.xml needs a look")
            log4j = api[0].name.removeprefix("log4j-api-").removesuffix(".jar")
            # See node/pom.xml: log4j-core is optional in the server's pom but the node needs it.
            _run(
                [*base, "dependency:copy", f"-Dartifact=org.apache.logging.log4j:log4j-core:{log4j}",
                 f"-DoutputDirectory={lib}"],
                java_home, f"resolving log4j-core {log4j}", cwd=cache,
            )  # fmt: skip
            (lib / ".complete").write_text(version + "\n")
        launcher = sources / "Launcher.java"
        digest = hashlib.sha256(launcher.read_bytes()).hexdigest()
        classes = target / "classes"
        stamp = classes / ".source-sha256"
        if not stamp.is_file() or stamp.read_text().strip() != digest:
            shutil.rmtree(classes, ignore_errors=True)
            classes.mkdir(parents=True)
            _run(
                [str(java_home / "bin" / "javac"), "-nowarn", "-d", str(classes), "-cp", f"{lib}/*",
                 str(launcher)],
                java_home, "compiling node/Launcher.java", cwd=cache,
            )  # fmt: skip
            stamp.write_text(digest + "\n")
    return target


def _spawn_detached(command: list[str], cwd: Path, output: Path) -> int:
    """Start `command` in its own session, outliving this process and not its child; its pid."""
    # sh backgrounds the JVM and exits at once, so the JVM is re-parented (to init or a subreaper)
    # rather than left as our child, which would linger as a zombie after a kill and look alive.
    script = 'exec 0</dev/null; "$@" >>"$LAWINDEX_NODE_OUT" 2>&1 & echo $!'
    env = dict(os.environ, LAWINDEX_NODE_OUT=str(output))
    done = subprocess.run(
        ["sh", "-c", script, "sh", *command], cwd=cwd, env=env, capture_output=True, text=True,
        start_new_session=True, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise NodeError(f"could not launch the OpenSearch JVM: {done.stderr.strip()}")
    return int(done.stdout.strip())


def _start_jvm(cache: Path, version: str, port: int, heap: str, extra: dict[str, str]) -> dict[str, Any]:
    java_home, major = find_java(version)
    artifacts = ensure_artifacts(version, cache, java_home)
    where = _port_dir(cache, port)
    # Data per version: a 2.19 node cannot read the cluster state a 3.x node left (Lucene 10 files), and
    # the two pinned versions take turns on the test ports.
    home, data, logs = where / "home", where / "data" / version, where / "logs"
    for directory in (home, data, logs):
        directory.mkdir(parents=True, exist_ok=True)
    settings = {
        "path.home": str(home),
        "path.data": str(data),
        "path.logs": str(logs),
        "network.host": HOST,
        "http.port": str(port),
        # A range: two local nodes (9200 and 9201) must not fight over one transport port.
        "transport.port": "9300-9399",
        "discovery.type": "single-node",
        # Small laptop and CI disks would otherwise turn indices read-only at 95 % full.
        "cluster.routing.allocation.disk.threshold_enabled": "false",
        "node.name": f"lawindex-{port}",
        "cluster.name": f"lawindex-{port}",
        **extra,
    }
    jvm = [str(java_home / "bin" / "java"), f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC",
           "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8"]  # fmt: skip
    if major >= 21:
        # Lucene 10 maps index files through java.lang.foreign; say so instead of a warning a start.
        jvm.append("--enable-native-access=ALL-UNNAMED")
    command = [*jvm, "-cp", f"{artifacts / 'lib'}/*:{artifacts / 'classes'}", "Launcher",
               *(f"{key}={value}" for key, value in settings.items())]  # fmt: skip
    pid = _spawn_detached(command, where, logs / "stdout.log")
    return {
        "version": version, "port": port, "heap": heap, "pid": pid, "home": str(home),
        "data_dir": str(data), "log": str(logs / "opensearch.log"), "java": str(java_home),
        "container": None, "started_at": time.time(),
    }  # fmt: skip


# --- the entry points -----------------------------------------------------------------------------


def start(
    version: str | None = None,
    port: int = 9200,
    heap: str = "512m",
    cache_dir: Path | str | None = None,
    settings: dict[str, str] | None = None,
) -> NodeStatus:
    """A green single-node OpenSearch on 127.0.0.1:port; the one already running there if `start` made it.

    `settings` are extra static node settings (`thread_pool.write.queue_size=1` for the tests that force
    429s); they apply to a node this call starts, not to one it finds running."""
    version = version or default_version()
    if not _HEAP.match(heap):
        raise NodeError(f"heap {heap!r} is not a JVM size like 512m or 2g")
    if not 1 <= port <= 65535:
        raise NodeError(f"port {port} is not a TCP port")
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    url = f"http://{HOST}:{port}"
    with _locked(cache / "nodes" / f"{port}.lock"):
        record = _read_record(cache, port)
        current = _status_from(record, port)
        if record is not None and current.state == "running":
            if record.get("version") != version:
                raise NodeError(
                    f"port {port} already runs OpenSearch {record.get('version')}, started by lawindex",
                    hint=f"lawindex opensearch stop --port {port}, or pick another --port",
                )
            found = _wait_green(url, lambda: status(port, cache).state == "running", _log_path(record))
            return _status_from({**record, "version": found}, port, reused=True)
        if current.state == "dead":
            # A JVM killed a moment ago shows as dead (its main thread a zombie) while its other
            # threads still exit and hold the port for a second or two.
            _wait_port_free(port, DEAD_PORT_GRACE_S)
        if not _port_free(port):
            raise NodeError(
                f"port {port} on {HOST} is taken by a process lawindex did not start",
                hint=f"stop that process or use another --port (see: ss -ltnp 'sport = :{port}')",
            )
        if docker_available():
            record = _start_container(cache, version, port, heap, settings or {})
        else:
            record = _start_jvm(cache, version, port, heap, settings or {})
        _write_record(cache, port, record)
        found = _wait_green(url, lambda: status(port, cache).state == "running", _log_path(record))
        if found != version:
            raise NodeError(f"asked for OpenSearch {version}, but the node on {url} reports {found}")
        return _status_from(record, port)


def _log_path(record: dict[str, Any]) -> Path | None:
    log = record.get("log")
    return Path(log) if log else None


def stop(port: int = 9200, cache_dir: Path | str | None = None) -> NodeStatus:
    """End the node `start` started on `port` (by its pid or container), and nothing else; its status after."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    with _locked(cache / "nodes" / f"{port}.lock"):
        record = _read_record(cache, port)
        if record is None:
            return _status_from(None, port)
        before = _status_from(record, port)
        if record.get("container"):
            subprocess.run(["docker", "rm", "-f", str(record["container"])], capture_output=True, check=False)
            record["live"] = False
        elif before.state == "running" and before.pid is not None:
            pid = before.pid
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while time.monotonic() < deadline and _is_our_jvm(pid, str(record["home"])):
                time.sleep(0.2)
            if _is_our_jvm(pid, str(record["home"])):
                os.kill(pid, signal.SIGKILL)
        record["pid"] = None
        _write_record(cache, port, record)
        return _status_from(record, port)


def logs(port: int = 9200, lines: int = 50, cache_dir: Path | str | None = None) -> str:
    """The last `lines` lines the node on `port` logged (its launcher's stdout when the log is empty)."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    record = _read_record(cache, port)
    if record is None:
        raise NodeError(
            f"lawindex has started no OpenSearch on port {port}", hint=f"lawindex opensearch start --port {port}"
        )
    if record.get("container"):
        done = subprocess.run(["docker", "logs", "--tail", str(lines), str(record["container"])],
                              capture_output=True, text=True, check=False)  # fmt: skip
        return done.stdout + done.stderr
    log = _log_path(record)
    if log is None:
        return ""
    text = _tail(log, lines)
    out = _tail(log.parent / "stdout.log", lines)
    return "\n".join(part for part in (text, out) if part)
