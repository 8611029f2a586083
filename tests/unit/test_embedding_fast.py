"""The embedder's fast paths against its definition, to the bit (issue 28, item 5).

The fast paths: token ids a cached piece at a time (indexer.retrieval.pieces) instead of the tokenizer over the
whole text, and one text's rows summed at once (`embed_one`) instead of the batch path's token-by-token table.
Each is held equal to an oracle written here from the module's definition (the tokenizer's own ids, float64
sums token by token in order, fsum norm, grid), on thousands of generated texts: words of generated laws,
runs of spaces, `▁` and the tokenizer's added tokens in the input, every plane of Unicode, 100,000 characters.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from indexer.retrieval import embedding
from indexer.retrieval.embedding import DIMENSION, GRID_BITS, WordLlamaEmbedder, default_embedder, exact_terms, row_text
from indexer.retrieval.pieces import SPACE, Pieces
from tests import synthetic

_WORDS = [word for law in synthetic.generate_corpus("WY", 200, 5) for word in row_text(law).split()]
_ODD = [
    SPACE,
    SPACE * 3,
    "<s>",
    "</s>",
    "<unk>",
    "<s",
    "s>",
    "\t",
    "\n",
    "\r\n",
    "\u00a0",
    "\u3000",
    "🚗",
    "👩‍👧",
    "İ",
    "K",
    "ſ",
]


def _char(rng: random.Random) -> str:
    """A code point from any plane but the surrogates (which a str from JSON or HTTP cannot hold here)."""
    while True:
        point = rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0x80, 0x800), rng.randrange(0x800, 0x10000),
                            rng.randrange(0x10000, 0x110000)))  # fmt: skip
        if not 0xD800 <= point <= 0xDFFF:
            return chr(point)


def generated(count: int, seed: int) -> list[str]:
    """`count` texts, the same for the same seed: words, spaces in runs, the odd strings, random characters."""
    rng = random.Random(f"lawindex/embedding-fast/{seed}")
    texts = [
        "",
        " ",
        "   ",
        SPACE,
        "a",
        " a",
        "a ",
        "a  b",
        "<s>",
        " <s> ",
        "x" * 100_000,
        ("road " * 20_000)[:100_000],
    ]
    while len(texts) < count:
        parts: list[str] = []
        for _ in range(rng.randint(0, 40)):
            roll = rng.random()
            if roll < 0.6:
                parts.append(rng.choice(_WORDS))
            elif roll < 0.75:
                parts.append(rng.choice(_ODD))
            else:
                parts.append("".join(_char(rng) for _ in range(rng.randint(1, 6))))
            parts.append(" " * rng.choice((0, 1, 1, 1, 2, 3)))
        texts.append("".join(parts))
    return texts


def _tokenizer() -> Tokenizer:
    """The shipped tokenizer, read again from its own files (not the embedder's copy), padding off."""
    import wordllama  # type: ignore[import-untyped]
    from wordllama import WordLlama

    folder = Path(wordllama.__file__).resolve().parent
    loaded = WordLlama.load(config="l2_supercat", dim=DIMENSION, cache_dir=folder, disable_download=True)
    tokenizer = Tokenizer.from_str(loaded.tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def oracle(matrix: np.ndarray, ids: list[int]) -> bytes:
    """The module's definition, literally: float64 sums token by token in order, the mean, fsum of the squares,
    its square root, each component divided by it, rounded to the 2^-GRID_BITS grid, float32."""
    if not ids:
        return np.zeros(DIMENSION, dtype=np.float32).tobytes()
    sums = [0.0] * DIMENSION
    for token in ids:
        row = matrix[token].tolist()
        sums = [total + float(value) for total, value in zip(sums, row, strict=True)]
    mean = [total / len(ids) for total in sums]
    norm = math.sqrt(math.fsum(value * value for value in mean))
    if norm == 0.0:
        return np.zeros(DIMENSION, dtype=np.float32).tobytes()
    grid = float(2**GRID_BITS)
    # Half to even, as numpy's round; a component rounded to zero keeps its sign (numpy's round of -0.3 is
    # -0.0, Python's is the integer 0), so that the bytes compared are the grid's float32s to the sign bit.
    return np.array(
        [math.copysign(round(value / norm * grid), value) / grid for value in mean], dtype=np.float32
    ).tobytes()


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    made = default_embedder()
    assert isinstance(made, WordLlamaEmbedder)
    return made


def test_pieces_give_the_tokenizers_own_ids(embedder: WordLlamaEmbedder) -> None:
    tokenizer = _tokenizer()
    pieces = Pieces.of(tokenizer)
    assert pieces is not None, "the shipped tokenizer must take the piece path"
    texts = generated(4000, 1)
    expected = [one.ids for one in tokenizer.encode_batch(texts, add_special_tokens=False)]
    assert pieces.ids(texts) == expected
    assert pieces.ids(texts[::-1]) == expected[::-1]  # from the cache this time
    assert embedder.tokens(texts[:500]) == expected[:500]


def test_one_text_is_the_definitions_bytes_and_the_batchs(embedder: WordLlamaEmbedder) -> None:
    tokenizer = _tokenizer()
    matrix = embedder._matrix
    texts = generated(1000, 2)
    batch = embedder.embed(texts)
    for number, text in enumerate(texts):
        one = embedder.embed_one(text).tobytes()
        assert one == batch[number].tobytes(), (number, text[:80])
        if len(text) < 5000:  # the oracle is a Python loop: the two long texts are held to the batch path only
            assert one == oracle(matrix, tokenizer.encode(text, add_special_tokens=False).ids), (number, text[:80])
    assert embedder.embed([texts[20]]).tobytes() == batch[20:21].tobytes()


def test_the_shipped_matrix_sums_exactly_in_any_order(embedder: WordLlamaEmbedder) -> None:
    # A 100,000-character question has at most 400,000 tokens (4 bytes a character, byte fallback).
    assert exact_terms(embedder._matrix) > 400_000
    assert exact_terms(np.array([[0.5, 2.0**-24]], dtype=np.float32)) == (2**53 - 1) // (2**23)
    assert exact_terms(np.array([[0.5, 2.0**-25]], dtype=np.float32)) == 0


def test_without_exact_sums_the_token_order_is_kept(
    embedder: WordLlamaEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = generated(300, 3)
    expected = embedder.embed(texts)
    monkeypatch.setattr(embedder, "_exact", 0)
    for number, text in enumerate(texts):
        assert embedder.embed_one(text).tobytes() == expected[number].tobytes()


def test_a_tokenizer_the_cut_is_not_proven_for_is_tokenized_whole() -> None:
    made = json.loads(_tokenizer().to_str())
    crossing = json.loads(json.dumps(made))
    crossing["model"]["merges"].append(["e", SPACE + "t"])  # joins across a cut: the pieces would be wrong
    crossing["model"]["vocab"]["e" + SPACE + "t"] = len(crossing["model"]["vocab"])
    assert Pieces.of(Tokenizer.from_str(json.dumps(crossing))) is None
    split = json.loads(json.dumps(made))
    split["pre_tokenizer"] = {"type": "Whitespace"}
    assert Pieces.of(Tokenizer.from_str(json.dumps(split))) is None
    assert Pieces.of(Tokenizer.from_str(json.dumps(made))) is not None


def test_texts_embedded_a_few_at_a_time_make_the_same_bytes(
    embedder: WordLlamaEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = generated(200, 4)
    whole = embedder.embed(texts).tobytes()
    for at_once in (2, 7, 64):
        monkeypatch.setattr(embedding, "TEXTS_AT_ONCE", at_once)
        assert embedder.embed(texts).tobytes() == whole, at_once
