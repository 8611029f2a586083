"""The parts of the local node that need no OpenSearch: the pins, the cache directory, finding the right
Java, settings, the distribution's download and the modules lawindex adds, an unwritable cache."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from indexer.errors import BadInput, NodeError
from indexer.node import cluster, distribution, host, java, launch, node, pins, record, state
from tests.unit.distributions import distribution_zip

REPO = Path(__file__).resolve().parents[2]


def _jdk(root: Path, name: str, version: str, javac: bool = True) -> Path:
    """A fake JDK home: a release file and the executables' names, which is all discovery reads."""
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "release").write_text(f'JAVA_VERSION="{version}"\nIMPLEMENTOR="test"\n')
    (home / "bin" / "java").write_text("")
    if javac:
        (home / "bin" / "javac").write_text("")
    return home


def test_pins_are_one_3x_default_and_one_2x() -> None:
    default, legacy = node.pinned_versions()
    assert default.startswith("3.")
    assert legacy.startswith("2.19.")
    assert node.default_version() == default
    for version in (default, legacy):
        assert re.fullmatch(r"\d+\.\d+\.\d+", version)


def test_compose_reads_the_same_pin_through_the_env_link() -> None:
    """.env is what docker compose reads for ${OPENSEARCH_IMAGE}; it must be the pins file itself, and its
    image the official one of the default pin."""
    assert (REPO / ".env").resolve() == (REPO / "pins" / "versions.env").resolve()
    assert "${OPENSEARCH_IMAGE" in (REPO / "docker-compose.yml").read_text()
    pinned = pins.read_pins()
    assert pinned["OPENSEARCH_IMAGE"] == f"opensearchproject/opensearch:{pinned['OPENSEARCH_VERSION']}"


def test_read_pins_skips_comments_and_strips_quotes(tmp_path: Path) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text("# comment\n\nOPENSEARCH_VERSION='3.1.0'\nOPENSEARCH_LEGACY_VERSION = \"2.19.1\"\n")
    assert node.pinned_versions(pins) == ["3.1.0", "2.19.1"]


def test_a_missing_pin_is_a_node_error(tmp_path: Path) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text("OPENSEARCH_VERSION=3.1.0\n")
    with pytest.raises(NodeError, match="OPENSEARCH_LEGACY_VERSION"):
        node.pinned_versions(pins)


def test_cache_dir_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAWINDEX_CACHE", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "b"))
    assert node.default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("LAWINDEX_CACHE")
    assert node.default_cache_dir() == tmp_path / "b" / "lawindex"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(node.os, "geteuid", lambda: 1000)
    assert node.default_cache_dir() == tmp_path / "home" / ".cache" / "lawindex"
    # Root's home is mode 700: the node's unprivileged user could not reach a node under it.
    monkeypatch.setattr(node.os, "geteuid", lambda: 0)
    assert node.default_cache_dir() == Path("/var/cache/lawindex")


@pytest.mark.parametrize(
    ("text", "major"),
    [('JAVA_VERSION="17.0.15"', 17), ('JAVA_VERSION="25"', 25), ('JAVA_VERSION="1.8.0_412"', 8)],
)
def test_java_major_from_release_file(tmp_path: Path, text: str, major: int) -> None:
    (tmp_path / "release").write_text(text + "\n")
    assert java.java_major(tmp_path) == major


def test_java_ranges() -> None:
    assert java.java_range("3.6.0") == (21, None)
    assert java.java_range("2.19.6") == (11, 23)


