"""Talking to a cluster: the client and its errors, the failover pool, the shape of a state's index (its fields,
its stored lexicon, the plugin's similarity), and which plugins and versions the cluster has. Imports no
other wing."""

# The modules other packages import; failover is the connection's own.
__all__ = [
    "connection",
    "fast_search",
    "plugin_path",
    "plugins",
    "reasons",
    "retried",
    "schema",
    "stored_lexicon",
    "upgrade_check",
    "vector_layout",
    "versions",
]
