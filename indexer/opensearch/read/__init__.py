"""Answering from a cluster: `ask` and its statistics, OpenSearch's clause and window limits, `status`, and
meaning from vectors. Above `cluster/` and `trust/`; writes nothing."""
