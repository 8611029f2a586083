"""A big state's reference statistics kept on disk, so that a fresh `lawindex ask --engine reference` does
not count a million words again.

Counting a state of 24,000 laws and a million distinct words is 5-6 s of Python on a quiet machine (a
Python string, dict entry and int per word), every process, before the first question. What a question
needs of it is a few arrays: each word's postings (the laws that have it, in corpus order, with the spec's
term score of each, computed once in the spec's arithmetic, and its tf), each law's length, where each
law's line starts in the file, and the vocabulary's sorted blocks per word length (indexer.retrieval.lexicon)
for the words and their places. Those are written, once, by the first process that builds the statistics
of a file of STORED_FROM bytes or more, under the SHA-256 of the file's bytes; a later process reads the
file (to hash it), the arrays (each checked against its SHA-256 in the manifest), only the blocks of the
lengths its words reach, and only the lines of the laws it returns.

The same answer, to the last bit: the postings' scores are the built statistics' own float64s, added in
the same order (every word law by law: the built engine's dense rows add 0.0 where a law lacks the word,
which changes no sum), and ranked by the same code (reference.top_scores). tests/unit/test_stored.py holds it
equal to the built engine, ties and misspellings included. A stored state that does not match its
manifest (a file cut short, a bit changed) is not used: the statistics are built again and stored over it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.retrieval import reference
from indexer.retrieval.answers import Answer, Hit
from indexer.retrieval.corpus import Law, law_lines, law_of_line
from indexer.retrieval.lexicon import Block, Lexicon
from indexer.retrieval.spelling import Vocabulary
from indexer.retrieval.words import words

# Bumped whenever what is stored, or how it is computed, changes: a stored state of another format is
# another name, never read.
FORMAT = 1
# Files this large or larger are stored (a generated Texas of 6,000 laws is 5 MB and builds in 0.4 s: the
# sample states, 20 KB, build in milliseconds and are never stored).
STORED_FROM = 4 << 20
# Stored states kept in the directory, the least recently used removed past it.
KEPT = 8
_NAME = re.compile(rf"[0-9a-f]{{64}}-{FORMAT}")
# The arrays, by file name: their dtype (little-endian, whatever the machine).
_ARRAYS = {
    "offsets": "<u8",  # word place -> where its postings start (one more: the end)
    "post_laws": "<u4",  # each posting's law (its place in the corpus)
    "post_scores": "<f8",  # each posting's term score, the spec's float64
    "post_tfs": "<u4",  # each posting's tf
    "lengths": "<u4",  # each law's length in words (0 for a process row)
    "starts": "<u8",  # where each law's line starts in the file, in bytes
}


def name_of(raw_file: bytes) -> str:
    """The stored state's name for a file's bytes: their SHA-256 and the format."""
    return f"{hashlib.sha256(raw_file).hexdigest()}-{FORMAT}"


@dataclass(frozen=True, eq=False)
class StoredState:
    """A state's statistics as stored: what reference.top_scores ranks from (reference.Postings), the
    vocabulary's blocks, and the file the laws' lines are read from."""

    state: str
    raw_file: bytes = field(repr=False)
    offsets: npt.NDArray[np.uint64] = field(repr=False)
    post_laws: npt.NDArray[np.uint32] = field(repr=False)
    post_scores: npt.NDArray[np.float64] = field(repr=False)
    post_tfs: npt.NDArray[np.uint32] = field(repr=False)
    lengths: npt.NDArray[np.uint32] = field(repr=False)
    starts: npt.NDArray[np.uint64] = field(repr=False)
    spelling: Vocabulary = field(repr=False)
    dense: dict[int, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)

    @property
    def rank(self) -> Any:
        """word -> its place in the vocabulary (looked up in the blocks, word by word)."""
        return self.spelling.rank

    def ask(self, question: str, limit: int) -> Answer:
        """reference.ask's answer, from the stored arrays."""
        asked_words = words(question)
        terms = self.spelling.terms(asked_words)
        indexes, values = reference.top_scores(self, terms, limit)
        places = [self.spelling.place(term) for term in terms]
        hits = []
        for index, value in zip(indexes, values, strict=True):
            tfs = {}
            for term, w in zip(terms, places, strict=True):
                lo, hi = int(self.offsets[w]), int(self.offsets[w + 1])
                at = lo + int(np.searchsorted(self.post_laws[lo:hi], index))  # a word's laws are in corpus order
                if at < hi and self.post_laws[at] == index:
                    tfs[term] = int(self.post_tfs[at])
            hits.append(Hit._make((self._law(index), value, index, tfs, int(self.lengths[index]))))
        return Answer(self.state, question, asked_words, terms, hits)

    def _law(self, index: int) -> Law:
        start = int(self.starts[index])
        end = self.raw_file.find(b"\n", start)
        return law_of_line(self.raw_file[start : end if end >= 0 else len(self.raw_file)])


