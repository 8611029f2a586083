"""Answering from a cluster: `ask` and its statistics, OpenSearch's clause and window limits, `status`, and
meaning from vectors. Above `cluster/` and `trust/`; writes nothing."""

# The modules other packages import; statistics and search_limits are query's own.
__all__ = ["query", "status", "vectors"]
