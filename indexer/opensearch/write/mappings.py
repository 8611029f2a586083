"""mappings/laws.json, the index settings and mappings: read at run time, never copied into code."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

# In a checkout the file is at the top of the repository; in a wheel it is packaged under _data, beside this.
_PLACES = (
    Path(__file__).resolve().parents[3] / "mappings" / "laws.json",
    Path(__file__).resolve().parent / "_data" / "mappings" / "laws.json",
)


@cache
def _raw() -> bytes:
    for place in _PLACES:
        if place.is_file():
            return place.read_bytes()
    raise FileNotFoundError(f"mappings/laws.json is missing (looked in {', '.join(map(str, _PLACES))})")


def laws_index() -> dict[str, Any]:
    """The body of a create-index request for one state: settings and mappings, comments dropped."""
    body: dict[str, Any] = json.loads(_raw())
    body.pop("_comment", None)
    return body


def fingerprint() -> str:
    """A hash of laws.json: an index built with other settings is rebuilt even if its corpus is unchanged."""
    return hashlib.sha256(_raw()).hexdigest()
