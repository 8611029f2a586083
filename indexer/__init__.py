"""lawindex: each US state's road laws in OpenSearch, ranked by BM25 exactly as spec/retrieve.md ranks them."""

__version__ = "0.1.0"

__all__ = ["__version__"]
