"""Sealed statistics: the statistics document carries a SHA-256 of its own canonical JSON, and names the
index, state and namespace it was written for (`seal`, `seal_problem`): what `ask` reads is what `load` wrote
for that very index, or it is refused."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from indexer.opensearch.trust.ownership import OWNER


def _canonical(document: Mapping[str, Any]) -> bytes:
    """The document as one canonical JSON text, without its checksum: keys sorted, no spaces, floats as
    Python's shortest repr (what comes back from OpenSearch parses to the same doubles)."""
    sealed = document.get("seal")
    body = (
        {**document, "seal": {k: v for k, v in sealed.items() if k != "checksum"}}
        if isinstance(sealed, dict)
        else document
    )
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def seal(document: dict[str, Any], *, namespace: str, index: str, fingerprint: str) -> dict[str, Any]:
    """`document` with its seal: whose it is (owner, namespace, the index it was written into, the corpus
    fingerprint) and the SHA-256 of the whole document's canonical JSON."""
    sealed = {**document, "seal": {"owner": OWNER, "namespace": namespace, "index": index, "fingerprint": fingerprint}}
    sealed["seal"]["checksum"] = hashlib.sha256(_canonical(sealed)).hexdigest()
    return sealed


def seal_problem(document: Any, index: str, state: str, namespace: str) -> str | None:
    """What is wrong with a statistics document read from `index` for `state`: altered, malformed, made for
    another index, state or namespace; None when it is whole and this index's own."""
    if not isinstance(document, dict) or not isinstance(document.get("statistics"), dict):
        return f"the statistics of {index} are malformed"
    sealed = document.get("seal")
    if not isinstance(sealed, dict) or "checksum" not in sealed:
        return f"the statistics of {index} carry no checksum (written before lawindex sealed them, or altered)"
    try:
        whole = hashlib.sha256(_canonical(document)).hexdigest() == sealed["checksum"]
    except (TypeError, ValueError):
        whole = False
    if not whole:
        return f"the statistics of {index} were altered: their checksum does not match"
    if sealed.get("owner") != OWNER or sealed.get("namespace") != namespace:
        return f"the statistics in {index} were written for the namespace {sealed.get('namespace')!r}"
    if document.get("state") != state:
        return f"the statistics in {index} are {document.get('state')}'s, not {state}'s"
    if sealed.get("index") != index:
        return f"the statistics in {index} belong to another index, {sealed.get('index')}"
    return None


def sealed_fingerprint(document: Mapping[str, Any]) -> str | None:
    """The corpus fingerprint a statistics document was sealed with."""
    sealed = document.get("seal")
    return str(sealed.get("fingerprint")) if isinstance(sealed, dict) else None
