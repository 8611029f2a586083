"""A real OpenSearch for the integration tests, whatever the machine.

`opensearch_url`, once a session: `OPENSEARCH_URL` when it is set (scripts/test sets it); else the
official image through testcontainers when a Docker engine answers; else a local node from
`indexer.node.start`, version `LAWINDEX_OPENSEARCH_VERSION` (default: the pinned 3.x) on port
`LAWINDEX_TEST_PORT` (default 9250). When none can be had the tests fail, never skip: a suite that
skips its integration tests passes in CI while proving nothing.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from opensearchpy import OpenSearch

from indexer import node
from indexer.errors import LawindexError

HERE = Path(__file__).resolve().parent
DEFAULT_TEST_PORT = 9250


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/integration is marked `integration` (select or deselect it with -m)."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


def _say(config: pytest.Config, line: str) -> None:
    """A line in the test log even under output capture: how the node was had, and how long it took."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if capture is None or reporter is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


def _root(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as response:
        body: dict[str, Any] = json.loads(response.read().decode("utf-8"))
    return body


def _cannot(why: str) -> NoReturn:
    pytest.fail(f"no OpenSearch for the integration tests: {why}", pytrace=False)


@pytest.fixture(scope="session")
def opensearch_version() -> str:
    """The version under test: LAWINDEX_OPENSEARCH_VERSION, else what OPENSEARCH_URL runs, else the pinned 3.x."""
    if os.environ.get("LAWINDEX_OPENSEARCH_VERSION"):
        return os.environ["LAWINDEX_OPENSEARCH_VERSION"]
    if os.environ.get("OPENSEARCH_URL"):
        try:
            return str(_root(os.environ["OPENSEARCH_URL"].rstrip("/"))["version"]["number"])
        except (OSError, ValueError, KeyError) as error:
            _cannot(f"OPENSEARCH_URL={os.environ['OPENSEARCH_URL']} does not answer: {error}")
    return node.default_version()


@pytest.fixture(scope="session")
def opensearch_url(request: pytest.FixtureRequest, opensearch_version: str) -> Iterator[str]:
    """The URL of a real OpenSearch running `opensearch_version`, for the whole session."""
    config = request.config
    if os.environ.get("OPENSEARCH_URL"):
        url = os.environ["OPENSEARCH_URL"].rstrip("/")
        try:
            _root(url)
        except OSError as error:
            _cannot(f"OPENSEARCH_URL={url} does not answer: {error}")
        _say(config, f"opensearch: OPENSEARCH_URL {url} (OpenSearch {opensearch_version})")
        yield url
        return

    if node.docker_available():
        yield from _container(config, opensearch_version)
        return

    port = int(os.environ.get("LAWINDEX_TEST_PORT", DEFAULT_TEST_PORT))
    began = time.monotonic()
    try:
        started = node.start(version=opensearch_version, port=port)
    except LawindexError as error:
        _cannot(f"no OPENSEARCH_URL, no Docker engine, and the local node failed: {error.message}")
    how = "reused" if started.reused else "started"
    _say(
        config,
        f"opensearch: local node {started.version} {how} on {started.url} in {time.monotonic() - began:.1f} s",
    )
    try:
        yield started.url
    finally:
        # A node this session started is this session's to end; one it found running is left alone.
        if not started.reused:
            node.stop(port)


def _container(config: pytest.Config, version: str) -> Iterator[str]:
    try:
        from testcontainers.community.opensearch import OpenSearchContainer  # type: ignore[import-not-found]
    except ImportError:
        from testcontainers.opensearch import OpenSearchContainer

    began = time.monotonic()
    container = OpenSearchContainer(f"{node.DOCKER_IMAGE}:{version}", security_enabled=False)
    container.with_env("OPENSEARCH_JAVA_OPTS", "-Xms512m -Xmx512m")
    container.with_env("cluster.routing.allocation.disk.threshold_enabled", "false")
    try:
        container.start()
    except Exception as error:  # testcontainers raises docker's own errors, of many kinds
        _cannot(f"a Docker engine answers but the OpenSearch {version} container did not start: {error}")
    try:
        settings = container.get_config()
        url = f"http://{settings['host']}:{settings['port']}"
        _say(config, f"opensearch: container {version} on {url} in {time.monotonic() - began:.1f} s")
        yield url
    finally:
        container.stop()


@pytest.fixture(scope="session")
def opensearch(opensearch_url: str) -> OpenSearch:
    """An opensearch-py client on `opensearch_url`."""
    return OpenSearch(hosts=[opensearch_url], timeout=60)
