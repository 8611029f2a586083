"""The analyzer's Python twin: `words()` of spec/retrieve.md, exactly.

mappings/laws.json builds the same analysis in OpenSearch from stock parts; the integration tests hold
the two equal on every law of every corpus and on generated Unicode.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from indexer.corpus import Law

# Words that say nothing about which law is meant. "park" and "far" stay: in a question about road
# law they are the whole question. The spec's list, in the spec's order.
# The spec's own string, so that the two can be compared by eye.
_SPEC_STOP = (
    "a an and are as at be by can could do does for from how i if in is it its me my of on or should so "
    "that the their them there this to was what when where which who why will with would you your"
)
STOP = frozenset(_SPEC_STOP.split(" "))

_TOKEN = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The meaningful words of `text`: lowercased runs of [a-z0-9], stopwords dropped, plurals cut."""
    # str.lower() is JavaScript's toLowerCase() here: both apply Unicode's full case mapping, so "İ"
    # becomes "i" + U+0307 (a word break after the i) and Kelvin's "K" becomes "k" in both.
    return [
        # "hydrants" must find "hydrant"; "bus" must not become "bu".
        word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        for word in _TOKEN.findall(text.lower())
        if word not in STOP
    ]


def ranked(law: Law) -> bool:
    """True for a law ranked by words: every kind but `process`, the rows of the state's own pages."""
    # Every page row carries its family's question, and five of them a family would fill the
    # shortlist for any question that shares words with it. A page row is reached by its family.
    return law.kind != "process"


def ranked_text(law: Law) -> str:
    """The text a ranked law is found by: its law, its question and its concept, as the spec joins them."""
    return f"{law.law} {law.question} {law.concept.replace('-', ' ')}"
