"""The plugin's table of what is something to embed (plugin/src/main/java/org/lawindex/Meaningful.java) is Python's
rule on every code point: a Unicode letter or decimal digit once lowercased (indexer.retrieval.request.has_meaning
on main), from this Python's unicodedata, as plugin/scripts/make-meaningful.py writes it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_table_is_the_generators_output() -> None:
    spec = importlib.util.spec_from_file_location("make_meaningful", ROOT / "plugin" / "scripts" / "make-meaningful.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "plugin" / "src" / "main" / "java" / "org" / "lawindex" / "Meaningful.java").read_text()
    assert committed == module.source(), "run python3 plugin/scripts/make-meaningful.py"
    assert module.meaningful(ord("é")) and module.meaningful(ord("٣")) and not module.meaningful(ord("①"))
