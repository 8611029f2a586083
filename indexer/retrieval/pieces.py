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
ids of the text are the pieces' ids, one after the other. A piece's ids are asked of a copy of the tokenizer
without its normalizer (the piece is normalized already) and kept, so a state's Zipf vocabulary is
tokenized about once a word.

What this does not cover goes to the tokenizer whole: a text holding one of its added tokens (`<s>`, `</s>`,
`<unk>`, matched in the raw text before normalizing), and a model that fails the check above or has other
normalizers or a pre-tokenizer. tests/unit/test_pieces.py holds the ids equal to the tokenizer's on generated
texts (runs of spaces, `▁` in the input, added tokens, every plane of Unicode, 100,000 characters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SPACE = "\u2581"  # SentencePiece's word marker, what the normalizer makes of a space
_PIECE = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
# Pieces kept: a state's vocabulary (about 20,000 words of a generated 7,200-law state) with room for three
# states loading at once; about 200 bytes a piece (its text and its ids), so at most about 50 MB.
KEPT = 1 << 18


class Pieces:
    """Token ids of texts, equal to `tokenizer`'s (without special tokens), a cached piece at a time.

    Not for threads: the embedder calls it under its lock."""

    def __init__(self, tokenizer: Tokenizer, bare: Tokenizer, added: Sequence[str]) -> None:
        self._tokenizer = tokenizer
        self._bare = bare
        self._added = tuple(added)
        self._ids: dict[str, list[int]] = {}

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> Pieces | None:
        """The pieces of `tokenizer` (its padding and truncation off), or None where the cut above is not
        proven for it: its normalizer is not the SentencePiece one, it pre-tokenizes, or a merge crosses a cut."""
        from tokenizers import Tokenizer

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
        made["normalizer"] = None
        bare = Tokenizer.from_str(json.dumps(made))
        added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
        return cls(tokenizer, bare, added)

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, in order: the tokenizer's own, to the id."""
        cut: list[list[str] | None] = []
        for text in texts:
            if any(token in text for token in self._added):
                cut.append(None)
            else:
                # The normalizer's work: `▁` before a text that is not empty, `▁` for every space.
                cut.append(_PIECE.findall(SPACE + text.replace(" ", SPACE)) if text else [])
        asked = dict.fromkeys(piece for pieces in cut if pieces for piece in pieces)
        if len(self._ids) + len(asked) > KEPT:
            self._ids.clear()  # a call's own pieces are always kept until it returns
        missing = [piece for piece in asked if piece not in self._ids]
        if missing:
            encoded = self._bare.encode_batch(missing, add_special_tokens=False)
            self._ids.update(zip(missing, (one.ids for one in encoded), strict=True))
        found = self._ids
        out: list[list[int]] = []
        for text, pieces in zip(texts, cut, strict=True):
            if pieces is None:
                out.append(self._tokenizer.encode(text, add_special_tokens=False).ids)
            else:
                out.append([token for piece in pieces for token in found[piece]])
        return out


def _sentencepiece_normalizer(normalizer: dict[str, Any] | None) -> bool:
    """Whether `normalizer` is exactly: prepend `▁`, then replace every space by `▁` (what `ids` redoes)."""
    if normalizer is None or normalizer.get("type") != "Sequence":
        return False
    steps: object = normalizer.get("normalizers")
    return steps == [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ]
