"""Vectors kept by their text's digest (indexer/retrieval/vector_store.py): a law whose text did not change is not
embedded again, what is read back is checked, and the vectors are the embedder's own bytes either way."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from indexer.retrieval.embedding import Embedder, Vectors, default_embedder, row_text
from indexer.retrieval.vector_store import MAGIC, VectorStore
from tests import synthetic


class Counting:
    """The shipped embedder (or `inner`), counting the texts it is asked to embed."""

    def __init__(self, version: str | None = None, inner: Embedder | None = None) -> None:
        self.inner: Embedder = inner or default_embedder()
        self.embedded = 0
        self._version = version

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def version(self) -> str:
        return self._version or self.inner.version

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def questions_on_node(self) -> bool:
        return self.inner.questions_on_node

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded += len(texts)
        return self.inner.embed(texts)


def _texts(count: int = 300, seed: int = 4) -> list[str]:
    return [row_text(law) for law in synthetic.generate_corpus("NV", count, seed)]


def test_a_text_that_did_not_change_is_not_embedded_again(tmp_path: Path) -> None:
    texts = _texts()
    expected = default_embedder().embed(texts).tobytes()
    store, embedder = VectorStore(tmp_path), Counting()
    assert store.vectors(embedder, "NV", texts).tobytes() == expected
    assert embedder.embedded == len(texts)
    embedder.embedded = 0
    assert store.vectors(embedder, "NV", texts).tobytes() == expected
    assert store.last["NV"].found == len(texts) and store.last["NV"].embedded == 0
    assert embedder.embedded <= 8  # the sample embedded again as a check, nothing else
    changed = [*texts[:10], texts[10] + " and a changed word", *texts[11:]]
    embedder.embedded = 0
    assert store.vectors(embedder, "NV", changed).tobytes() == default_embedder().embed(changed).tobytes()
    assert store.last["NV"].embedded == 1 and store.last["NV"].found == len(texts) - 1


def test_two_versions_of_a_state_loaded_in_turn_are_both_kept(tmp_path: Path) -> None:
    first, second = _texts(200, 1), _texts(200, 2)
    store, embedder = VectorStore(tmp_path), Counting()
    store.vectors(embedder, "NV", first)
    store.vectors(embedder, "NV", second)
    store.vectors(embedder, "NV", first)
    assert store.last["NV"].embedded == 0 and store.last["NV"].found == len(first)


def _file(folder: Path) -> Path:
    (found,) = folder.glob("*/NV.vectors")
    return found


def _kept(folder: Path) -> tuple[list[str], bytes, VectorStore, Path]:
    """100 texts, the bytes the embedder makes of them, a store in `folder` that has kept them, and its file."""
    texts = _texts(100)
    store = VectorStore(folder)
    store.vectors(Counting(), "NV", texts)
    return texts, default_embedder().embed(texts).tobytes(), store, _file(folder)


def test_a_damaged_file_is_not_used(tmp_path: Path) -> None:
    texts, expected, store, path = _kept(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0x40  # a bit of the last vector
    path.write_bytes(bytes(raw))
    embedder = Counting()
    assert store.vectors(embedder, "NV", texts).tobytes() == expected
    assert embedder.embedded == len(texts)
    assert "checksum" in str(store.last["NV"].refused)


def test_kept_vectors_that_are_not_the_embedders_are_not_used(tmp_path: Path) -> None:
    # A file whose checksum is right but whose vectors are not what the embedder makes of their texts (an
    # older lawindex's bug, a hand-made file): the sample embedded again finds it, and every row is embedded.
    texts, expected, store, path = _kept(tmp_path)
    raw = path.read_bytes()
    end = raw.index(b"\n", len(MAGIC))
    header = json.loads(raw[len(MAGIC) : end])
    rows = header["rows"]
    digests = raw[end + 1 : end + 1 + rows * 32]
    vectors = np.frombuffer(raw[end + 1 + rows * 32 :], dtype="<f4").reshape(rows, 256)[::-1].copy()  # rows swapped
    body = digests + vectors.tobytes()
    header["sha256"] = hashlib.sha256(body).hexdigest()
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + body)
    embedder = Counting()
    assert store.vectors(embedder, "NV", texts).tobytes() == expected
    assert embedder.embedded >= len(texts)
    assert "is not what" in str(store.last["NV"].refused)


def test_another_embedder_does_not_read_this_ones_vectors(tmp_path: Path) -> None:
    texts = _texts(50)
    store = VectorStore(tmp_path)
    store.vectors(Counting(), "NV", texts)
    other = Counting(version="another")
    store.vectors(other, "NV", texts)
    assert other.embedded == len(texts)
    assert len(list(tmp_path.glob("*/NV.vectors"))) == 2


def test_repeated_texts_and_earlier_rows_are_written_and_read_back_as_the_embedders_bytes(tmp_path: Path) -> None:
    first, second = _texts(60, 5), _texts(90, 6)
    repeated = [*second[:40], second[3], second[7], *second[40:]]  # a text twice: kept once
    store, embedder = VectorStore(tmp_path), Counting()
    store.vectors(embedder, "NV", first)
    store.vectors(embedder, "NV", repeated)
    body = _file(tmp_path).read_bytes()
    end = body.index(b"\n", len(MAGIC))
    header = json.loads(body[len(MAGIC) : end])
    # The state's distinct texts, then the earlier ones not among them (fewer here than the state's), checksummed.
    assert header["rows"] == len(set(repeated)) + len(set(first) - set(repeated))
    assert hashlib.sha256(body[end + 1 :]).hexdigest() == header["sha256"]
    for texts in (first, repeated):
        embedder.embedded = 0
        assert store.vectors(embedder, "NV", texts).tobytes() == default_embedder().embed(texts).tobytes()
        assert store.last["NV"].embedded == 0 and store.last["NV"].refused is None
