"""The OpenSearch side, in four wings by what they do, each importing only the wings below it:
`cluster/` (the client, its errors, the index's shape and how its rows carry vectors, which plugins and versions a
cluster has) < `trust/` (what says an index is lawindex's own and unchanged) < `read/` (ask, its statistics and
limits, status, meaning) beside `write/` (load, the lock, generations, history), neither importing the other;
`verify` stands above them. Built on `indexer.retrieval`; knows nothing of how a node is started (`indexer.node`)."""

# What the layers above import from this folder itself; each wing declares its own.
__all__ = ["verify"]
