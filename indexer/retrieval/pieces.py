"""WordLlama's token ids, a piece at a time: the same ids as its tokenizer, without tokenizing a word twice.

The tokenizer (a SentencePiece BPE in Hugging Face `tokenizers`: a normalizer that puts `▁` before the text
and for every space, no pre-tokenizer, then BPE over the whole text, bytes for unknown characters) makes the
whole text one BPE word, so its own cache never hits and every law's every word is merged again: 0.37 s of a
0.79 s embedding of 3,000 generated laws (300,000 tokens) was the tokenizer.

The same ids come a piece at a time. Cut the normalized text before every `▁` that follows a character that
is not `▁` (a piece is a run of `▁` and the characters up to the next `▁`). A merge joins two adjacent symbols
(a, b) into one; a symbol that begins at a cut begins with `▁`, one that ends there ends with a character
that is not `▁`; and the model has no merge whose right part begins with `▁` but whose left part is not all
`▁` (`Pieces.of` checks this of the model it is given: its 120 such merges join runs of `▁`, the spaces of
code). So no merge ever crosses a cut: BPE applies each piece's merges in the same order (lowest rank first,
then leftmost) whether the piece stands alone or inside the text, and byte fallback is per character. The
ids of the text are the pieces' ids, one after the other. A piece's ids are asked of the tokenizer's model
itself (the piece is normalized already and holds no added token) and kept, so a state's Zipf vocabulary is
tokenized about once a word. A text of words between single spaces (a law as written) has for pieces `▁` and
each of its words: its words are the cache's keys, and a batch of such texts is cut by one `str.split`.

`ids` gives each text's ids in order (a question's, `tokens`); `bags` gives each text as a bag of pieces, the
ids of each distinct piece once, for a sum that is the same in any order (the embedder's batch path), with no
list of a text's 100 ids made at all. What this does not cover goes to the tokenizer whole: a text holding one
of its added tokens (`<s>`, `</s>`, `<unk>`, matched in the raw text before normalizing), and a model that
fails the check above or has other normalizers, a pre-tokenizer or an added token holding a space.
tests/unit/test_embedding_fast.py holds the ids equal to the tokenizer's on generated texts (runs of spaces,
`▁` in the input, added tokens, every plane of Unicode, 100,000 characters) and on hypothesis's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SPACE = "\u2581"  # SentencePiece's word marker, what the normalizer makes of a space
_PIECE = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
# Pieces kept: a state's vocabulary (about 20,000 words of a generated 7,200-law state) with room for three
# states loading at once; about 200 bytes a piece (its text and its ids), so at most about 50 MB.
KEPT = 1 << 18
_ID = attrgetter("id")  # a model's Token's id (a listcomp of `token.id` took 119 ms of 39,126 pieces, this 94 ms)


@dataclass(frozen=True)
class Bags:
    """Texts as bags of pieces: which pieces each text is made of, in no order, each distinct piece's ids once.
    All that a sum over a text's tokens needs where every order of addition gives the same sum (the embedder's)."""

    # Each distinct piece's token ids; a text holding an added token is one piece of its own, its whole ids.
    ids: list[list[int]]
    # Each text's pieces (places in `ids`), text after text: a piece a text holds twice is there twice.
    pieces: npt.NDArray[np.intp]
    # How many of `pieces` each text has (0 for a text with no tokens).
    counts: npt.NDArray[np.intp]


class Pieces:
    """Token ids of texts, equal to `tokenizer`'s (without special tokens), a cached piece at a time.

    Not for threads: the embedder calls it under its lock."""

    def __init__(self, tokenizer: Tokenizer, added: Sequence[str]) -> None:
        self._tokenizer = tokenizer
        self._added = tuple(added)
        # The pieces tokenized so far, each by its number (its place in `_ids`). A piece is keyed without its
        # first `▁`, which every piece has: then a plain text's pieces are its words as `str.split` gives them.
        self._number: dict[str, int] = {}
        self._ids: list[list[int]] = []

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> Pieces | None:
        """The pieces of `tokenizer` (its padding and truncation off), or None where the cut above is not
        proven for it: its normalizer is not the SentencePiece one, it pre-tokenizes, or a merge crosses a cut."""
        made: dict[str, Any] = json.loads(tokenizer.to_str())
        if not _sentencepiece_normalizer(made.get("normalizer")) or made.get("pre_tokenizer") is not None:
            return None
        model = made.get("model") or {}
        if model.get("type") != "BPE" or model.get("dropout") is not None or model.get("ignore_merges"):
            return None
        for merge in model.get("merges", []):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            if right.startswith(SPACE) and left.strip(SPACE):
                return None
        added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
        if any(SPACE in token or " " in token for token in added):
            return None  # a piece could hold it (spaces made `▁`), and the model alone would not split it out
        return cls(tokenizer, added)

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, in order: the tokenizer's own, to the id."""
        keys, counts, whole = self._cut(texts)
        numbers = self._numbered(keys).tolist()
        of = self._ids.__getitem__
        out: list[list[int]] = []
        start = 0
        for count in counts:
            out.append(list(chain.from_iterable(map(of, numbers[start : start + count]))))
            start += count
        for place in whole:
            out[place] = self._tokenizer.encode(texts[place], add_special_tokens=False).ids
        return out

    def bags(self, texts: Sequence[str]) -> Bags:
        """Each text's pieces as a bag (`Bags`): the multiset of its token ids is the tokenizer's, to the id.

        No list of a text's ids is made: 13,147 generated laws are 1.36 million token ids, and flattening them
        into a list a text was 301 ms of the 2.38 s their embedding took."""
        keys, counts, whole = self._cut(texts)
        numbers = self._numbered(keys)
        # The call's distinct pieces, in the order of their numbers, and each piece's place among them.
        held = np.zeros(len(self._ids), dtype=bool)
        held[numbers] = True
        distinct = np.flatnonzero(held)
        place = np.cumsum(held) - 1
        ids = list(map(self._ids.__getitem__, distinct.tolist()))
        pieces, counted = place[numbers], np.array(counts, dtype=np.intp)
        if whole:
            starts = np.cumsum(counted) - counted
            pieces = np.insert(pieces, starts[whole], np.arange(len(ids), len(ids) + len(whole)))
            counted[whole] = 1
            ids.extend(self._tokenizer.encode(texts[one], add_special_tokens=False).ids for one in whole)
        return Bags(ids, pieces, counted)

    def _cut(self, texts: Sequence[str]) -> tuple[list[str], list[int], list[int]]:
        """Every piece of `texts` without its first `▁` (the keys of `_number`), text after text; how many each
        text has; and the texts holding an added token, which have none here: the tokenizer takes them whole."""
        if not texts:
            return [], [], []
        joined = " ".join(texts)
        if (all(texts) and SPACE not in joined and "  " not in joined and joined[0] != " " and joined[-1] != " "
                and not any(token in joined for token in self._added)):  # fmt: skip
            # Every text plain (not empty, no `▁`, single spaces, none at either end): its pieces are `▁` and
            # each of its words, and the batch's words are one `str.split` (13,147 generated laws: 88 ms, where
            # the regex a text took 258 ms). An added token, or two spaces, found only in the joined text are a
            # false alarm, never a miss: then each text is cut on its own.
            return joined.split(" "), [text.count(" ") + 1 for text in texts], []
        keys: list[str] = []
        counts: list[int] = []
        whole: list[int] = []
        for place, text in enumerate(texts):
            cut: list[str]
            if any(token in text for token in self._added):
                cut = []
                whole.append(place)
            elif not text:
                cut = []
            elif SPACE not in text and "  " not in text and text[0] != " " and text[-1] != " ":
                cut = text.split(" ")
            else:
                # The normalizer's work: `▁` before a text that is not empty, `▁` for every space.
                cut = [piece[1:] for piece in _PIECE.findall(SPACE + text.replace(" ", SPACE))]
            keys.extend(cut)
            counts.append(len(cut))
        return keys, counts, whole

    def _numbered(self, keys: list[str]) -> npt.NDArray[np.intp]:
        """The number of each piece of `keys`, the pieces not known yet tokenized first (a state's Zipf
        vocabulary: about once a word)."""
        number = self._number
        numbers = np.fromiter(map(number.get, keys, repeat(-1)), dtype=np.intp, count=len(keys))
        unknown = numbers < 0
        if not unknown.any():
            return numbers
        asked = list(compress(keys, unknown.tolist()))
        missing = list(dict.fromkeys(asked))
        if len(number) + len(missing) > KEPT:
            number.clear()  # a call's own pieces are always kept until it returns
            self._ids.clear()
            asked, unknown = keys, np.ones(len(keys), dtype=bool)
            missing = list(dict.fromkeys(keys))
        # The model itself, a piece at a time (the tokenizer's normalizer is not the model's: `model.tokenize`
        # runs the BPE alone): a tokenizer without normalizer gives the same ids by encode_batch of the same
        # pieces (no pre-tokenizer, no added token in a piece: `of`) at 3 times the CPU, in threads (the 39,126
        # pieces of a generated 13,147-law state: 400-430 ms against 130-160 ms).
        tokenize = self._tokenizer.model.tokenize
        made = [list(map(_ID, tokenize(SPACE + key))) for key in missing]  # a refused piece changes nothing
        number.update(zip(missing, range(len(self._ids), len(self._ids) + len(missing)), strict=True))
        self._ids.extend(made)
        numbers[unknown] = np.fromiter(map(number.__getitem__, asked), dtype=np.intp, count=len(asked))
        return numbers


def _sentencepiece_normalizer(normalizer: dict[str, Any] | None) -> bool:
    """Whether `normalizer` is exactly: prepend `▁`, then replace every space by `▁` (what `ids` redoes)."""
    if normalizer is None or normalizer.get("type") != "Sequence":
        return False
    steps: object = normalizer.get("normalizers")
    return steps == [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ]
