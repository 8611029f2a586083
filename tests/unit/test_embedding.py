"""The shipped embedder's vectors, to the bit: the sealed vectors of every index depend on them.

The digest below is of the vectors the first implementation (token-by-token float64 sums over a
materialised float64 copy of every token's row, a Python norm per row) made of these texts; the faster one
must make the same bytes, whatever texts share a batch and in whatever order they come."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from indexer.retrieval import embedding
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.embedding import default_embedder, row_text
from tests import synthetic

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
MADE_BY = "0.4.0.post1+c2c596675fd6"  # wordllama's version and its weights' digest when the digest was taken
VECTORS = "77bc4a52a80204657fdd55cbd851d7469c739c97695a479a653d557ddbb91a35"


def _texts() -> list[str]:
    laws = [law for corpus in read_corpora(CORPORA) for law in corpus.laws]
    laws += synthetic.generate_corpus("GU", 300, 3)
    return [row_text(law) for law in laws] + ["", "fire hydrant", "x" * 3000, "road ünïcode 🚗"]


def test_the_vectors_are_the_sealed_bytes() -> None:
    embedder = default_embedder()
    assert embedder.version == MADE_BY
    assert hashlib.sha256(embedder.embed(_texts()).tobytes()).hexdigest() == VECTORS


def test_a_texts_vector_does_not_depend_on_its_batch() -> None:
    embedder = default_embedder()
    texts = _texts()[::7]
    together = embedder.embed(texts)
    backwards = embedder.embed(texts[::-1])[::-1]
    assert together.tobytes() == backwards.tobytes()
    for number, text in enumerate(texts[:20]):
        assert embedder.embed([text])[0].tobytes() == together[number].tobytes()
    assert embedder.embed([]).shape == (0, 256)
    assert not embedder.embed([""]).any()


def test_runs_of_few_tokens_make_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Embedded in runs of at most N tokens' places (a dense table per run), not one table of every text
    # times the longest: the bytes must not depend on where the runs are cut.
    embedder = default_embedder()
    texts = _texts()
    for cells in (1, 500, 5000):
        monkeypatch.setattr(embedding, "_CELLS", cells)
        assert hashlib.sha256(embedder.embed(texts).tobytes()).hexdigest() == VECTORS, cells
