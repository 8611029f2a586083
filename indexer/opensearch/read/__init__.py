"""Answering from a cluster: `ask` and its statistics, OpenSearch's clause and window limits, `status`, and
meaning from vectors. Above `cluster/` and `trust/`; writes nothing."""

# The modules other packages import; statistics, search_limits, searching and lookups are the engine's own.
__all__ = ["engine", "query", "status", "vectors"]
