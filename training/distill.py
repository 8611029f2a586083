"""Step 1, route (a), model2vec-style: each WordLlama token's text through all-MiniLM-L6-v2 ([CLS] token
[SEP], mean-pooled, unit), reduced to 256 dimensions by PCA, each row weighted by SIF from the token's
frequency in road-law text (Zipf from the vocabulary's order where unseen). Writes out/distilled.npy
(float32, unweighted PCA rows), out/pca.npz (mean and components, for the teacher's sentence vectors) and
out/table_a.safetensors."""

from __future__ import annotations

import sys
import time

import common
import minilm
import numpy as np
from bench import write_table


def token_counts(embedder) -> np.ndarray:  # type: ignore[no-untyped-def]
    """How often each token occurs in the road-law texts (corpus rows and the training questions)."""
    texts = [common.row_text(r) for r in common.corpus_rows()]
    for item in common.traindata():
        texts.append(item["passage"])
        texts.extend(item["questions"])
    counts = np.zeros(embedder._matrix.shape[0], dtype=np.float64)
    for ids in embedder.tokens(texts):
        np.add.at(counts, ids, 1.0)
    return counts


def sif_weights(counts: np.ndarray, a: float = 1e-3) -> np.ndarray:
    """SIF, a / (a + p(token)): p from the road-law counts, blended with a Zipf prior by token id (the BPE's
    merge order roughly follows frequency) so that unseen tokens get a weight too."""
    n = len(counts)
    zipf = 1.0 / (np.arange(n) + 10.0)
    zipf /= zipf.sum()
    observed = counts / max(1.0, counts.sum())
    p = 0.5 * observed + 0.5 * zipf
    return a / (a + p)


def main() -> None:
    started = time.process_time()
    embedder = common.wordllama()
    texts = common.token_texts(embedder)
    tok = minilm.tokenizer()
    ids = [e.ids for e in tok.encode_batch(texts)]  # [CLS] ... [SEP]; an empty text is [CLS] [SEP]
    vectors = minilm.encode_ids(ids)
    print(f"teacher on 32,000 tokens: {time.process_time() - started:.0f} s CPU", file=sys.stderr)
    mean = vectors.mean(0)
    _, _, vt = np.linalg.svd(vectors - mean, full_matrices=False)
    components = vt[:256]
    reduced = (vectors - mean) @ components.T
    np.save(common.OUT / "distilled.npy", reduced.astype(np.float32))
    np.savez(common.OUT / "pca.npz", mean=mean, components=components)
    counts = token_counts(embedder)
    np.save(common.OUT / "counts.npy", counts)
    weights = sif_weights(counts)
    empty = np.array([not t for t in texts])
    weights[empty] = 0.0  # byte and special tokens with no text: nothing to say
    table = common.scaled(reduced * weights[:, None])
    digest = write_table(common.OUT / "table_a.safetensors", table)
    print(f"table_a {digest} ({time.process_time() - started:.0f} s CPU)", file=sys.stderr)


if __name__ == "__main__":
    main()
