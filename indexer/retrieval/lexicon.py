"""A state's vocabulary as sorted blocks, one per word length: what spelling and scoring look words up in.

A million-word state (issue 19: 23,952 laws, 1,017,458 words) made `{word: df}` dictionaries the cost of
every question: 1,000,000 Python strings are 0.5-2 s to parse, build or hash in a fresh process and some
150 MB to hold. A `Lexicon` holds the same thing as a few numpy arrays per word length L:

- `words`: the vocabulary's words of L bytes (UTF-8; words() makes only [a-z0-9], so bytes are letters),
  sorted, as one fixed-width `S{L}` array: a word is found by a binary search (`searchsorted`);
- `places`: each word's place in the vocabulary's order, the spec's Map insertion order (the order
  spelledAs returns words in, and so the order scores are summed in);
- `df`: how many ranked laws have it.

Stored (`to_bytes` / `of_bytes`: little-endian uint32 arrays and the words' bytes end to end), a block is
read back with `numpy.frombuffer`, without a Python object per word. A block is looked up with every
candidate of its length at once (`find`), so a misspelt word's ~700 candidates cost a few numpy calls.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_PLACE = np.dtype("<u4")  # a million words fit in 32 bits four thousand times over


@dataclass(frozen=True, eq=False)
class Block:
    """The vocabulary's words of one length in bytes: sorted, with their places and df beside them."""

    words: npt.NDArray[np.bytes_]  # S{length}, sorted
    places: npt.NDArray[np.uint32]
    df: npt.NDArray[np.uint32]

    def to_bytes(self) -> bytes:
        """The block as stored: the words' bytes end to end, then the places, then the df (uint32, LE)."""
        return self.words.tobytes() + self.places.astype(_PLACE).tobytes() + self.df.astype(_PLACE).tobytes()

    @classmethod
    def of_bytes(cls, length: int, raw: bytes) -> Block:
        """A block read back from `to_bytes` (no copy: views into `raw`); ValueError when it is not one."""
        count, rest = divmod(len(raw), length + 2 * _PLACE.itemsize)
        if rest or length < 1:
            raise ValueError(f"a block of words of {length} bytes cannot be {len(raw)} bytes long")
        words = np.frombuffer(raw, dtype=f"S{length}", count=count)
        places = np.frombuffer(raw, dtype=_PLACE, count=count, offset=count * length)
        df = np.frombuffer(raw, dtype=_PLACE, count=count, offset=count * (length + _PLACE.itemsize))
        return cls(words, places, df)


def digest(raw: bytes) -> str:
    """The SHA-256 a stored block is sealed with."""
    return hashlib.sha256(raw).hexdigest()


