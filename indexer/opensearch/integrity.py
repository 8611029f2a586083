"""Served laws are the laws that were loaded: a digest of each law's document, sealed with the statistics.

The statistics document is sealed (indexer/opensearch/lifecycle.py), but a law's own document is not: anyone who may
write to the index can `_update` a law's text or counts, and `ask` would serve the altered law and rank by
the altered counts. So `load` stores, inside the sealed statistics, a digest of every law's document (of
exactly the fields served and scored: schema.FETCHED), in corpus order; the query side checks the digest
of every law document it re-scores or returns against it, and refuses the state (DamagedIndex) on the
first that differs, naming the law.

A digest is BLAKE2b-128 of the fields' canonical JSON (keys sorted, no spaces): what OpenSearch hands back
parses to the same values, so the same bytes. 16 bytes a law, all of them one base64 string (a 24,000-law
state: 512 KB in its statistics), decoded once per concrete index.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from indexer.opensearch.schema import FETCHED, law_id

SIZE = 16  # bytes a digest: 128 bits, far past any accidental collision among a state's laws


def digest(source: Mapping[str, Any]) -> bytes:
    """The digest of a law document's served and scored fields (missing ones count as null)."""
    fields = {name: source.get(name) for name in FETCHED}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.blake2b(text.encode(), digest_size=SIZE).digest()


def pack(digests: Iterable[bytes]) -> str:
    """Law documents' digests in corpus order, as the statistics store them: one base64 string."""
    return base64.b64encode(b"".join(digests)).decode("ascii")


def unpacked(text: str) -> bytes:
    """The stored digests as bytes (SIZE a law, in corpus order); ValueError when malformed."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) % SIZE:
        raise ValueError("the law digests are not a whole number of digests")
    return raw


def altered(hit_id: str, source: Mapping[str, Any], digests: bytes) -> bool:
    """True when a law document (its `_id` and source) is not the one loaded at its place in the corpus:
    a field changed, its place (`order`) moved, or the document stands under another law's `_id`."""
    order = source.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or not 0 <= order < len(digests) // SIZE:
        return True
    if hit_id != law_id(str(source.get("id"))):
        return True
    return digest(source) != digests[order * SIZE : (order + 1) * SIZE]


def altered_problem(index: str, law: Any) -> str:
    """What a refusal says of an altered law (after "<state> is not served: ")."""
    return f"the law {law} in {index} was altered after it was loaded (it does not match its sealed digest)"
