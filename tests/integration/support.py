"""Helpers the integration tests share: a namespace of their own on a shared cluster, and cleanup.

Every test that writes takes a fresh namespace (`lawindex_t<random>`), so tests, and engineers running
them against one node at once, never touch each other's states, and nothing of the user's own
`lawindex-*` indices.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from opensearchpy import OpenSearch

from indexer.opensearch import Connection


def unique_namespace() -> str:
    """A namespace no other test run uses."""
    return f"lawindex_t{uuid.uuid4().hex[:10]}"


def drop_namespace(client: OpenSearch, namespace: str) -> None:
    """Delete every index of `namespace`."""
    client.indices.delete(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)


@contextmanager
def fresh_connection(url: str) -> Iterator[Connection]:
    """A Connection to `url` in a namespace of its own, removed afterwards."""
    connection = Connection.from_env(url, namespace=unique_namespace())
    try:
        yield connection
    finally:
        drop_namespace(connection.client(), connection.namespace)
