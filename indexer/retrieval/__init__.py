"""Retrieval in process, with no server: the corpus (and every file a command reads) read and checked, the
spec's words and spelling, the statistics, the exact and Lucene arithmetic, the reference engine that ranks as
the spec does, and the answers it returns. Imports nothing of lawindex outside itself but `indexer.errors`, and
not opensearchpy (tests/unit/test_layers.py holds it)."""

# The modules other packages import; the other two (the logarithm, the pieces) are this package's own.
__all__ = [
    "answers",
    "bound",
    "corpus",
    "embedders",
    "embedding",
    "explain",
    "files",
    "lexicon",
    "meaning",
    "model_files",
    "own_vectors",
    "reference",
    "request",
    "scoring",
    "spelling",
    "statistics",
    "stored",
    "vector_store",
    "words",
]
