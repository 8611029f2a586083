"""Route (d): the question rewritten before it is embedded (rows are embedded as they are).

- `stop`: the spec's words without dropping: lowercased runs of [a-z0-9] (words.py's _TOKEN), the spec's
  stopwords (words.STOP) dropped, joined by single spaces; plurals kept as typed.
- `spell`: each lowercased [a-z0-9] run kept, except one whose spec word (plural cut, words.words) is not in
  the state's vocabulary and for which the spec's `spelled_as` finds words: it is replaced by those words
  (vocabulary order, joined by spaces): "firehydrant" -> "fire hydrant", "behing" -> "behind".
- `both`: spell, then stopwords dropped.
"""

from __future__ import annotations

import re

from indexer.retrieval.words import STOP, words

_TOKEN = re.compile(r"[a-z0-9]+")


def rewrite(text: str, vocabulary, spell: bool, stop: bool) -> str:  # type: ignore[no-untyped-def]
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if token in STOP:
            if not stop:
                out.append(token)
            continue
        if spell:
            spec = words(token)
            if spec and spec[0] not in vocabulary:
                found = vocabulary.spelled_as(spec[0])
                if found:
                    out.extend(found)
                    continue
        out.append(token)
    return " ".join(out)


def preparer(kind: str):  # type: ignore[no-untyped-def]
    spell = kind in ("spell", "both")
    stop = kind in ("stop", "both")
    return lambda text, s: rewrite(text, s.stats.spelling, spell, stop)
