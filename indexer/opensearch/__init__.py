"""The OpenSearch side: the connection, the index's names, schema and body, loading a state, the indices
lawindex owns (the seal, the lock, the alias swap), the windowed ask and its limits, and verify. Built on
`indexer.retrieval`; knows nothing of how a node is started (`indexer.node.node`)."""
