"""Tests that need a Docker engine: the image lawindex builds, how `start` picks what runs, docker-compose.

They fail, never skip, when no engine answers: .ci/run starts one. The image is `LAWINDEX_TEST_IMAGE`
when set (.ci/run builds it once and names it), else built here (`lawindex opensearch image`, cached).
Ports: `LAWINDEX_DOCKER_TEST_PORT` and the nine after it (default 9450-9459), on 127.0.0.1 only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.node import containers, image, node

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/docker is marked `integration` too: it talks to a real OpenSearch."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def engine() -> None:
    """A Docker engine that answers, or the test fails."""
    problem = containers.engine_problem()
    if problem is not None:
        pytest.fail(f"no Docker engine answers ({problem}); .ci/run starts one", pytrace=False)


@pytest.fixture(scope="session")
def version() -> str:
    return os.environ.get("LAWINDEX_OPENSEARCH_VERSION") or node.default_version()


@pytest.fixture(scope="session")
def local_image(engine: None, version: str) -> str:
    """The lawindex/opensearch image of `version`: LAWINDEX_TEST_IMAGE, else built (or found built) here."""
    named = os.environ.get("LAWINDEX_TEST_IMAGE")
    if named:
        assert containers.image_present(named), f"LAWINDEX_TEST_IMAGE={named} is not in the engine"
        return named
    return image.build(version=version)


@pytest.fixture(scope="session")
def base_port() -> int:
    return int(os.environ.get("LAWINDEX_DOCKER_TEST_PORT", "9450"))
