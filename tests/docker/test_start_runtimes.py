"""`lawindex opensearch start` never fails because a pull is impossible: each branch of what it runs.

The official image where the engine has it (or can pull it), else the local `lawindex/opensearch`
image, else the distribution; with no engine, the distribution. A registry that refuses at once
(127.0.0.1:1) stands for "cannot pull" on every machine, as every pull does on these.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from indexer.errors import NodeError
from indexer.node import containers, node
from tests.docker.support import forget_node, get_json, lawindex_cli, modules

UNPULLABLE = "127.0.0.1:1/lawindex-unpullable/opensearch"


@pytest.fixture
def unpullable(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LAWINDEX_OFFICIAL_IMAGE", UNPULLABLE)
    return UNPULLABLE


def test_the_official_image_is_taken_when_the_engine_has_it(
    local_image: str, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    official = f"lawindex-test/official:{version}"
    subprocess.run(["docker", "tag", local_image, official], check=True, capture_output=True)
    try:
        monkeypatch.setenv("LAWINDEX_OFFICIAL_IMAGE", "lawindex-test/official")
        assert node.choose_image(version)[:2] == (official, "official image")
    finally:
        subprocess.run(["docker", "rmi", official], check=False, capture_output=True)


def test_an_engine_that_cannot_pull_falls_back_to_the_local_image(
    local_image: str, version: str, unpullable: str
) -> None:
    chosen, runs, why = node.choose_image(version)
    assert (chosen, runs) == (local_image, "local image")
    assert f"{unpullable}:{version} cannot be pulled" in why


def test_no_official_and_no_local_image_means_the_distribution(
    engine: None, version: str, unpullable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAWINDEX_LOCAL_IMAGE", "lawindex-test/never-built")
    chosen, runs, why = node.choose_image(version)
    assert (chosen, runs) == (None, "distribution")
    assert "lawindex-test/never-built" in why and "is not built" in why


@pytest.fixture
def stopped_after(base_port: int) -> Iterator[list[int]]:
    """The ports a test starts nodes on; each is new when the test begins (no record or data left from an
    earlier run, which `start` would run again as it was created) and stopped when it ends."""
    for port in range(base_port, base_port + 3):
        forget_node(port)
    ports: list[int] = []
    yield ports
    for port in ports:
        node.stop(port)


def test_start_runs_the_local_image_when_the_official_cannot_be_pulled(
    local_image: str, version: str, base_port: int, unpullable: str, stopped_after: list[int]
) -> None:
    port = base_port
    stopped_after.append(port)
    done = lawindex_cli("opensearch", "start", "--port", str(port), "--heap", "256m")
    assert done.returncode == 0, done.stderr
    assert f"local image {local_image}" in done.stderr
    assert "cannot be pulled" in done.stderr
    url = done.stdout.strip().splitlines()[-1]
    assert url == f"http://127.0.0.1:{port}"
    root = get_json(url)
    assert root["version"]["number"] == version
    assert root["version"]["build_type"] == "zip"
    assert {"analysis-common", "transport-netty4"} <= modules(url)
    found = node.status(port)
    assert (found.state, found.runs, found.image) == ("running", "local image", local_image)
    container = found.container
    assert container is not None
    # Published on loopback only.
    ports = subprocess.run(["docker", "port", container, "9200"], capture_output=True, text=True, check=True)
    assert ports.stdout.strip() == f"127.0.0.1:{port}"
    node.stop(port)
    assert not containers.running(container)
    assert node.status(port).state == "stopped"


def test_start_runs_the_distribution_when_the_engine_has_no_image(
    engine: None, version: str, base_port: int, unpullable: str, stopped_after: list[int]
) -> None:
    port = base_port + 1
    stopped_after.append(port)
    done = lawindex_cli(
        "opensearch", "start", "--port", str(port), "--heap", "256m",
        env={"LAWINDEX_OFFICIAL_IMAGE": unpullable, "LAWINDEX_LOCAL_IMAGE": "lawindex-test/never-built"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the distribution at" in done.stderr and "is not built" in done.stderr
    found = node.status(port)
    assert (found.state, found.runs, found.container) == ("running", "distribution", None)
    assert get_json(found.url)["version"]["build_type"] == "zip"


def test_with_no_engine_auto_runs_the_distribution_and_docker_is_refused(
    version: str, base_port: int, stopped_after: list[int]
) -> None:
    nowhere = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    refused = lawindex_cli("opensearch", "start", "--port", str(base_port + 2), "--runtime", "docker", env=nowhere)
    assert refused.returncode == 6
    assert refused.stderr.startswith("starting OpenSearch")
    assert "error: no Docker engine answers" in refused.stderr
    port = base_port + 2
    stopped_after.append(port)
    done = lawindex_cli("opensearch", "start", "--port", str(port), "--heap", "256m", env=nowhere)
    assert done.returncode == 0, done.stderr
    assert "the distribution at" in done.stderr and "no Docker engine" in done.stderr
    assert node.status(port).runs == "distribution"


def test_the_image_command_is_refused_with_no_engine() -> None:
    done = lawindex_cli("opensearch", "image", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert done.returncode == 6
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: no Docker engine answers")
    assert lines[1].startswith("hint: ")
    assert done.stdout == ""


def test_docker_runtime_with_no_image_is_a_clear_error(
    engine: None, version: str, base_port: int, unpullable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAWINDEX_LOCAL_IMAGE", "lawindex-test/never-built")
    with pytest.raises(NodeError, match="no image of OpenSearch"):
        node.start(version=version, port=base_port + 3, runtime="docker")
