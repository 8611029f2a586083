"""Retrieval by meaning and hybrid (`ask --by meaning|hybrid`), and `lawindex eval`.

- `embedding`: the embedder (WordLlama, inside its wheel, no network): a text as a unit vector on a grid;
- `rank`: the exact rankings in process (cosine by brute force, reciprocal-rank fusion), the reference;
- `knn`: the k-NN plugin, installed into a local node's home;
- `vectors`: the vectors on OpenSearch (`knn_vector`, Lucene engine), and meaning and hybrid answered there;
- `eval`: judged questions, recall@8 / MRR@8 / nDCG@8 per way (ir-measures), misses question by question.

Kept light: importing the package loads nothing (node.py imports `knn` at every `opensearch start`).
"""
