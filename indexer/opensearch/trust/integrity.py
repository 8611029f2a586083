"""Served laws are the laws that were loaded: a digest of each law's document, sealed with the statistics.

The statistics document is sealed (trust/sealing.py), but a law's own document is not: anyone who may
write to the index can `_update` a law's text or counts, and `ask` would serve the altered law and rank by
the altered counts. So `load` stores, inside the sealed statistics, a digest of every law's document (of
exactly the fields served and scored: schema.FETCHED), in corpus order; the query side checks the digest
of every law document it re-scores or returns against it, and refuses the state (DamagedIndex) on the
first that differs, naming the law.

A digest is BLAKE2b-128 of the fields' canonical JSON (keys sorted, no spaces): what OpenSearch hands back
parses to the same values, so the same bytes. 16 bytes a law, all of them one base64 string (a 24,000-law
state: 512 KB in its statistics), decoded once per concrete index.

An index with vectors (indexer/opensearch/read/vectors.py) seals them too, the same way beside the laws' digests
(`vector_digests`): a row's vector decides where meaning ranks it, so an `_update` of a vector alone would
move rows by meaning with every law's text intact. Apart from the laws' digests, so that the words path,
which never reads a vector, fetches none to check its laws; the meaning path, which re-scores from the
stored vectors, checks both. A vector's digest is of its float32 values (little-endian bytes), not of its
JSON: 3.x hands the field back derived from the stored float32s, each as its shortest decimal, not as the
double it was sent as; both parse to the same float32, which is what Lucene scores and what the meaning
path re-scores (it casts the stored values to float32 first).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.opensearch.cluster.schema import FETCHED, GRID_FIELD, VECTOR_FIELD, law_id
from indexer.retrieval.embedding import GRID_BITS

SIZE = 16  # bytes a digest: 128 bits, far past any accidental collision among a state's laws


def digest(source: Mapping[str, Any]) -> bytes:
    """The digest of a law document's served and scored fields (missing ones count as null)."""
    fields = {name: source.get(name) for name in FETCHED}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.blake2b(text.encode(), digest_size=SIZE).digest()


def vector_digest(vector: Any) -> bytes:
    """The digest of a row's vector: of its values as float32, little-endian (TypeError or ValueError when
    they are not numbers; a row without one digests as the empty vector, which no loaded row has)."""
    values = np.asarray([] if vector is None else vector, dtype="<f4")
    if values.ndim != 1:
        raise ValueError("a vector is a list of numbers")
    return hashlib.blake2b(values.tobytes(), digest_size=SIZE).digest()


def source_vector(source: Mapping[str, Any]) -> Any:
    """A row's vector as its `_source` holds it: the float32 values of a `knn_vector` (the window path), or
    else its `vector_grid`, base64 of 256 little-endian int32 grid units (the plugin's path, where that is the
    one copy: indexer/opensearch/read/vectors.py), as float32 (each unit times 2^-20, exact); None without either.
    ValueError when the grid is not base64 of whole int32s."""
    if source.get(VECTOR_FIELD) is not None or not isinstance(source.get(GRID_FIELD), str):
        return source.get(VECTOR_FIELD)
    return grid_values(np.frombuffer(base64.b64decode(source[GRID_FIELD].encode("ascii"), validate=True), dtype="<i4"))


def grid_values(units: npt.NDArray[np.int32]) -> npt.NDArray[np.float32]:
    """Grid units (int32, of any shape) as the float32 values they are, each unit times 2^-20, exact: what a row's
    `vector_grid` reads back as (a -0.0 component of the vector it was made from reads back as 0.0)."""
    values: npt.NDArray[np.float32] = (units.astype(np.float64) / float(1 << GRID_BITS)).astype(np.float32)
    return values


def pack(digests: Iterable[bytes]) -> str:
    """Law documents' digests in corpus order, as the statistics store them: one base64 string."""
    return base64.b64encode(b"".join(digests)).decode("ascii")


def unpacked(text: str) -> bytes:
    """The stored digests as bytes (SIZE a law, in corpus order); ValueError when malformed."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) % SIZE:
        raise ValueError("the law digests are not a whole number of digests")
    return raw


def altered(hit_id: str, source: Mapping[str, Any], digests: bytes, vectors: bytes | None = None) -> bool:
    """True when a law document (its `_id` and source) is not the one loaded at its place in the corpus:
    a field changed, its place (`order`) moved, or the document stands under another law's `_id`; and,
    given the sealed `vectors` (the meaning path, verify), when its vector is not the one loaded."""
    order = source.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or not 0 <= order < len(digests) // SIZE:
        return True
    if hit_id != law_id(str(source.get("id"))):
        return True
    if digest(source) != digests[order * SIZE : (order + 1) * SIZE]:
        return True
    if vectors is None:
        return False
    try:
        vector = vector_digest(source_vector(source))
    except (TypeError, ValueError):
        return True
    return vector != vectors[order * SIZE : (order + 1) * SIZE]


def altered_problem(index: str, law: Any) -> str:
    """What a refusal says of an altered law (after "<state> is not served: ")."""
    return f"the law {law} in {index} was altered after it was loaded (it does not match its sealed digest)"


def unsealed_vectors_problem(index: str) -> str:
    """What a refusal says of an index with vectors whose statistics seal none (after "<state> is not served: ")."""
    return f"the statistics of {index} carry no vector digests (loaded by a lawindex before it sealed vectors)"
