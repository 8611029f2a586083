"""What says an index is lawindex's own and unchanged: the ownership marker, the seal on the statistics, the
digests of the laws and vectors. Above `cluster/`; read and write both ask it."""

__all__ = ["integrity", "ownership", "sealing"]
