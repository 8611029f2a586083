"""The embedder's fast paths against its definition, to the bit (issue 28, item 5).

The fast paths: token ids a cached piece at a time (indexer.retrieval.pieces) instead of the tokenizer over the
whole text; one text's rows summed at once (`embed_one`); a batch's texts as bags of pieces summed by sparse
products (`embed`), never listing a text's ids; and the norm's fsum vectorised over the rows (`fsums`). Each is
held equal to an oracle written here from the module's definition (the tokenizer's own ids, float64 sums
token by token in order, fsum norm, grid), on thousands of generated texts: words of generated laws, a
generated state's rows, runs of spaces, `▁` and the tokenizer's added tokens in the input, every plane of
Unicode, 100,000 characters; and on texts hypothesis makes of the same parts.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from tokenizers import Tokenizer

from indexer.retrieval import embedding, pieces
from indexer.retrieval.embedding import (
    DIMENSION,
    GRID_BITS,
    TEXTS_AT_ONCE,
    StaticEmbedder,
    default_embedder,
    exact_terms,
    fsums,
    row_text,
)
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
    sums = np.zeros(DIMENSION, dtype=np.float64)
    for token in ids:
        sums += matrix[token]  # the float32 row widened exactly, then one float64 addition a component
    mean = [total / len(ids) for total in sums.tolist()]
    norm = math.sqrt(math.fsum(value * value for value in mean))
    if norm == 0.0:
        return np.zeros(DIMENSION, dtype=np.float32).tobytes()
    grid = float(2**GRID_BITS)
    # Half to even, as numpy's round; a component rounded to zero keeps its sign (numpy's round of -0.3 is
    # -0.0, Python's is the integer 0), so that the bytes compared are the grid's float32s to the sign bit.
    return np.array(
        [math.copysign(round(value / norm * grid), value) / grid for value in mean], dtype=np.float32
    ).tobytes()


def definition(matrix: np.ndarray, tokenizer: Tokenizer, texts: list[str]) -> list[bytes]:
    """Each text's vector by the oracle, from the tokenizer's own ids of the whole text."""
    return [oracle(matrix, one.ids) for one in tokenizer.encode_batch(texts, add_special_tokens=False)]


def same_rows(made: np.ndarray, expected: list[bytes], texts: list[str]) -> None:
    assert made.shape == (len(texts), DIMENSION)
    for number, (row, want) in enumerate(zip(made, expected, strict=True)):
        assert row.tobytes() == want, (number, texts[number][:80])


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    made = default_embedder()
    assert isinstance(made, StaticEmbedder)
    return made


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return _tokenizer()


def test_pieces_give_the_tokenizers_own_ids(embedder: StaticEmbedder) -> None:
    tokenizer = _tokenizer()
    pieces = Pieces.of(tokenizer)
    assert pieces is not None, "the shipped tokenizer must take the piece path"
    texts = generated(4000, 1)
    expected = [one.ids for one in tokenizer.encode_batch(texts, add_special_tokens=False)]
    assert pieces.ids(texts) == expected
    assert pieces.ids(texts[::-1]) == expected[::-1]  # from the cache this time
    assert embedder.tokens(texts[:500]) == expected[:500]


def test_one_text_is_the_definitions_bytes_and_the_batchs(embedder: StaticEmbedder) -> None:
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


def test_the_shipped_matrix_sums_exactly_in_any_order(embedder: StaticEmbedder) -> None:
    # A 100,000-character question has at most 400,000 tokens (4 bytes a character, byte fallback).
    assert exact_terms(embedder._matrix) > 400_000
    assert exact_terms(np.array([[0.5, 2.0**-24]], dtype=np.float32)) == (2**53 - 1) // (2**23)
    assert exact_terms(np.array([[0.5, 2.0**-25]], dtype=np.float32)) == 0


def test_without_exact_sums_the_token_order_is_kept(embedder: StaticEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
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
    embedder: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = generated(200, 4)
    whole = embedder.embed(texts).tobytes()
    for at_once in (2, 7, 64):
        monkeypatch.setattr(embedding, "TEXTS_AT_ONCE", at_once)
        assert embedder.embed(texts).tobytes() == whole, at_once


def cold(embedder: StaticEmbedder) -> StaticEmbedder:
    """`embedder` with a new, empty piece cache: the next call tokenizes every piece it meets."""
    embedder._pieces = Pieces.of(embedder._tokenizer)
    return embedder


def test_a_generated_states_rows_are_the_definitions_bytes(embedder: StaticEmbedder, tokenizer: Tokenizer) -> None:
    # More laws than TEXTS_AT_ONCE (several batches), plain texts (the batch's words are one split), and a batch
    # of odd texts (each cut on its own): with the cache empty, then warm.
    texts = [row_text(law) for law in synthetic.generate_corpus("NV", 2500, 11)]
    assert len(texts) > TEXTS_AT_ONCE
    odd = generated(400, 5)
    for batch in (texts, odd, texts[:50] + odd[:50], [*texts[:50], "road <s> rules", "</s>"]):
        expected = definition(embedder._matrix, tokenizer, batch)
        same_rows(cold(embedder).embed(batch), expected, batch)
        same_rows(embedder.embed(batch), expected, batch)


_PART = st.one_of(
    st.sampled_from(_WORDS),
    st.sampled_from(_ODD),
    st.sampled_from([" ", " ", "  ", "   ", SPACE + " ", " " + SPACE]),
    st.text(max_size=6),
)
_ODD_TEXT = st.lists(_PART, max_size=30).map("".join)
# Words between runs of spaces, none at either end: cut on its own (three spaces are `▁▁` and `▁word`, not `▁`, `▁`
# and `▁word`), where a plain text's words are its pieces.
_GAPS = st.sampled_from([" ", "  ", "   ", "    "])
_SPACED_TEXT = st.lists(st.tuples(st.sampled_from(_WORDS), _GAPS), min_size=1, max_size=20).map(
    lambda pairs: "".join(word + gap for word, gap in pairs).strip(" ")
)
# Words (an added token among them) between single spaces: the batch's words are its pieces, one split, unless a
# text holds an added token.
_PLAIN_WORD = st.sampled_from([*_WORDS, "<s>", "</s>", "<unk>", "a<s>b"]) | st.text(
    st.characters(codec="utf-8", exclude_characters=f" {SPACE}"), min_size=1, max_size=5
)
_PLAIN_TEXT = st.lists(_PLAIN_WORD, min_size=1, max_size=30).map(" ".join)
_BATCH = st.lists(_PLAIN_TEXT, min_size=2, max_size=12) | st.lists(
    _ODD_TEXT | _SPACED_TEXT | _PLAIN_TEXT, min_size=2, max_size=12
)


@settings(max_examples=150, deadline=None)
@given(_BATCH)
def test_any_batch_is_the_definitions_bytes(embedder: StaticEmbedder, tokenizer: Tokenizer, texts: list[str]) -> None:
    # Most batches hold pieces met for the first time (hypothesis's own characters) beside pieces cached.
    same_rows(embedder.embed(texts), definition(embedder._matrix, tokenizer, texts), texts)
    assert embedder.tokens(texts) == [one.ids for one in tokenizer.encode_batch(texts, add_special_tokens=False)]


def test_the_token_by_token_path_where_the_bags_are_not_proven(
    embedder: StaticEmbedder, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = generated(300, 6)[:12] + generated(300, 6)[100:]  # the two 100,000-character texts among them
    expected = definition(embedder._matrix, tokenizer, texts)
    # Texts of more than 40 tokens summed token by token, the others from their bags, in one batch.
    monkeypatch.setattr(embedder, "_exact", 40)
    same_rows(embedder.embed(texts), expected, texts)
    # No exact sums at all, or no pieces (a tokenizer the cut is not proven for): token by token throughout.
    monkeypatch.setattr(embedder, "_exact", 0)
    same_rows(embedder.embed(texts), expected, texts)
    monkeypatch.undo()
    monkeypatch.setattr(embedder, "_pieces", None)
    same_rows(embedder.embed(texts), expected, texts)


def test_a_full_piece_cache_is_emptied_and_the_ids_kept(
    embedder: StaticEmbedder, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fewer pieces kept than a few texts have: the cache fills and is emptied within a call, most calls holding
    # pieces known (met in the call before) and pieces not.
    monkeypatch.setattr(pieces, "KEPT", 64)
    texts = generated(300, 7)[12:]
    expected = definition(embedder._matrix, tokenizer, texts)
    made = cold(embedder)
    for at_once in (5, 300):
        for start in range(0, len(texts), at_once):
            batch = texts[start : start + at_once]
            same_rows(made.embed(batch), expected[start : start + at_once], batch)
            assert made.tokens(batch) == [one.ids for one in tokenizer.encode_batch(batch, add_special_tokens=False)]
    cold(embedder)


def test_a_text_the_tokenizer_refuses_leaves_the_cache_as_it_was(
    embedder: StaticEmbedder, tokenizer: Tokenizer
) -> None:
    texts = generated(300, 8)[12:40]
    expected = definition(embedder._matrix, tokenizer, texts)
    cold(embedder)
    assert embedder._pieces is not None
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate: the tokenizer's own error (the embedder never
        embedder._pieces.bags(["road \udc80 rules", *texts])  # asks it one); its pieces asked first
    same_rows(embedder.embed(texts), expected, texts)


@pytest.mark.parametrize("lone", ["\udc80", "\ud800", "\udfff", "\ud83d"])  # a byte not UTF-8 in argv; JSON's
def test_a_lone_surrogate_is_read_as_u_fffd_on_every_path(  # escapes; half an emoji
    embedder: StaticEmbedder, tokenizer: Tokenizer, lone: str
) -> None:
    texts = [f"school {lone}bus", f"{lone}", "stop for a school bus", f"park {lone}{lone} near a hydrant"]
    read = [text.replace(lone, "\ufffd") for text in texts]
    expected = definition(embedder._matrix, tokenizer, read)  # the tokenizer's own ids of the text with U+FFFD
    assert embedder.tokens(texts) == [one.ids for one in tokenizer.encode_batch(read, add_special_tokens=False)]
    same_rows(embedder.embed(texts), expected, texts)  # the batch path
    for text, want in zip(texts, expected, strict=True):
        assert embedder.embed_one(text).tobytes() == want, text  # a question's path
    assert expected[0] != definition(embedder._matrix, tokenizer, ["school bus"])[0]  # U+FFFD is a token of its own


def _fsum(row: np.ndarray) -> float | str:
    try:
        return math.fsum(row.tolist())
    except (OverflowError, ValueError) as error:
        return type(error).__name__


def _same_as_fsum(values: np.ndarray) -> None:
    expected = [_fsum(row) for row in values]
    failures = {one for one in expected if isinstance(one, str)}
    if failures:
        with pytest.raises((OverflowError, ValueError)):
            fsums(values)
        return
    got = fsums(values)
    assert got.tobytes() == np.array(expected, dtype=np.float64).tobytes()


_SQUARES = st.floats(min_value=0.0, max_value=2.0**20, allow_subnormal=True) | st.sampled_from(
    [0.0, 1.0, 3.0, 2.0**-53, 3 * 2.0**-53, 2.0**-54, 2.0**-1074, 2.0**-900, 2.0**-1000, 0.1, 0.3]
)  # halves of a unit in the last place among them: sums exactly half way, the ties fsum rounds to even


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 40).flatmap(lambda width: arrays(np.float64, st.tuples(st.integers(1, 6), st.just(width)),
                                                       elements=_SQUARES)))  # fmt: skip
def test_fsums_is_fsum_to_the_bit(values: np.ndarray) -> None:
    _same_as_fsum(values)


# Terms of both signs far apart in size: sums that cancel, where Sum2's bound does not hold (fsum's, then).
_CANCELLING = st.builds(math.ldexp, st.sampled_from([-1.5, -1.0, 1.0, 1.25, 3.0]), st.integers(-80, 80))


@settings(max_examples=300, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(0, 9)), elements=st.floats(width=64) | _CANCELLING))
def test_fsums_is_fsum_on_any_doubles(values: np.ndarray) -> None:
    # Negative, -0.0, infinite, NaN, past the largest double when summed: math.fsum's own result or error.
    _same_as_fsum(values)


def test_fsums_on_rows_as_normalised_gives_them() -> None:
    rng = np.random.default_rng(28)
    means = np.ldexp(rng.integers(-(2**27), 2**27, (3000, DIMENSION)).astype(np.float64), -24)
    means /= rng.integers(1, 400, (3000, 1)).astype(np.float64)  # a text's sum over its count of tokens
    halves = np.ones((3, DIMENSION)) * 2.0**-30
    halves[:, 0] = (1.0, 2.0**-20, 3.0)
    # Rows a sum without the check of signs got wrong (found by a search): the pair of rounded sums is not
    # near S when the terms cancel.
    cancelling = np.array([
        [-6.776263578034403e-21, 1688849860263936.0, 3.970466940254533e-23, 2.8421709430404007e-13,
         -1688849860263936.0, 1.6263032587282567e-19, 0.000732421875, 1.0658141036401503e-14],
        [-9.44473296573929e21, 4.263256414560601e-14, 8.0, 9.44473296573929e21, 1.0339757656912846e-24,
         8.881784197001252e-16, 5.960464477539063e-08, -1.430511474609375e-06],
        [1.25, -4096.0, -7.62939453125e-06, -4.263256414560601e-14, 1.4167099448608936e22, 131072.0,
         -7.275957614183426e-12, -1.4167099448608936e22],
    ])  # fmt: skip
    for values in (means * means, halves, cancelling, np.zeros((2, DIMENSION)), np.zeros((0, DIMENSION))):
        _same_as_fsum(values)
