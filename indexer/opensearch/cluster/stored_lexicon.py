"""How a state's vocabulary is kept in OpenSearch: its blocks (indexer/retrieval/lexicon.py) as stored binary fields of
the statistics document, one per word length, sealed by their digests.

A list of [word, df] pairs in the statistics' JSON was 15.6 MB for a million words: 0.17 s for the node to
send, seconds for Python to parse into a million strings and a dict, and filtering it out of `_source`
made it worse (the node parses the whole array: 0.6-3.3 s). Here the statistics' `words` is a summary
(how many words, the alphabet, and per length the SHA-256 of its block), sealed with the rest of the
statistics (sealing.seal); each block is the binary field `lexicon.<length in bytes>`, stored but left
out of `_source` (mappings/laws.json), and read with `stored_fields` only when a question reaches that
length: 9 MB of stored fields came back in 37 ms where the same in `_source` took 0.3 s. A block read is
checked against its sealed digest before it is used.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

from indexer.retrieval.lexicon import Block, Lexicon, digest

# The statistics document's object of stored binary fields, one per word length: `lexicon.8`.
FIELD = "lexicon"


class AlteredBlock(ValueError):
    """A block read back does not match the digest it was sealed with."""


def stored(lexicon: Lexicon) -> tuple[dict[str, Any], dict[str, str]]:
    """(the summary sealed with the statistics, the blocks as base64 for the document's `lexicon` object)."""
    blocks: dict[str, str] = {}
    digests: dict[str, str] = {}
    for length in sorted(lexicon.lengths):
        block = lexicon.block(length)
        assert block is not None
        raw = block.to_bytes()
        blocks[str(length)] = base64.b64encode(raw).decode("ascii")
        digests[str(length)] = digest(raw)
    return {"size": lexicon.size, "alphabet": lexicon.alphabet, "blocks": digests}, blocks


def field(length: int) -> str:
    """The stored field of the block of words of `length` bytes."""
    return f"{FIELD}.{length}"


def read(summary: Mapping[str, Any], fetch: Callable[[list[str]], Mapping[str, Any]]) -> Lexicon:
    """The lexicon a sealed summary describes, its blocks read on first use by `fetch(fields)`, which
    returns the `fields` of a get with `stored_fields` (each a list of one base64 value). A block missing
    or not matching its digest is AlteredBlock; a summary of the wrong shape is KeyError, TypeError or
    ValueError, as for the rest of the statistics."""
    digests = {int(length): str(value) for length, value in summary["blocks"].items()}
    if any(length < 1 for length in digests):
        raise ValueError("a block of words of no length")

    def blocks(lengths: list[int]) -> dict[int, Block]:
        found = fetch([field(length) for length in lengths])
        made = {}
        for length in lengths:
            values = found.get(field(length))
            if not isinstance(values, list) or len(values) != 1 or not isinstance(values[0], str):
                raise AlteredBlock(f"the words of {length} letters are missing")
            raw = base64.b64decode(values[0], validate=True)
            if digest(raw) != digests[length]:
                raise AlteredBlock(f"the words of {length} letters were altered: their digest does not match")
            made[length] = Block.of_bytes(length, raw)
        return made

    return Lexicon({}, size=int(summary["size"]), alphabet=str(summary["alphabet"]), lengths=digests, fetch=blocks)


def whole(summary: Any, fetch: Callable[[list[str]], Mapping[str, Any]]) -> bool:
    """True when every block a sealed summary names is there and matches its digest."""
    try:
        read(summary, fetch).read_all()
    except (AlteredBlock, KeyError, TypeError, ValueError, AttributeError):
        return False
    return True
