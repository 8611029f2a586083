"""The embedder: a text as a unit vector, so that a question reaches the rows nearest it in meaning.

One small interface (`Embedder`: a model name and version, which go into an index's fingerprint, and
`embed(texts)`), and the default behind it: `lawindex-road-256`, a static table of 256 dimensions for each of
the 32,000 tokens of WordLlama's tokenizer, trained for road-law questions and shipped in the repository
(models/lawindex-road-256.safetensors, float16, packaged in the wheel under `_data/models`; models/README.md
says how it was made). The tokenizer is WordLlama's (the `wordllama` wheel on PyPI, MIT), read from the wheel's
own file with `tokenizers` (`wordllama_files`): nothing is downloaded, and wordllama is not imported. The table
has exactly the layout of WordLlama's `l2_supercat` 256-d weights, which `StaticEmbedder(wordllama_files()[1],
WORDLLAMA)` still embeds with (the default until the road table; a measure, not a setting: the plugin embeds
questions with the shipped table only).

What a vector is, to the last bit, so that every engine and every run computes the same one:

- the tokens: WordLlama's tokenizer, without special tokens, padding or truncation;
- the pooling: the mean of the tokens' rows of the (float32) embedding matrix, summed in float64 token
  by token in the text's order (a fixed order: not WordLlama's batched float32 `np.sum`, whose result can
  depend on which texts share a batch and on the machine's SIMD width), divided by the count;
- the norm: `math.fsum` of the squares (correctly rounded, so in no order of the machine's choosing), its
  square root, and each component divided by it, in float64;
- the grid: each component rounded (half to even) to a multiple of 2^-GRID_BITS and kept as float32,
  which holds it exactly (a component is at most 1, so at most GRID_BITS significant bits).

On the grid a product of two components is a multiple of 2^-(2·GRID_BITS) of magnitude at most 1, an
integer below 2^40 in those units, and a sum of DIMENSION of them is below 2^48 < 2^53: so the float64 dot
product of two vectors is exact whatever order BLAS adds it in. The cosine (indexer.retrieval.meaning) is therefore
the same number in process, from OpenSearch's stored vectors, on any machine. A text with no tokens (the
empty question) is the zero vector: it is near nothing.

The pooling's sum is exact too: every value of the shipped matrix is a whole number of 2^-24 (a float16
widened), so no float64 addition of a text's rows rounds, in any order (`exact_terms`, checked as the model
loads). So a state's rows are embedded in batches of bags (`embed`: each text the multiset of its pieces, summed
by two sparse products, `_summed`), never listing a text's ids; a question alone (`embed_one`) has its rows
summed at once, 0.05 ms where the batch path's machinery took 0.13-0.26 ms. Both take their token ids a cached
piece at a time (indexer.retrieval.pieces), the tokenizer's own ids. Where the exactness is not proven (a
matrix of other values, a text of more than `exact_terms` tokens, a tokenizer the pieces are not proven for)
or scipy is not installed yet (`sparse_products`), the batch path sums token by token in order
(`_token_by_token`), the definition itself.

Long: the definition and its fast paths side by side (token by token, the bags, one question; math.fsum a row
and `fsums`), each next to what it must equal, to the bit (tests/unit/test_embedding_fast.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import threading
from collections.abc import Sequence
from functools import cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from indexer.retrieval import model_files
from indexer.retrieval.corpus import Law
from indexer.retrieval.pieces import Bags, Pieces

if TYPE_CHECKING:
    from tokenizers import Tokenizer

DIMENSION = 256
# 2^-20 per component: a component of a 256-d unit vector is about 0.06 on average, so the grid keeps
# it to a relative 1.6e-5, far below what separates two rows' meanings, and keeps every dot product
# exact (see above: 2·20 + log2(256) = 48 bits < 53).
GRID_BITS = 20
_GRID = float(2**GRID_BITS)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors (rows of a float32 matrix), the same bytes on every run."""

    @property
    def model(self) -> str:
        """The model's name, as an index's fingerprint and `_meta` carry it."""
        ...

    @property
    def version(self) -> str:
        """The model's version: its package's and a digest of its weights."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def questions_on_node(self) -> bool:
        """True where the lawindex plugin embeds a question itself, bit for bit (the shipped road table); False
        where it cannot (a transformer, a user's own vectors): the client embeds the question, or takes the user's
        vector, and sends it (`Request.vector`)."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, L2-normalised (the zero row for a text with no tokens), on the grid."""
        ...


# A run of texts embedded at once holds at most this many tokens' places (8 bytes each: 32 MB).
_CELLS = 1 << 22
# Texts tokenized and pooled at once by `embed`: 2,048 rows of float64 are 4 MB an array.
TEXTS_AT_ONCE = 2048
# Every value of the matrix is a whole number of 2^-UNIT_BITS (exact_terms checks it as the model loads).
UNIT_BITS = 24
_COSINE_ROWS = 1024


def row_text(law: Law) -> str:
    """The text a row is embedded from: its law, its question and its concept, for every row, process
    rows included (an agency page reaches the model by its meaning, never by its words)."""
    return f"{law.law} {law.question} {law.concept.replace('-', ' ')}"


# In a Python str a surrogate is always alone: a pair (from JSON's escapes, or UTF-16) is one code point already.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def tokenizable(texts: Sequence[str]) -> Sequence[str]:
    """`texts` with each lone surrogate as U+FFFD: what the tokenizer is given. A lone surrogate (a `\\ud800`
    escape in JSON, or a byte that is not UTF-8 in a command's argument, which Python decodes to one) is not a
    character, and `tokenizers` refuses the text whole: `ask --by meaning` ended in a traceback on one. The
    plugin's embedder reads it as U+FFFD (plugin/src/main/java/org/lawindex/Bpe.java), as `lawindex serve`
    reads a question: the same vector everywhere."""
    if not any(map(_LONE_SURROGATE.search, texts)):
        return texts
    return [_LONE_SURROGATE.sub("\ufffd", text) for text in texts]


def identity(embedder: Embedder) -> str:
    """`model@version`: what an index's fingerprint records of the embedder its vectors came from."""
    return f"{embedder.model}@{embedder.version}"


def normalised(sums: npt.NDArray[np.float64]) -> Vectors:
    """Each row of `sums` (float64) divided by its length, on the grid, as float32 (zero rows stay zero)."""
    # The squares are numpy's float64 products (each rounded as `x * x` is), summed as math.fsum sums them
    # (`fsums`: the same correctly rounded sum, 45-50 ms for 13,147 rows where math.fsum a row took 160 ms).
    squares = sums * sums
    norms = np.sqrt(fsums(squares))  # IEEE's square root, correctly rounded as math.sqrt's
    out = np.zeros(sums.shape, dtype=np.float32)
    some = norms > 0.0
    out[some] = np.round(sums[some] / norms[some, None] * _GRID) / _GRID
    return out


def given_grid(values: Sequence[float] | npt.NDArray[np.float64]) -> Vectors:
    """A vector given as numbers (a question's `Request.vector`, a row's own `vector`) on the grid, by the rule a
    text's sums are: `normalised`, so it is ranked exactly like a built-in vector. Its values are finite and within
    the contract's bounds (request.checked_vector): no square overflows, and the norm of a nonzero one is not 0."""
    row: Vectors = normalised(np.asarray(values, dtype=np.float64).reshape(1, -1))[0]
    return row


# fsums: a sum that is certainly the correctly rounded one lies farther than 1,024 times the bound of its error
# (relative) from half way between two doubles, and at least _MARGIN; a sum below _TINY is left to math.fsum,
# where a rounding is not relative (subnormal numbers begin at 2^-1022).
_MARGIN = 2.0**-80
_TINY = 2.0**-900
_HUGE = 2.0**1000
# Rows summed at once by fsums: their work arrays (128 columns of float64, 256 KB) stay in the cache; 2,048 at
# once took twice the time.
_SUM_ROWS = 256


def fsums(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """`math.fsum` of each row of `values` (float64), to the bit: each row's correctly rounded sum.

    Vectorised over the rows (`_two_sums`): the sum of a row's terms added in pairs, and the exact sum of what
    each addition rounded away, summed apart. Of n terms none negative, of exact sum S, the two add up to S
    within (n-1)·u(1+γ(n))·γ(n-1)·S (u = 2^-53, γ(k) = ku/(1-ku)): each addition rounds away at most u times
    a partial sum, itself at most S(1+γ(n)), and a float sum of n-1 numbers, in any order, is within γ(n-1)
    times the sum of their magnitudes (Ogita, Rump and Oishi's Sum2). For 256 terms that is below 2^-90·S.
    Rounding the two then gives S correctly rounded wherever S is farther than 1,024 times that (2^-80·S) from
    half way between the doubles around it, which is checked; every other row (about one in 10^8; a tie; a
    term negative, -0.0 or not finite; a sum below 2^-900) is math.fsum's own."""
    count, width = values.shape
    wide = 1 << max(0, width - 1).bit_length()
    unit = 2.0**-53
    bound = (wide - 1) * unit * (1 + _gamma(wide)) * _gamma(wide - 1)
    relative = max(_MARGIN, 1024 * bound)  # 2^-80 up to 256 terms; a row of millions falls to fsum
    terms = values
    if wide != width:  # zeros to a power of two wide: adding 0 rounds nothing away
        terms = np.zeros((count, wide), dtype=np.float64)
        terms[:, :width] = values
    total = np.empty(count, dtype=np.float64)
    away = np.empty(count, dtype=np.float64)
    with np.errstate(all="ignore"):  # a row not finite is fsum's, warnings and errors included
        for start in range(0, count, _SUM_ROWS):
            total[start : start + _SUM_ROWS], away[start : start + _SUM_ROWS] = _two_sums(
                terms[start : start + _SUM_ROWS]
            )
        rounded = total + away
        # What is left of S past `rounded`, to within the bound: total - rounded is exact (Sterbenz: `away` is
        # at most 2^-44 of `total`), then one more rounding, of a number about a unit in the last place.
        past = (total - rounded) + away
        up = np.nextafter(rounded, np.inf) - rounded  # the gaps to the neighbouring doubles, exact
        down = rounded - np.nextafter(rounded, 0.0)
        margin = rounded * relative
        certain = (rounded == 0.0) | (
            (rounded >= _TINY) & (rounded <= _HUGE) & (up * 0.5 - past > margin) & (past + down * 0.5 > margin)
        )
    certain &= ~np.signbit(values).any(axis=1) & np.isfinite(values).all(axis=1)
    for row in np.flatnonzero(~certain).tolist():
        rounded[row] = math.fsum(memoryview(values[row]))
    return rounded


def _gamma(count: int) -> float:
    """Higham's γ(count): count rounding errors of at most u = 2^-53 each compound to at most this, relative."""
    spent = count * 2.0**-53
    return spent / (1 - spent) if spent < 1 else math.inf


def _two_sums(terms: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each row's sum, its columns (a power of two of them) added in pairs until one is left, and the sum of
    what those additions rounded away, each of those errors exact (Knuth's TwoSum, no assumption on their
    magnitudes): the first plus the exact second is the row's exact sum."""
    rows, width = terms.shape
    half = width // 2
    sums = (np.empty((rows, half), dtype=np.float64), np.empty((rows, half), dtype=np.float64))
    back = np.empty((rows, half), dtype=np.float64)
    error = np.empty((rows, half), dtype=np.float64)
    errors = np.zeros((rows, half), dtype=np.float64)
    level, turn = terms, 0
    while half:
        left, right = level[:, :half], level[:, half:]
        total, bb, err = sums[turn][:, :half], back[:, :half], error[:, :half]
        np.add(left, right, out=total)
        np.subtract(total, left, out=bb)
        np.subtract(total, bb, out=err)
        np.subtract(left, err, out=err)
        np.subtract(right, bb, out=bb)
        err += bb  # left + right == total + err, exactly
        errors[:, :half] += err
        level, turn, half = total, 1 - turn, half // 2
    return level[:, 0].copy(), errors.sum(axis=1)


# The shipped table and WordLlama's, embedded alike (their files: indexer.retrieval.model_files).
MODEL = model_files.MODEL
WORDLLAMA = model_files.WORDLLAMA
shipped_table = model_files.shipped_table
wordllama_files = model_files.wordllama_files


def read_table(path: Path) -> Vectors:
    """The float16 `embedding.weight` of a safetensors file, widened exactly to float32: [tokens, DIMENSION]."""
    from safetensors.numpy import load_file

    table = load_file(str(path)).get("embedding.weight")
    if table is None or table.dtype != np.float16 or table.ndim != 2 or table.shape[1] != DIMENSION:
        raise ValueError(f"{path}: not a float16 embedding.weight of {DIMENSION} columns")
    return np.ascontiguousarray(table, dtype=np.float32)


@cache
def sparse_products() -> bool:
    """Whether scipy is installed, whose sparse products sum a batch's bags (`_summed`). scripts/demo loads its
    first state before pip has installed scipy (issue 48.5): without it a batch is summed token by token, the
    definition itself, the same bytes (tests/unit/test_embedding_fast.py holds both paths to the definition)."""
    return importlib.util.find_spec("scipy") is not None


class StaticEmbedder:
    """WordLlama's tokenizer and a table of one float16 row per token (the shipped table unless told another):
    a text's vector is the mean of its tokens' rows, normalised, on the grid (the module's docstring)."""

    def __init__(self, table: Path | None = None, model: str = MODEL) -> None:
        from importlib.metadata import version

        from tokenizers import Tokenizer

        table = table or shipped_table()
        tokenizer, _ = wordllama_files()
        self._model = model
        self._matrix = read_table(table)
        # WordLlama's tokenizer without padding or truncation: each text's own tokens only.
        self._tokenizer: Tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        if self._tokenizer.get_vocab_size() > len(self._matrix):
            raise ValueError(f"{table}: {len(self._matrix)} rows for {self._tokenizer.get_vocab_size()} tokens")
        self._lock = threading.Lock()  # a Rust tokenizer used from several threads (serve): one at a time
        self._pieces = Pieces.of(self._tokenizer)  # the same ids, a cached word at a time (indexer.retrieval.pieces)
        self._exact = exact_terms(self._matrix)
        # The tokenizer's package and the table file's digest: a new table (or tokenizer) is a new index.
        digest = hashlib.sha256(table.read_bytes()).hexdigest()[:12]
        self._version = f"{version('wordllama')}+{digest}"

    @property
    def model(self) -> str:
        return self._model

    @property
    def version(self) -> str:
        return self._version

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def questions_on_node(self) -> bool:
        return True  # the plugin's Embedder.java is this table's arithmetic, to the bit

    def tokens(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, in order (a lone surrogate read as U+FFFD: `tokenizable`)."""
        texts = tokenizable(texts)
        with self._lock:
            if self._pieces is not None:
                return self._pieces.ids(texts)
            encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [one.ids for one in encoded]

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector per text (see the module's docstring for its arithmetic)."""
        if len(texts) == 1:
            return self.embed_one(texts[0])[None, :]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # TEXTS_AT_ONCE texts at a time, tokens to vectors: what a text is made into while it is embedded (its
        # ids, its float64 sum, squares and quotients: about 8 KB) is held for those only, not for a whole
        # state (51,781 laws of a generated state: 400 MB of float64 at once).
        for start in range(0, len(texts), TEXTS_AT_ONCE):
            out[start : start + TEXTS_AT_ONCE] = self._embedded(texts[start : start + TEXTS_AT_ONCE])
        return out

    def _embedded(self, texts: Sequence[str]) -> Vectors:
        if self._pieces is None or not self._exact or not sparse_products():
            return normalised(self._token_by_token(self.tokens(texts)))
        with self._lock:
            bags = self._pieces.bags(tokenizable(texts))
        sums, counts = self._summed(bags)
        pooled: npt.NDArray[np.float64] = sums / np.maximum(counts, 1.0)[:, None]
        longer = np.flatnonzero(counts > self._exact)  # never with the shipped matrix (67 million tokens)
        if len(longer):
            pooled[longer] = self._token_by_token(self.tokens([texts[one] for one in longer.tolist()]))
        return normalised(pooled)

    def _summed(self, bags: Bags) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each text's sum of its tokens' rows (float64) and its number of tokens, from its bag of pieces: the
        token-by-token sum, to the bit, for a text of at most `self._exact` tokens (`exact_terms`).

        Two sparse products (scipy's, in C++): the texts' pieces times the pieces' tokens counts each text's
        tokens, and those counts times the rows of the tokens used widened to float64 are the sums. No list of
        a text's ids, no per-token table: the Python side of the batch path was 1.15 s of 2.38 s (13,147 laws).
        Every addition is exact, so the order scipy adds in (and how often a row is counted) changes nothing."""
        from scipy import sparse  # type: ignore[import-untyped]  # 0.2-0.3 s to import: a load's, not a question's

        rows = self._matrix.shape[0]
        lengths = np.fromiter(map(len, bags.ids), dtype=np.intp, count=len(bags.ids))
        tokens = np.fromiter(chain.from_iterable(bags.ids), dtype=np.intp, count=int(lengths.sum()))
        np.clip(tokens, 0, rows - 1, out=tokens)  # as the token-by-token table
        spelled = sparse.csr_matrix(
            (np.ones(len(tokens)), tokens, _offsets(lengths)), shape=(len(lengths), rows)
        )  # pieces x the matrix's rows: a 1 per token (a token twice in a piece: 2)
        made_of = sparse.csr_matrix(
            (np.ones(len(bags.pieces)), bags.pieces, _offsets(bags.counts)), shape=(len(bags.counts), len(lengths))
        )  # texts x pieces
        held = made_of @ spelled  # texts x the matrix's rows: how many times each text holds each token
        used = np.flatnonzero(np.bincount(held.indices, minlength=rows))
        place = np.zeros(rows, dtype=held.indices.dtype)
        place[used] = np.arange(len(used))
        held = sparse.csr_matrix((held.data, place[held.indices], held.indptr), shape=(held.shape[0], len(used)))
        # The used rows widened to float64 a block at a time, at most _CELLS values (32 MB; 2,048 generated laws
        # use about 2,700 of the 32,000 rows, random Unicode could use them all).
        step = max(1, _CELLS // DIMENSION)
        if len(used) <= step:
            sums: npt.NDArray[np.float64] = held @ self._matrix[used].astype(np.float64)
        else:
            by_token = held.tocsc()  # column slices of a CSC matrix are cheap
            sums = np.zeros((held.shape[0], DIMENSION), dtype=np.float64)
            for start in range(0, len(used), step):
                sums += by_token[:, start : start + step] @ self._matrix[used[start : start + step]].astype(np.float64)
        counts: npt.NDArray[np.float64] = made_of @ lengths.astype(np.float64)
        return sums, counts

    def _token_by_token(self, ids: list[list[int]]) -> npt.NDArray[np.float64]:
        """The mean of each text's token rows, summed token by token in its order (the definition, for a matrix
        or a tokenizer where the bags' exactness is not proven)."""
        count = len(ids)
        lengths = np.array([len(one) for one in ids], dtype=np.intp)
        # Longest first, in runs of at most _CELLS tokens' places (a run's texts times its longest): the
        # table of a run is dense, and one long law among 24,000 must not make a table of 24,000 times its
        # length (7.66 GiB on a million-word state). A text's sum is the same whatever run it is in.
        by_length = np.argsort(-lengths, kind="stable")
        pooled = np.empty((count, DIMENSION), dtype=np.float64)
        start = 0
        while start < count:
            longest = max(1, int(lengths[by_length[start]]))
            stop = min(count, start + max(1, _CELLS // longest))
            run = by_length[start:stop]
            pooled[run] = self._pooled([ids[text] for text in run.tolist()], lengths[run])
            start = stop
        return pooled

    def embed_one(self, text: str) -> Vectors:
        """`embed([text])[0]`, the same bytes, at the cost of one short question: its tokens' rows summed at once
        where the matrix makes every order of addition exact (`exact_terms`), a 1-row norm. (The batch path's
        table, sort, runs and masks cost a question 0.2 ms, 20 times the tokens and the sum.)"""
        ids = np.array(self.tokens([text])[0], dtype=np.intp)
        if not len(ids):
            return np.zeros(DIMENSION, dtype=np.float32)
        np.clip(ids, 0, self._matrix.shape[0] - 1, out=ids)  # as the batch path's table
        sums = np.zeros(DIMENSION, dtype=np.float64)
        step = max(1, _CELLS // DIMENSION)  # rows gathered at once: 16 MB of float32 at most
        for start in range(0, len(ids), step):
            rows = self._matrix[ids[start : start + step]]
            if len(ids) <= self._exact:
                sums += np.add.reduce(rows, axis=0, dtype=np.float64)
            else:  # token by token in the text's order (never with the shipped matrix: see exact_terms)
                for row in rows:
                    sums += row
        mean: npt.NDArray[np.float64] = sums / np.float64(len(ids))
        # normalised()'s arithmetic on one row: the same products, fsum, square root, division and grid.
        norm = math.sqrt(math.fsum((mean * mean).tolist()))
        if not norm > 0.0:
            return np.zeros(DIMENSION, dtype=np.float32)
        vector: Vectors = (np.round(mean / norm * _GRID) / _GRID).astype(np.float32)
        return vector

    def _pooled(self, ids: list[list[int]], lengths: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        """The mean of each text's token rows, in float64; `ids` longest first (`lengths` theirs)."""
        count, longest = len(ids), int(lengths[0])
        table = np.zeros((count, longest), dtype=np.intp)
        for place, one in enumerate(ids):
            table[place, : len(one)] = one
        # Each token id clamped into the matrix, as the tokenizer's ids always are.
        np.clip(table, 0, self._matrix.shape[0] - 1, out=table)
        having = np.searchsorted(-lengths, -np.arange(longest), side="left")  # texts with > k tokens
        sums = np.zeros((count, DIMENSION), dtype=np.float64)
        # The sum of each text's rows, token by token in its order: the k-th token of every text at once
        # (float32 rows widened exactly to float64 by the addition), so the additions per text are the same
        # sequence whatever texts are embedded with it.
        for k in range(longest):
            sums[: having[k]] += self._matrix[table[: having[k], k]]
        result: npt.NDArray[np.float64] = sums / np.maximum(lengths, 1).astype(np.float64)[:, None]
        return result


def _offsets(counts: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """Where each of a CSR matrix's rows begins, and the end: 0, then the running sum of `counts`."""
    out = np.zeros(len(counts) + 1, dtype=np.intp)
    np.cumsum(counts, out=out[1:])
    return out


def exact_terms(matrix: Vectors) -> int:
    """How many of `matrix`'s rows any float64 sum adds exactly, whatever the order of its additions: 0 unless
    every value is a whole number of 2^-UNIT_BITS, else (2^53 - 1) // the largest magnitude in those units.

    Why: a sum of n such values, taken in any order, has partial sums that are whole numbers of units of at
    most n times the largest value; below 2^53 units a float64 holds each one exactly, so no addition rounds
    and every order gives the exact sum, the one the token-by-token order gives. A float16 table widened
    has at most 11 significant bits, none below 2^-24; the road table's largest magnitude is 8 and WordLlama's
    8.016 (2^27 units), so a text of up to 67,000,000 tokens sums exactly in any order; a question of 100,000
    characters has at most 400,000. (A table with values near float16's largest, 65,504, would allow 8,192: the
    test of the shipped table asks for more than 400,000.)"""
    most = 0.0
    for start in range(0, len(matrix), 4096):  # 4 MB at a time, not a second copy of the 32 MB matrix
        units = matrix[start : start + 4096].astype(np.float64) * float(2**UNIT_BITS)
        if not np.array_equal(units, np.trunc(units)):
            return 0
        most = max(most, float(np.abs(units).max(initial=0.0)))
    return (2**53 - 1) // max(1, math.ceil(most))


@cache
def _default() -> StaticEmbedder:
    return StaticEmbedder()


_loading = threading.Lock()


def default_embedder() -> Embedder:
    """The embedder lawindex ships with, loaded once per process (0.1-0.9 s, no network)."""
    with _loading:
        return _default()


def cosines(vectors: Vectors, question: Vectors) -> npt.NDArray[np.float64]:
    """The dot product of each row of `vectors` with `question` (both on the grid), exact in float64 in
    any order of addition (see the module's docstring): the cosine of unit vectors."""
    # Widened to float64 a block of rows at a time: widening every row at once made a copy the size of the
    # state (12 MB for 6,000 rows) on every question, 5.5 ms of the 5.7 ms of 2,000 rows; in blocks of 1,024
    # (2 MB, in cache) the same products take 0.23 ms.
    asked = question.astype(np.float64)
    out = np.empty(len(vectors), dtype=np.float64)
    for start in range(0, len(vectors), _COSINE_ROWS):
        out[start : start + _COSINE_ROWS] = vectors[start : start + _COSINE_ROWS].astype(np.float64) @ asked
    return out
