"""The image `lawindex opensearch image` builds: reused when nothing changed, and the official image's contract."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from indexer.node import containers, image
from tests.docker.support import get_json, lawindex_cli, modules, wait_for


def test_a_second_build_with_nothing_changed_reuses_the_image(local_image: str, version: str) -> None:
    before = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", local_image],
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    done = lawindex_cli("opensearch", "image", "--version", version)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == local_image
    assert "is up to date" in done.stderr
    after = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", local_image],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert after == before
    assert containers.image_label(local_image, image.CONTENT_LABEL)


@pytest.fixture
def contract_container(local_image: str, base_port: int) -> Iterator[tuple[str, str]]:
    """The image run as the official one is: env settings, OPENSEARCH_JAVA_OPTS, security flags."""
    name = f"lawindex-test-contract-{base_port + 5}"
    containers.remove(name)
    subprocess.run(
        ["docker", "run", "-d", "--name", name, "-p", f"127.0.0.1:{base_port + 5}:9200",
         "-e", "discovery.type=single-node",
         "-e", "cluster.name=lawindex-contract",
         "-e", "node.attr.flavour=plain",
         "-e", "OPENSEARCH_JAVA_OPTS=-Xms256m -Xmx256m",
         "-e", "DISABLE_SECURITY_PLUGIN=true",
         "-e", "DISABLE_INSTALL_DEMO_CONFIG=true",
         # What users of the official image pass to turn security off; no plugin here, so it is dropped.
         "-e", "plugins.security.disabled=true",
         local_image],
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        yield name, f"http://127.0.0.1:{base_port + 5}"
    finally:
        containers.remove(name)


def _green(url: str) -> bool:
    try:
        return get_json(f"{url}/_cluster/health")["status"] == "green"
    except OSError:
        return False


def test_the_image_keeps_the_official_contract(contract_container: tuple[str, str], version: str) -> None:
    name, url = contract_container
    began = time.monotonic()
    wait_for(f"container {name}", lambda: _green(url) or not containers.running(name))
    assert containers.running(name), subprocess.run(["docker", "logs", name], capture_output=True, text=True).stderr
    print(f"\ncontainer green in {time.monotonic() - began:.1f} s")
    root = get_json(url)
    assert root["cluster_name"] == "lawindex-contract"
    assert root["version"]["number"] == version and root["version"]["build_type"] == "zip"
    assert {"analysis-common", "transport-netty4"} <= modules(url)
    nodes = get_json(f"{url}/_nodes/jvm,settings")["nodes"]
    (one,) = nodes.values()
    assert one["attributes"]["flavour"] == "plain"
    assert one["jvm"]["mem"]["heap_max_in_bytes"] == 256 * 1024 * 1024
    assert one["settings"]["discovery"]["type"] == "single-node"

    def run(*command: str) -> str:
        return subprocess.run(["docker", "exec", name, *command], capture_output=True, text=True, check=True).stdout

    assert run("id", "-u").strip() == "1000"
    # Data where the official image keeps it; curl there for healthchecks.
    assert "nodes" in run("ls", "/usr/share/opensearch/data").split()
    assert '"cluster_name"' in run("curl", "-fsS", "http://127.0.0.1:9200/")
    logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True, check=True)
    assert "ignoring plugins.security.disabled" in logs.stdout + logs.stderr


def test_the_image_refuses_root(local_image: str) -> None:
    done = subprocess.run(["docker", "run", "--rm", "--user", "0", local_image], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1
    assert "cannot run as root" in done.stderr


def test_another_command_runs_as_given(local_image: str) -> None:
    done = subprocess.run(["docker", "run", "--rm", local_image, "cat", "/etc/os-release"],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "VERSION_CODENAME=bookworm" in done.stdout
