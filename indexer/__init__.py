"""lawindex: each US state's road laws in OpenSearch, ranked exactly as the spec ranks them (docs/contract.md)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
