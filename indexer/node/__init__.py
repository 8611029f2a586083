"""A local OpenSearch node for development and tests: the pinned distribution, the images, Docker, a
cluster of several nodes, the security plugin's certificates and users. Above `indexer.opensearch`, whose
names it uses for what it starts and secures (the versions a node may run, the plugins every node has, the
lock index's name); it asks a server nothing but its health and its plugins."""

# The modules the layers above call (the CLI and the service); the rest are this package's own.
__all__ = ["image", "java", "node", "plugin", "upgrade"]