class Lexicon:
    """A vocabulary's words by length in bytes, each with its place in the vocabulary and its df.

    `blocks` may be given a few at a time (`fetch`: a length's block is asked for the first time it is
    needed), so that a question reads only the lengths its words can reach.
    """

    __slots__ = ("_blocks", "_fetch", "_fetching", "alphabet", "lengths", "longest", "size")

    def __init__(
        self,
        blocks: Mapping[int, Block],
        *,
        size: int,
        alphabet: str,
        lengths: Iterable[int] | None = None,
        fetch: Callable[[list[int]], Mapping[int, Block]] | None = None,
    ) -> None:
        self._blocks: dict[int, Block] = dict(blocks)
        self._fetch = fetch
        # One fetch at a time: questions that need the same block meanwhile wait for it, not fetch it again.
        self._fetching = threading.Lock()
        self.size = size  # words in all
        self.alphabet = alphabet  # every character some word has, sorted: what one edit can type
        self.lengths = frozenset(self._blocks if lengths is None else lengths)  # lengths (bytes) some word has
        # The longest word in characters is at most the longest in bytes: a bound for a compound's parts.
        self.longest = max(self.lengths, default=0)

    @classmethod
    def of(cls, vocabulary: Iterable[str] | Mapping[str, int]) -> Lexicon:
        """The lexicon of `vocabulary`'s words in its order (df from a mapping, else 0), built afresh.

        Without a Python object per word: the words joined into one string, encoded once, and each
        length's words gathered from it into a fixed-width block by numpy, then sorted by numpy.
        """
        if isinstance(vocabulary, Mapping):
            words = list(vocabulary)
            df = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(words))
        else:
            words = list(dict.fromkeys(vocabulary))
            df = np.zeros(len(words), dtype=np.int64)
        # No word may end in NUL: numpy's S arrays drop trailing NULs (words() never makes one).
        if all(map(str.isascii, words)):
            sizes = np.fromiter(map(len, words), dtype=np.intp, count=len(words))
            encoded: list[str] | list[bytes] = words
        else:  # lengths in bytes, as every look-up measures them
            encoded = [word.encode() for word in words]
            sizes = np.fromiter(map(len, encoded), dtype=np.intp, count=len(words))
        raw = "".join(words).encode() if encoded is words else b"".join(encoded)  # type: ignore[arg-type]
        text = np.frombuffer(raw, dtype=np.uint8)
        starts = np.zeros(len(words), dtype=np.intp)
        np.cumsum(sizes[:-1], out=starts[1:])
        blocks = {}
        for length in np.unique(sizes).tolist():
            if length == 0:
                continue  # the empty word is no word (words() never makes one)
            places = np.flatnonzero(sizes == length)
            # Each word's bytes gathered from the joined text into rows of `length`: a block, with no
            # Python object per word.
            kept = text[starts[places][:, None] + np.arange(length)].view(f"S{length}").ravel()
            order = np.argsort(kept)  # distinct words: any sort gives the same order
            blocks[length] = Block(kept[order], places[order].astype(_PLACE), df[places[order]].astype(_PLACE))
        if encoded is words:  # every character some word has: its byte is in the joined words
            present = np.flatnonzero(np.bincount(text, minlength=128))
            alphabet = "".join(map(chr, present.tolist()))
        else:
            alphabet = "".join(sorted(set("".join(words))))
        return cls(blocks, size=len(words), alphabet=alphabet)

    def block(self, length: int) -> Block | None:
        """The block of words of `length` bytes (fetched if need be); None when no word has that length."""
        if length not in self.lengths:
            return None
        found = self._blocks.get(length)
        if found is None:
            self._ensure([length])
            found = self._blocks[length]
        return found

    def _missing(self, lengths: Iterable[int]) -> list[int]:
        return sorted({length for length in lengths if length in self.lengths and length not in self._blocks})

    def _ensure(self, lengths: Iterable[int]) -> None:
        wanted = list(lengths)
        if not self._missing(wanted):
            return
        with self._fetching:
            missing = self._missing(wanted)  # what another question fetched meanwhile is not fetched again
            if missing:
                if self._fetch is None:
                    raise KeyError(f"no block of {missing[0]} bytes and nothing to fetch it from")
                fetched = self._fetch(missing)
                self._blocks.update({length: fetched[length] for length in missing})

    def read(self, lengths: Iterable[int]) -> None:
        """The blocks of `lengths` fetched now, in one request, where some word has that length."""
        self._ensure(lengths)

    def read_all(self) -> None:
        """Every block fetched (what `load` checks an index with, before it calls it unchanged)."""
        self._ensure(self.lengths)

    def find(self, candidates: Iterable[str]) -> dict[str, tuple[int, int]]:
        """The candidates that are words of the vocabulary, each with (its place, its df); every one once."""
        by_length: dict[int, dict[bytes, str]] = {}
        for word in candidates:
            raw = word.encode()
            if len(raw) in self.lengths:
                by_length.setdefault(len(raw), {})[raw] = word
        self._ensure(by_length)
        found: dict[str, tuple[int, int]] = {}
        for length, asked in by_length.items():
            block = self._blocks[length]
            wanted = np.array(list(asked), dtype=f"S{length}")
            at = np.searchsorted(block.words, wanted)
            np.minimum(at, len(block.words) - 1, out=at)
            hit = np.flatnonzero(block.words[at] == wanted)
            for i, place, df in zip(
                hit.tolist(), block.places[at[hit]].tolist(), block.df[at[hit]].tolist(), strict=True
            ):
                found[asked[bytes(wanted[i])]] = (place, df)
        return found

    def get(self, word: str) -> tuple[int, int] | None:
        """(place, df) of `word`, or None when the vocabulary does not have it."""
        raw = word.encode()
        block = self.block(len(raw)) if raw else None
        if block is None:
            return None
        at = int(np.searchsorted(block.words, raw))
        if at < len(block.words) and block.words[at] == raw:
            return int(block.places[at]), int(block.df[at])
        return None

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.get(word) is not None

    def __len__(self) -> int:
        return self.size

    def in_order(self) -> list[tuple[str, int]]:
        """Every (word, df) in the vocabulary's order (every block fetched): for tests and tools, not for a
        question, which never needs the whole vocabulary."""
        self._ensure(self.lengths)
        words: list[str] = [""] * self.size
        df: list[int] = [0] * self.size
        for block in self._blocks.values():
            for word, place, count in zip(block.words.tolist(), block.places.tolist(), block.df.tolist(), strict=True):
                words[place] = word.decode()
                df[place] = count
        return list(zip(words, df, strict=True))