def test_java_for_3x_skips_17_and_takes_21_plus(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    jdk25 = _jdk(tmp_path, "jdk25", "25.0.3")
    assert java.find_java("3.9.0", [jdk17, jdk25]) == (jdk25, 25)


def test_java_for_2x_refuses_a_java_without_security_manager(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    jdk25 = _jdk(tmp_path, "jdk25", "25.0.3")
    assert java.find_java("2.19.6", [jdk25, jdk17]) == (jdk17, 17)


def test_too_old_java_is_a_clear_error_naming_the_needed_version(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    with pytest.raises(NodeError, match=r"OpenSearch 3\.9\.0 needs Java 21 or newer.*Java 17") as raised:
        java.find_java("3.9.0", [jdk17])
    assert raised.value.hint is not None and "JAVA_HOME" in raised.value.hint


def test_a_jre_is_enough_now_that_nothing_is_compiled(tmp_path: Path) -> None:
    jre = _jdk(tmp_path, "jre25", "25.0.3", javac=False)
    assert java.find_java("3.6.0", [jre]) == (jre, 25)


def test_a_folder_that_is_no_java_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "empty" / "bin").mkdir(parents=True)
    with pytest.raises(NodeError, match="no Java"):
        java.find_java("3.6.0", [tmp_path / "empty"])


def test_no_java_at_all_is_a_clear_error() -> None:
    with pytest.raises(NodeError, match="no Java"):
        java.find_java("2.19.6", [])


def test_java_home_wins_when_it_fits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jdk21 = _jdk(tmp_path, "jdk21", "21.0.2")
    monkeypatch.setenv("JAVA_HOME", str(jdk21))
    home, major = java.find_java("3.9.0")
    assert (home, major) == (jdk21, 21)


def test_java_home_of_the_wrong_major_is_passed_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jdk11 = _jdk(tmp_path, "jdk11", "11.0.2")
    monkeypatch.setenv("JAVA_HOME", str(jdk11))
    home, major = java.find_java("3.9.0")
    assert home != jdk11 and major >= 21


def test_status_of_a_port_never_started_is_stopped(tmp_path: Path) -> None:
    found = node.status(9259, tmp_path)
    assert (found.state, found.url, found.pid) == ("stopped", "http://127.0.0.1:9259", None)


def test_status_of_a_recorded_pid_that_is_gone_is_dead(tmp_path: Path) -> None:
    record = tmp_path / "nodes" / "9259" / "node.json"
    record.parent.mkdir(parents=True)
    # pid 2**22 + 1 is above Linux's pid_max limit: never a live process.
    record.write_text(
        '{"version": "3.9.0", "port": 9259, "heap": "512m", "pid": 4194305, "home": "/nowhere",'
        ' "data_dir": "/nowhere/data", "log": null, "container": null}'
    )
    found = node.status(9259, tmp_path)
    assert (found.state, found.version, found.pid, found.heap) == ("dead", "3.9.0", 4194305, "512m")


def test_a_node_inside_execve_is_still_running(tmp_path: Path) -> None:
    # A starting node's pid execs sh -> env -> bash -> java; inside execve the kernel shows an empty
    # command line, which was once taken for a node that exited while starting (CI, 2.19.6). Here a
    # bin/opensearch execs itself without end, and every look at it while it lives must say it runs.
    home = tmp_path / "home"
    script = home / "bin" / "opensearch"
    script.parent.mkdir(parents=True)
    script.write_text('#!/bin/sh\nexec "$0" again\n')
    script.chmod(0o755)
    process = subprocess.Popen([str(script)])
    try:
        looks = [state.is_our_node(process.pid, str(home)) for _ in range(3000)]
        alive = process.poll() is None
    finally:
        process.kill()
        process.wait()
    assert alive
    assert looks.count(False) == 0, f"{looks.count(False)} of {len(looks)} looks missed a node inside execve"
    assert not state.is_our_node(process.pid, str(home))


@pytest.mark.parametrize("heap", ["512", "1.5g", "-1m", "m"])
def test_a_bad_heap_is_refused_before_anything_starts(tmp_path: Path, heap: str) -> None:
    with pytest.raises(NodeError, match="heap"):
        node.start(port=9259, heap=heap, cache_dir=tmp_path)


# --- settings -------------------------------------------------------------------------------------


def test_settings_are_key_value_pairs() -> None:
    assert node.parse_settings(["thread_pool.write.queue_size=1", "node.attr.zone=a=b"]) == {
        "thread_pool.write.queue_size": "1",
        "node.attr.zone": "a=b",
    }


@pytest.mark.parametrize("pair", ["no_equals_sign", "=1", "nodots=1", "Bad.Key=1", "a b.c=1"])
def test_a_malformed_setting_is_bad_input(pair: str) -> None:
    with pytest.raises(BadInput, match="not a setting"):
        node.parse_settings([pair])


@pytest.mark.parametrize("key", ["http.port", "network.host", "path.data"])
def test_a_setting_lawindex_decides_is_refused(key: str) -> None:
    with pytest.raises(BadInput, match=f"{key} is set by lawindex"):
        node.parse_settings([f"{key}=1"])


def test_a_node_runs_with_the_callers_java_options_and_nothing_else_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = record.NodeFolder(tmp_path / "9440", "3.6.0")
    monkeypatch.setenv("OPENSEARCH_JAVA_OPTS", "-XX:TieredStopAtLevel=1 -Dx=y")
    monkeypatch.setenv("OPENSEARCH_PATH_CONF", "/elsewhere")
    monkeypatch.setenv("OPENSEARCH_TMPDIR", "/tmp")
    monkeypatch.setenv("LAWINDEX_SECRET_OF_THE_CALLER", "s3cret")
    env = launch.node_environment(folder, Path("/jdk"))
    assert env["OPENSEARCH_JAVA_OPTS"] == "-XX:TieredStopAtLevel=1 -Dx=y"
    assert env["OPENSEARCH_PATH_CONF"] == str(folder.config)
    assert env["OPENSEARCH_TMPDIR"] == str(tmp_path / "9440" / "tmp")
    assert env["HOME"] == str(folder.root)
    assert set(env) == {"PATH", "LANG", "HOME", "JAVA_HOME", "OPENSEARCH_JAVA_HOME", "OPENSEARCH_PATH_CONF",
                        "OPENSEARCH_TMPDIR", "OPENSEARCH_JAVA_OPTS"}  # fmt: skip
    monkeypatch.setenv("OPENSEARCH_JAVA_OPTS", "  ")
    assert "OPENSEARCH_JAVA_OPTS" not in launch.node_environment(folder, Path("/jdk"))


def test_a_node_settings_listen_on_loopback_with_transport_beside_http(tmp_path: Path) -> None:
    folder = record.NodeFolder(tmp_path / "9440", "3.6.0")
    settings = launch.node_settings(9440, {"transport.port": "9999", "node.attr.x": "y"}, folder)
    assert settings["network.host"] == "127.0.0.1"
    assert settings["http.port"] == "9440"
    assert settings["transport.port"] == "9999"  # an explicit setting wins over HTTP port + 100
    assert launch.node_settings(9440, {}, folder)["transport.port"] == "9540"
    assert settings["path.data"] == str(tmp_path / "9440" / "data" / "3.6.0")
    assert settings["node.attr.x"] == "y"


# --- the distribution: download, checksum, the module lawindex adds --------------------------------


def _publish(repo: Path, path: str, data: bytes, sha1: str | None = None) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    digest = sha1 or hashlib.sha1(data, usedforsecurity=False).hexdigest()
    target.with_name(target.name + ".sha1").write_text(digest + "\n")


def _jar(classname: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(classname.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return buffer.getvalue()


def test_a_zip_without_analysis_common_gets_it_from_its_jar(maven: Path, tmp_path: Path) -> None:
    _publish(maven, distribution.ZIP_PATH.format(v="2.19.9"), distribution_zip("2.19.9", {"transport-netty4": "11"}))
    jar = _jar("org.opensearch.analysis.common.CommonAnalysisPlugin")
    _publish(maven, distribution.MODULE_JAR_PATH.format(name="analysis-common", v="2.19.9"), jar)
    home = distribution.home("2.19.9", tmp_path / "cache")
    assert os.access(home / "bin" / "opensearch", os.X_OK)
    module = home / "modules" / "analysis-common"
    assert (module / "analysis-common-2.19.9.jar").read_bytes() == jar
    descriptor = dict(
        line.split("=", 1)
        for line in (module / "plugin-descriptor.properties").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert descriptor == {
        "description": "Adds built-in analyzers and filters (added by lawindex)",
        "version": "2.19.9",
        "name": "analysis-common",
        "classname": "org.opensearch.analysis.common.CommonAnalysisPlugin",
        "java.version": "11",
        "opensearch.version": "2.19.9",
        "extended.plugins": "",
        "has.native.controller": "false",
    }
    assert distribution.modules_added(home) == ["analysis-common"]


def test_a_zip_with_every_module_is_left_as_it_came(maven: Path, tmp_path: Path) -> None:
    _publish(maven, distribution.ZIP_PATH.format(v="3.8.9"), distribution_zip("3.8.9", {"analysis-common": "21"}))
    home = distribution.home("3.8.9", tmp_path / "cache")
    assert distribution.modules_added(home) == []
    assert (home / "modules" / "analysis-common" / "plugin-descriptor.properties").read_text() == "java.version=21\n"


def test_a_download_that_does_not_match_its_sha1_is_refused(maven: Path, tmp_path: Path) -> None:
    _publish(maven, distribution.ZIP_PATH.format(v="3.8.9"), distribution_zip("3.8.9", {}), sha1="0" * 40)
    with pytest.raises(NodeError, match=r"sha1 .* is not the published 0000"):
        distribution.home("3.8.9", tmp_path / "cache")
    assert not (tmp_path / "cache" / "dist" / "opensearch-3.8.9.zip").exists()


def test_a_version_without_a_zip_says_so(maven: Path, tmp_path: Path) -> None:
    with pytest.raises(NodeError, match=r"OpenSearch 3\.9\.0 has no distribution zip on "):
        distribution.home("3.9.0", tmp_path / "cache")


# --- the cache directory and the node's user --------------------------------------------------------


@pytest.mark.parametrize("command", ["start", "stop"])
def test_an_unwritable_cache_is_one_line_not_a_traceback(tmp_path: Path, command: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = subprocess.run(
        [sys.executable, "-c", "from indexer.cli import main; main()", "opensearch", command, "--port", "9459",
         "--cache-dir", str(blocker / "cache")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 6, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-2].startswith(f"error: the cache directory {blocker / 'cache'} cannot be written: Not a directory")
    assert lines[-1].startswith("hint: ")
    assert "Traceback" not in done.stderr


def test_a_node_folder_the_service_user_cannot_reach_is_a_clear_error() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root runs nodes as another user")  # CI runs as root: this runs there
    # Not under pytest's tmp_path: /tmp/pytest-of-root is itself private.
    with tempfile.TemporaryDirectory(prefix="lawindex-reach.") as scratch:
        base = Path(scratch)
        base.chmod(0o755)
        private = base / "private"
        private.mkdir(mode=0o700)
        folder = record.NodeFolder(private / "nodes" / "9459", "3.6.0")
        for directory in (folder.home / "bin", folder.data, folder.logs):
            directory.mkdir(parents=True, mode=0o755)
        (folder.home / "bin" / "opensearch").write_text("#!/bin/sh\n")
        (folder.home / "bin" / "opensearch").chmod(0o755)
        user = host.run_as(base)
        assert user.name == "lawindex" and user.uid != 0
        for directory in (folder.root, folder.data, folder.logs):
            os.chown(directory, user.uid, user.gid)
        with pytest.raises(NodeError, match=r"user lawindex, who runs the node .* cannot reach") as raised:
            launch.reachable(folder, user)
        assert raised.value.hint is not None and "/var/cache/lawindex" in raised.value.hint
        private.chmod(0o755)
        launch.reachable(folder, user)  # once the folder above is open, the same check passes


def test_logs_are_the_node_log_else_what_the_jvm_printed(tmp_path: Path) -> None:
    logs = tmp_path / "nodes" / "9459" / "logs"
    logs.mkdir(parents=True)
    (tmp_path / "nodes" / "9459" / "node.json").write_text(
        json.dumps({"version": "3.6.0", "port": 9459, "pid": None, "log": str(logs / "lawindex-9459.log")})
    )
    (logs / "stdout.log").write_text("Error: Could not create the Java Virtual Machine.\n")
    assert node.logs(9459, 5, tmp_path) == "Error: Could not create the Java Virtual Machine."
    (logs / "lawindex-9459.log").write_text("one\ntwo\nthree\n")
    assert node.logs(9459, 2, tmp_path) == "two\nthree"


def test_a_failed_start_shows_only_what_that_start_printed(tmp_path: Path) -> None:
    # On CI a start that failed showed the last lines an earlier node on the same port had logged
    # ("stopping ... closed"), which told nothing of why this one ended. Two real spawns of a command that
    # prints and exits, as a JVM that cannot start does; the note after each gives that one's lines only.
    logs = tmp_path / "logs"
    logs.mkdir()
    me = launch.RunAs(name="caller", uid=os.geteuid(), gid=os.getegid())
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    def start_and_end(*printed: str) -> None:
        command = ["sh", "-c", 'for line in "$@"; do echo "$line"; done; exit 1', "sh", *printed]
        pid = launch._spawn_detached(command, tmp_path, logs / "stdout.log", env, me)
        deadline = time.monotonic() + 10
        while state._command_line(pid) is not None:  # None: gone, or a zombie
            assert time.monotonic() < deadline, "the spawned command did not end"
            time.sleep(0.01)

    log = logs / "lawindex-9459.log"
    log.write_text("[o.o.n.Node] stopping ...\n[o.o.n.Node] closed\n")
    start_and_end("Error: Could not create the Java Virtual Machine.", "first start")
    first = state.log_tail_note(log)
    assert "first start" in first and "closed" not in first
    start_and_end("second start")
    second = state.log_tail_note(log)
    assert second == "; last lines of its logs:\nsecond start"
    start_and_end()
    assert state.log_tail_note(log) == f"; it printed nothing since it was started ({logs / 'stdout.log'})"


def test_logs_of_a_port_never_started_is_a_node_error(tmp_path: Path) -> None:
    with pytest.raises(NodeError, match="lawindex has started no OpenSearch on port 9459"):
        node.logs(9459, 5, tmp_path)


def test_a_cluster_node_finds_the_others_and_bootstraps_only_once(tmp_path: Path) -> None:
    folder = record.NodeFolder(tmp_path / "9481", "3.6.0")
    first = launch.node_settings(9481, {}, folder, launch.Cluster((9480, 9481, 9482), "cluster 9480 a"))
    assert first["cluster.name"] == "lawindex-9480"
    assert first["node.name"] == "lawindex-9481"
    assert first["discovery.seed_hosts"] == ["127.0.0.1:9580", "127.0.0.1:9581", "127.0.0.1:9582"]
    assert first["cluster.initial_cluster_manager_nodes"] == ["lawindex-9480", "lawindex-9481", "lawindex-9482"]
    assert "discovery.type" not in first
    members = launch.Cluster((9480, 9481, 9482), "cluster 9480 a", bootstrap=False)
    later = launch.node_settings(9481, {}, folder, members)
    assert "cluster.initial_cluster_manager_nodes" not in later
    assert launch.node_settings(9480, {}, folder)["discovery.type"] == "single-node"


@pytest.mark.parametrize("count", [0, 6])
def test_a_cluster_of_too_few_or_too_many_nodes_is_refused(count: int, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="1 to 5"):
        node.start(port=9480, nodes=count, cache_dir=tmp_path)


def test_a_cluster_whose_folder_another_cluster_took_starts_anew(tmp_path: Path) -> None:
    """Three nodes on 9485-9487 stopped, then three on 9486-9488: 9486's and 9487's folders (and data)
    are the second cluster's. The first, started again, must not count on them: it starts anew (it waited
    for a quorum from data that was the other cluster's, and was never green)."""
    first = record.ClusterRecord.model_validate(
        {"version": "3.6.0", "members": [{"port": p} for p in (9485, 9486, 9487)], "id": "cluster 9485 a"}
    )
    for port in (9485, 9486, 9487):
        (tmp_path / "nodes" / str(port)).mkdir(parents=True)
        (tmp_path / "nodes" / str(port) / record.OWNER_FILE).write_text("cluster 9485 a\n")
    ports = (9485, 9486, 9487)
    assert cluster.same_cluster(tmp_path, first, ports, "3.6.0", False)
    assert not cluster.same_cluster(tmp_path, first, ports, "2.19.6", False)
    assert not cluster.same_cluster(tmp_path, first, ports, "3.6.0", True)
    assert not cluster.same_cluster(tmp_path, first, (9485, 9486), "3.6.0", False)
    (tmp_path / "nodes" / "9486" / record.OWNER_FILE).write_text("cluster 9486 b\n")
    assert not cluster.same_cluster(tmp_path, first, ports, "3.6.0", False)
    assert record.folder_owner(tmp_path, 9486) == "cluster 9486 b"
    assert record.folder_owner(tmp_path, 9499) is None
    # A record written before folders named their owner, over folders that name none: not known to be its.
    older = record.ClusterRecord.model_validate(first.model_dump(exclude={"id"}))
    for port in ports:
        (tmp_path / "nodes" / str(port) / record.OWNER_FILE).unlink()
    assert not cluster.same_cluster(tmp_path, older, ports, "3.6.0", False)


@pytest.mark.parametrize(
    ("written", "runtime"),
    [
        (None, None),
        ({"port": 9200, "pid": 10, "container": None, "runs": "distribution"}, "distribution"),
        # Records written before `runtime` was: a container's name says it.
        ({"port": 9200, "container": "lawindex-opensearch-9200", "runs": "local image"}, "docker"),
        ({"port": 9200, "container": "lawindex-opensearch-9200", "runtime": "docker"}, "docker"),
        ({"port": 9200, "container": None, "runtime": "distribution"}, "distribution"),
        # A cluster is the distribution's alone; it has no single runtime to keep.
        ({"members": [{"port": 9200}, {"port": 9201}], "runs": "distribution"}, None),
    ],
)
def test_a_node_is_started_again_with_the_runtime_it_was_created_with(
    written: dict[str, object] | None, runtime: str | None, tmp_path: Path
) -> None:
    """The record as a node.json on disk (these shapes are what earlier versions wrote), read back."""
    if written is not None:
        (tmp_path / "nodes" / "9200").mkdir(parents=True)
        (tmp_path / "nodes" / "9200" / "node.json").write_text(json.dumps(written))
    assert node.created_runtime(record.read(tmp_path, 9200)) == runtime
