"""The shape of a state's index: field names, document ids, the fields fetched, the term-query body.

One place for what `load` writes and `query` and `verify` read, so that neither side imports the other:
a field renamed here is renamed for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Bump when what a load writes changes shape: an index of another schema is rebuilt, not trusted.
# 3: the statistics carry every law document's digest (indexer/opensearch/trust/integrity.py); 4: in an index with
# vectors, every row's vector digest too (an index of 3 with vectors is rebuilt, never served unsealed), and
# the vocabulary in blocks per word length, stored fields beside the statistics (cluster/stored_lexicon.py).
SCHEMA = 4

# The document that carries what the query side needs of the whole state (the spec's Index, less the
# per-law parts, which ride on each law's own document). Law documents are `law:<id>`, so no law id
# can collide with it.
STATISTICS_ID = "statistics"

# What a state's alias carries: a filter that no query on the alias gets past to the statistics document, lawindex's
# own bookkeeping beside the laws (a raw client's `must_not` or `boosting` query returned it as if it were a law).
# A read by id (`GET alias/_doc/statistics`, how the query side reads it) is no query: alias filters leave it be.
ALIAS_FILTER: dict[str, Any] = {"bool": {"must_not": [{"ids": {"values": [STATISTICS_ID]}}]}}

# The ranked field: a law's law, question and concept, analysed by mappings/laws.json into words().
# A process row has none, so that Lucene counts it in neither N nor df nor the average length.
RANKED_FIELD = "words"

# The fields of a Law (indexer.retrieval.corpus.Law), stored as they are in each law's document.
LAW_FIELDS = ("id", "kind", "law", "question", "concept", "family", "source")
# What each law's document adds: its place in the corpus (ties), and what its exact score is computed
# from (its length in words and each word's count), so the query side never re-tokenizes a law.
SCORE_FIELDS = ("order", "length", "counts")
# The fields fetched with a law.
FETCHED = (*LAW_FIELDS, *SCORE_FIELDS)
# A row's vector, in an index loaded with them (indexer/opensearch/read/vectors.py): fetched by the meaning path.
VECTOR_FIELD = "vector"
# The same vector on its grid for the lawindex plugin (indexer/opensearch/read/vectors.py): binary doc values of 256
# little-endian int32, each component times 2^20, out of _source.
GRID_FIELD = "vector_grid"


def law_id(law: str) -> str:
    """The `_id` of a law's document."""
    return f"law:{law}"


def terms_query(terms: Sequence[str]) -> dict[str, Any]:
    """The query that sums the BM25 terms of `terms` on the ranked field: one `term` clause per word, so
    the learner's text never reaches a query parser."""
    return {"bool": {"should": [{"term": {RANKED_FIELD: term}} for term in terms]}}
