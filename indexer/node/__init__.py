"""A local OpenSearch node for development and tests: the pinned distribution, the images, Docker, a
cluster of several nodes, the security plugin's certificates and users. Independent of `indexer.opensearch.connection`
and `indexer.retrieval`: it starts a server, and asks it nothing but its health."""
