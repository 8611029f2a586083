"""A good law as a corpus line, and the same line with fields changed or dropped: what the corpus and
bad-input tests build their files from."""

from __future__ import annotations

import json

GOOD = {
    "id": "TX-1",
    "kind": "statute",
    "law": "Do not park within 15 feet of a fire hydrant.",
    "question": "How far from a hydrant can I park?",
    "concept": "parking-fire-hydrant",
}

# A field given this value is left out of the line (None is a value: JSON null).
DROP = object()


def row(**changes: object) -> str:
    """GOOD with `changes`, as one JSON line (no line end); a field set to DROP is left out."""
    return json.dumps({key: value for key, value in {**GOOD, **changes}.items() if value is not DROP})
