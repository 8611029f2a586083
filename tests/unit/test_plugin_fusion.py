"""The plugin's fusion defaults (plugin/src/main/java/org/lawindex/Fusion.java) are lawindex's own
(contract/request.json, read by indexer/retrieval/request.py), so that a raw `lawindex` query by hybrid without
parameters answers as `lawindex ask --by hybrid` does."""

from __future__ import annotations

import re
from pathlib import Path

from indexer.retrieval import request

FUSION = Path(__file__).resolve().parents[2] / "plugin" / "src" / "main" / "java" / "org" / "lawindex" / "Fusion.java"


def _constant(name: str) -> str:
    found = re.search(rf"static final \w+ {name} = ([^;]+);", FUSION.read_text(encoding="utf-8"))
    assert found is not None, f"Fusion.java has no {name}"
    return found.group(1).replace("_", "")


def test_the_plugins_rrf_k_is_lawindexs() -> None:
    assert int(_constant("RRF_K")) == request.RRF_K


def test_the_plugins_weights_are_lawindexs() -> None:
    # docs/fusion.md: the tuned defaults live in request.py; the plugin mirrors them.
    assert float(_constant("WORDS_WEIGHT")) == request.WORDS_WEIGHT
    assert float(_constant("MEANING_WEIGHT")) == request.MEANING_WEIGHT