def store(directory: Path, state: str, raw_file: bytes, stats: reference.Statistics) -> None:
    """Store `stats`, the statistics built of `raw_file` (the bytes of `state`'s file), under `directory`.
    Written beside and renamed into place, so that a reader sees all of it or none; a directory that cannot
    be written leaves the engine as it was (it builds, as before)."""
    name = name_of(raw_file)
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / name).is_dir():
            return
        starts = np.fromiter((start for _, start, _ in law_lines(raw_file)), dtype=np.uint64)
        if len(starts) != len(stats.lengths):
            return  # not the statistics of this file
        making = Path(f"{directory / name}.{os.getpid()}.making")
        shutil.rmtree(making, ignore_errors=True)
        making.mkdir()
        # Made one at a time and let go once written: the process that stores holds the built statistics
        # already (what a million-word state's first process peaks at is theirs, not these copies').
        arrays: dict[str, Callable[[], npt.NDArray[Any]]] = {
            "offsets": lambda: np.asarray(stats.offsets),
            "post_laws": lambda: stats.post_laws,
            "post_scores": lambda: stats.post_scores,
            "post_tfs": lambda: stats.pairs.tfs[reference.postings_order(stats.pairs, len(stats.vocabulary))],
            "lengths": lambda: np.asarray(stats.lengths),
            "starts": lambda: starts,
        }
        files: dict[str, str] = {}
        for key, dtype in _ARRAYS.items():
            files[key] = _write(making / f"{key}.bin", arrays[key]().astype(dtype, copy=False).data)
        lexicon = stats.spelling.lexicon
        lexicon.read_all()
        for length in sorted(lexicon.lengths):
            block = lexicon.block(length)
            assert block is not None
            files[f"lexicon-{length}"] = _write(making / f"lexicon-{length}.bin", block.to_bytes())
        manifest = {
            "format": FORMAT,
            "state": state,
            "laws": len(stats.lengths),
            "words": len(lexicon),
            "alphabet": lexicon.alphabet,
            "files": files,
        }
        _write(making / "manifest.json", json.dumps(manifest, sort_keys=True).encode())
        try:
            making.rename(directory / name)
        except OSError:  # another process stored it first: the same bytes
            shutil.rmtree(making, ignore_errors=True)
        _prune(directory)


def open_stored(directory: Path, state: str, raw_file: bytes) -> StoredState | None:
    """The stored statistics of `raw_file`, or None when there are none (or they do not match their
    manifest: then they are built and stored again)."""
    place = directory / name_of(raw_file)
    try:
        manifest = json.loads((place / "manifest.json").read_bytes())
        files = manifest["files"]
        if manifest["format"] != FORMAT or manifest["state"] != state:
            return None
        arrays = {key: _read(place / f"{key}.bin", files[key], dtype) for key, dtype in _ARRAYS.items()}
        lengths = sorted(int(key.removeprefix("lexicon-")) for key in files if key.startswith("lexicon-"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        arrays = {}
    if not arrays or any(a is None for a in arrays.values()) or len(arrays["lengths"]) != manifest["laws"]:  # type: ignore[arg-type]
        forget(directory, raw_file)
        return None

    def fetch(wanted: list[int]) -> dict[int, Block]:
        blocks = {}
        for length in wanted:
            raw = _checked(place / f"lexicon-{length}.bin", files[f"lexicon-{length}"])
            if raw is None:
                raise StoredAltered(f"{place}/lexicon-{length}.bin does not match its manifest")
            blocks[length] = Block.of_bytes(length, raw)
        return blocks

    lexicon = Lexicon({}, size=int(manifest["words"]), alphabet=str(manifest["alphabet"]), lengths=lengths, fetch=fetch)
    with contextlib.suppress(OSError):
        os.utime(place)  # used: the last to be pruned
    return StoredState(state=state, raw_file=raw_file, spelling=Vocabulary(lexicon), **arrays)  # type: ignore[arg-type]


def forget(directory: Path, raw_file: bytes) -> None:
    """The stored state of `raw_file` removed (it did not match its manifest), so that it is stored again."""
    shutil.rmtree(directory / name_of(raw_file), ignore_errors=True)


class StoredAltered(Exception):
    """A block of a stored state does not match its manifest (read on a question's first need of it)."""


def _write(path: Path, data: bytes | memoryview) -> str:
    """`data` written to `path` (an array's memory as it is: no copy of it made); its SHA-256."""
    with path.open("wb") as file:
        file.write(data)
    return hashlib.sha256(data).hexdigest()


def _checked(path: Path, digest: str) -> bytes | None:
    """The bytes of `path`, or None when their SHA-256 is not `digest`."""
    raw = path.read_bytes()
    return raw if hashlib.sha256(raw).hexdigest() == digest else None


def _read(path: Path, digest: str, dtype: str) -> npt.NDArray[Any] | None:
    raw = _checked(path, digest)
    return None if raw is None else np.frombuffer(raw, dtype=dtype)


def _prune(directory: Path) -> None:
    """The stored states past KEPT removed, least recently used first; what is not one is left alone."""
    found = []
    for entry in directory.iterdir():
        if _NAME.fullmatch(entry.name) and entry.is_dir():
            with contextlib.suppress(OSError):
                found.append((entry.stat().st_mtime_ns, entry))
    for _, entry in sorted(found, reverse=True)[KEPT:]:
        shutil.rmtree(entry, ignore_errors=True)
