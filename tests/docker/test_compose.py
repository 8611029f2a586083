"""docker-compose.yml as the README uses it: up, healthy, load, ask, the service answers as the CLI, down -v."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Iterator

import pytest

from indexer.node import containers
from tests.docker.service_image import build as service_image_build
from tests.docker.support import REPO, get_json, lawindex_cli, wait_for

PROJECT = os.environ.get("LAWINDEX_COMPOSE_PROJECT", "lawindex-compose-test")
QUESTIONS = ["how far from a fire hydrant can i park", "how long must i hold my learners permit", "parkng on a hil"]


def _compose() -> list[str]:
    """`docker compose` (the v2 plugin) where it exists, else Debian's docker-compose."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True, check=False).returncode == 0:
        return ["docker", "compose"]
    legacy = shutil.which("docker-compose")
    if legacy is None:
        pytest.fail("neither docker compose nor docker-compose is installed; .ci/run installs docker-compose")
    return [legacy]


@pytest.fixture(scope="session")
def service_image(local_image: str) -> str:
    """The `lawindex` service's image (tests/docker/service_image.py): LAWINDEX_SERVICE_IMAGE when .ci/run
    built it ahead, else built here; docker-compose.yml takes its name from LAWINDEX_IMAGE."""
    named = os.environ.get("LAWINDEX_SERVICE_IMAGE")
    if named:
        assert containers.image_present(named), f"LAWINDEX_SERVICE_IMAGE={named} is not in the engine"
        return named
    began = time.monotonic()
    name = service_image_build(f"{PROJECT}-lawindex:test")
    print(f"\nthe lawindex service's image {name} built in {time.monotonic() - began:.0f} s")
    return name


@pytest.fixture
def compose_up(local_image: str, service_image: str, base_port: int) -> Iterator[tuple[list[str], dict[str, str], str]]:
    port = base_port + 7
    serve_port = int(os.environ.get("LAWINDEX_DOCKER_SERVE_PORT", str(base_port + 8)))
    env = {
        "OPENSEARCH_IMAGE": local_image,
        "OPENSEARCH_PORT": str(port),
        "LAWINDEX_IMAGE": service_image,
        "LAWINDEX_PORT": str(serve_port),
    }
    command = [*_compose(), "-p", PROJECT, "-f", str(REPO / "docker-compose.yml")]
    full_env = {**os.environ, **env}
    began = time.monotonic()
    subprocess.run([*command, "up", "-d"], env=full_env, check=True, capture_output=True, cwd=REPO, timeout=300)
    print(f"\ncompose up returned in {time.monotonic() - began:.1f} s")
    try:
        yield command, full_env, f"http://127.0.0.1:{port}"
    finally:
        subprocess.run([*command, "down", "-v"], env=full_env, check=False, capture_output=True, cwd=REPO, timeout=300)


def _health(command: list[str], env: dict[str, str], service: str = "opensearch") -> str:
    ids = subprocess.run([*command, "ps", "-q", service], env=env, capture_output=True, text=True, cwd=REPO)
    container = ids.stdout.strip()
    if not container:
        return "missing"
    done = subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}", container],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip()


def test_compose_up_healthy_load_ask_down(compose_up: tuple[list[str], dict[str, str], str]) -> None:
    command, env, url = compose_up
    began = time.monotonic()
    wait_for("compose service opensearch", lambda: _health(command, env) in ("healthy", "unhealthy", "missing"))
    assert _health(command, env) == "healthy"
    print(f"compose service healthy {time.monotonic() - began:.1f} s after up")
    ports = subprocess.run([*command, "port", "opensearch", "9200"], env=env, capture_output=True, text=True, cwd=REPO)
    assert ports.stdout.strip() == url.removeprefix("http://")  # 127.0.0.1 only

    loaded = lawindex_cli("load", "corpora/", "--url", url)
    assert loaded.returncode == 0, loaded.stderr
    asked = lawindex_cli("ask", "TX", "how far from a fire hydrant can i park", "--url", url)
    assert asked.returncode == 0, asked.stderr
    lines = asked.stdout.splitlines()
    assert lines[0] == "words: far fire hydrant park"
    assert lines[1].startswith("TX-S01 ")

    # The service beside it: ready once a state is loaded, and answering as `lawindex ask --json` does.
    wait_for("compose service lawindex", lambda: _health(command, env, "lawindex") in ("healthy", "unhealthy"))
    assert _health(command, env, "lawindex") == "healthy"
    served = f"http://127.0.0.1:{env['LAWINDEX_PORT']}"
    for question in QUESTIONS:
        cli = lawindex_cli("ask", "TX", question, "--json", "--url", url)
        assert cli.returncode == 0, cli.stderr
        expected = json.loads(cli.stdout)
        answer = get_json(f"{served}/v1/states/TX/ask?{urllib.parse.urlencode({'q': question})}")
        assert [hit["id"] for hit in answer["hits"]] == [hit["id"] for hit in expected["hits"]]
        assert answer == expected
        assert answer["hits"], question  # each question reaches laws: the ids compared are not two empty lists

    volumes = subprocess.run(["docker", "volume", "ls", "-q"], capture_output=True, text=True, check=True).stdout
    assert f"{PROJECT}_opensearch-data" in volumes.split()
    subprocess.run([*command, "down", "-v"], env=env, check=True, capture_output=True, cwd=REPO, timeout=300)
    volumes = subprocess.run(["docker", "volume", "ls", "-q"], capture_output=True, text=True, check=True).stdout
    assert f"{PROJECT}_opensearch-data" not in volumes.split()
