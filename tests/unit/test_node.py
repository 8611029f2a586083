"""The pure parts of the local node: the pins, the cache directory, finding the right Java."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from indexer import node
from indexer.errors import NodeError

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
    """.env is what docker compose reads for ${OPENSEARCH_VERSION}; it must be the pins file itself."""
    assert (REPO / ".env").resolve() == (REPO / "node" / "versions.env").resolve()
    assert "${OPENSEARCH_VERSION" in (REPO / "docker-compose.yml").read_text()


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
    assert node.default_cache_dir() == tmp_path / "home" / ".cache" / "lawindex"


@pytest.mark.parametrize(
    ("text", "major"),
    [('JAVA_VERSION="17.0.15"', 17), ('JAVA_VERSION="25"', 25), ('JAVA_VERSION="1.8.0_412"', 8)],
)
def test_java_major_from_release_file(tmp_path: Path, text: str, major: int) -> None:
    (tmp_path / "release").write_text(text + "\n")
    assert node.java_major(tmp_path) == major


def test_java_ranges() -> None:
    assert node.java_range("3.9.0") == (21, None)
    assert node.java_range("2.19.6") == (11, 23)


def test_java_for_3x_skips_17_and_takes_21_plus(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    jdk25 = _jdk(tmp_path, "jdk25", "25.0.3")
    assert node.find_java("3.9.0", [jdk17, jdk25]) == (jdk25, 25)


def test_java_for_2x_refuses_a_java_without_security_manager(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    jdk25 = _jdk(tmp_path, "jdk25", "25.0.3")
    assert node.find_java("2.19.6", [jdk25, jdk17]) == (jdk17, 17)


def test_too_old_java_is_a_clear_error_naming_the_needed_version(tmp_path: Path) -> None:
    jdk17 = _jdk(tmp_path, "jdk17", "17.0.15")
    with pytest.raises(NodeError, match=r"OpenSearch 3\.9\.0 needs Java 21 or newer.*Java 17") as raised:
        node.find_java("3.9.0", [jdk17])
    assert raised.value.hint is not None and "JAVA_HOME" in raised.value.hint


def test_a_jre_without_javac_does_not_count(tmp_path: Path) -> None:
    jre = _jdk(tmp_path, "jre25", "25.0.3", javac=False)
    with pytest.raises(NodeError, match="no JDK"):
        node.find_java("3.9.0", [jre])


def test_no_java_at_all_is_a_clear_error() -> None:
    with pytest.raises(NodeError, match="no Java"):
        node.find_java("2.19.6", [])


def test_java_home_wins_when_it_fits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jdk21 = _jdk(tmp_path, "jdk21", "21.0.2")
    monkeypatch.setenv("JAVA_HOME", str(jdk21))
    home, major = node.find_java("3.9.0")
    assert (home, major) == (jdk21, 21)


def test_java_home_of_the_wrong_major_is_passed_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jdk11 = _jdk(tmp_path, "jdk11", "11.0.2")
    monkeypatch.setenv("JAVA_HOME", str(jdk11))
    home, major = node.find_java("3.9.0")
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


@pytest.mark.parametrize("heap", ["512", "1.5g", "-1m", "m"])
def test_a_bad_heap_is_refused_before_anything_starts(tmp_path: Path, heap: str) -> None:
    with pytest.raises(NodeError, match="heap"):
        node.start(port=9259, heap=heap, cache_dir=tmp_path)
