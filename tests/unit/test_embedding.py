"""The shipped embedder's vectors, to the bit: the sealed vectors of every index depend on them.

The expected bytes are the definition's (tests/unit/test_embedding_fast.py's `oracle`: float64 sums token by
token, fsum norm, grid), computed here from the table file read on its own and the tokenizer's own ids, never by
the embedder under test; whatever texts share a batch and in whatever order they come, the embedder must make
them. The table itself is held to the digest models/README.md publishes, and the embedder's version to that
digest: a new table is a new model version, so every index made with the old one is rebuilt by the next load."""

from __future__ import annotations

import hashlib
import re
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from indexer.retrieval import embedding
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.embedding import default_embedder, row_text
from tests import synthetic
from tests.unit.test_embedding_fast import _tokenizer, definition

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
TABLE = ROOT / "models" / "lawindex-road-256.safetensors"


def _texts() -> list[str]:
    laws = [law for corpus in read_corpora(CORPORA) for law in corpus.laws]
    laws += synthetic.generate_corpus("GU", 300, 3)
    return [row_text(law) for law in laws] + ["", "fire hydrant", "x" * 3000, "road ünïcode 🚗"]


def _published_digest() -> str:
    found = re.findall(r"sha256 `([0-9a-f]{64})`", (ROOT / "models" / "README.md").read_text(encoding="utf-8"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def expected() -> bytes:
    """The definition's vectors of `_texts()`, from the table file as safetensors reads it (float16, widened)."""
    matrix = load_file(str(TABLE))["embedding.weight"].astype(np.float32)
    return b"".join(definition(matrix, _tokenizer(), _texts()))


def test_the_shipped_table_is_the_published_one() -> None:
    digest = hashlib.sha256(TABLE.read_bytes()).hexdigest()
    assert digest == _published_digest()
    embedder = default_embedder()
    assert (embedder.model, embedder.version) == ("lawindex-road-256", f"{version('wordllama')}+{digest[:12]}")


def test_the_vectors_are_the_definitions_bytes(expected: bytes) -> None:
    assert default_embedder().embed(_texts()).tobytes() == expected


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


def test_runs_of_few_tokens_make_the_same_bytes(monkeypatch: pytest.MonkeyPatch, expected: bytes) -> None:
    # Embedded in runs of at most N tokens' places (a dense table per run), not one table of every text
    # times the longest: the bytes must not depend on where the runs are cut.
    embedder = default_embedder()
    texts = _texts()
    for cells in (1, 500, 5000):
        monkeypatch.setattr(embedding, "_CELLS", cells)
        assert embedder.embed(texts).tobytes() == expected, cells


def test_wordllamas_table_still_makes_the_bytes_it_sealed() -> None:
    # WordLlama's own weights through the same embedder: the digest its first implementation made of these texts
    # (version 0.4.0.post1+c2c596675fd6, the default until the road table), so the arithmetic did not move.
    wordllama = embedding.StaticEmbedder(embedding.wordllama_files()[1], embedding.WORDLLAMA)
    assert wordllama.model == "wordllama-l2_supercat-256"
    digest = hashlib.sha256(wordllama.embed(_texts()).tobytes()).hexdigest()
    assert digest == "77bc4a52a80204657fdd55cbd851d7469c739c97695a479a653d557ddbb91a35"


def test_the_files_module_names_the_embedders_dimension() -> None:
    from indexer.retrieval import model_files

    assert model_files.DIMENSION == embedding.DIMENSION
