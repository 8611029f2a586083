"""A real OpenSearch for the integration tests, whatever the machine.

`opensearch_url`, once a session: `OPENSEARCH_URL` when it is set (scripts/test sets it); else, where a
Docker engine answers, a container started by testcontainers' own `OpenSearchContainer` — the image
`LAWINDEX_TEST_IMAGE` names (CI: the `lawindex/opensearch` image it built), else the one `lawindex
opensearch start` would pick (the official image when present or pullable, else the local one); else a
local distribution node from `indexer.node.node.start`, version `LAWINDEX_OPENSEARCH_VERSION` (default: the
pinned 3.x) on port `LAWINDEX_TEST_PORT` (default 9250). When none can be had the tests fail, never
skip: a suite that skips its integration tests passes in CI while proving nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from opensearchpy import OpenSearch

from indexer.errors import LawindexError
from indexer.node import node
from indexer.opensearch.cluster.connection import Connection
from tests.integration.support import fresh_connection

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

    image = os.environ.get("LAWINDEX_TEST_IMAGE")
    if node.docker_available():
        why = ""
        if not image:
            image, _, why = node.choose_image(opensearch_version)
        if image:
            yield from _container(config, image, opensearch_version)
            return
        _say(config, f"opensearch: a Docker engine answers but has no image: {why}; the distribution runs")
    elif image:
        _cannot(f"LAWINDEX_TEST_IMAGE={image} is set but no Docker engine answers")

    port = int(os.environ.get("LAWINDEX_TEST_PORT", DEFAULT_TEST_PORT))
    began = time.monotonic()
    try:
        # With k-NN, as scripts/test starts its pins: the window path's tests need it (test_meaning fails without).
        started = node.start(version=opensearch_version, port=port, knn=True)
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


def _container(config: pytest.Config, image: str, version: str) -> Iterator[str]:
    """testcontainers' own OpenSearchContainer on `image`, its port published on 127.0.0.1 only."""
    # Ryuk, testcontainers' reaper, is an image of its own that cannot be pulled here; the container is
    # stopped below instead (and .ci/run removes whatever is left when it stops the engine).
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    from testcontainers.community.opensearch import OpenSearchContainer
    from testcontainers.core.config import ConnectionMode, testcontainers_config

    # The port is published on 127.0.0.1 only; run inside a container (as CI is), testcontainers would
    # otherwise knock at the Docker gateway's address. A start on a busy 2-core machine took 80-120 s:
    # more than testcontainers' 120 tries of a second.
    if not testcontainers_config.tc_host_override:
        testcontainers_config.tc_host_override = "127.0.0.1"
    if testcontainers_config.connection_mode_override is None:
        testcontainers_config.connection_mode_override = ConnectionMode.docker_host
    testcontainers_config.max_tries = max(testcontainers_config.max_tries, 600)
    began = time.monotonic()
    container = OpenSearchContainer(image, security_enabled=False)
    container.ports["9200"] = ("127.0.0.1", None)
    java_options = f"-Xms512m -Xmx512m {os.environ.get('OPENSEARCH_JAVA_OPTS', '')}"  # the caller's after the heap
    container.with_env("OPENSEARCH_JAVA_OPTS", java_options.strip())
    container.with_env("cluster.routing.allocation.disk.threshold_enabled", "false")
    try:
        container.start()
    except Exception as error:  # testcontainers raises docker's own errors, of many kinds
        with contextlib.suppress(Exception):
            container.stop()
        _cannot(f"a Docker engine answers but the container of {image} did not start: {error}")
    try:
        url = f"http://127.0.0.1:{container.get_exposed_port(9200)}"
        found = str(_root(url)["version"]["number"])
        if found != version:
            _cannot(f"{image} runs OpenSearch {found}, not {version}")
        _say(config, f"opensearch: testcontainers {image} on {url}, green in {time.monotonic() - began:.1f} s")
        yield url
    finally:
        container.stop()


@pytest.fixture(scope="session")
def opensearch(opensearch_url: str) -> OpenSearch:
    """An opensearch-py client on `opensearch_url`."""
    return OpenSearch(hosts=[opensearch_url], timeout=60)


@pytest.fixture
def connection(opensearch_url: str) -> Iterator[Connection]:
    """A connection to the test cluster in a namespace of this test's own, dropped at the end."""
    with fresh_connection(opensearch_url) as made:
        yield made
