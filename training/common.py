"""What the steps share: WordLlama's tokenizer and table (lawindex's embedder), the road-law texts the
table is trained on, and the mean-of-rows vector as training computes it (float32; lawindex's exact float64
sum and grid are for measuring, bench.py)."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import numpy as np

MAIN = Path(os.environ.get("LAWINDEX_MAIN", Path(__file__).resolve().parents[1]))
OUT = Path(os.environ.get("EMBED_OUT", Path(__file__).resolve().parent / "out"))
TRAINDATA = Path(os.environ.get("TRAINDATA", Path(__file__).resolve().parent / "data"))
SPACE = "\u2581"
# traindata topics kept out of training, to measure on (chosen by name before looking at any figure)
DEV_TOPICS = ("fees", "u_turns", "work_zones", "older_drivers_medical")


def wordllama():  # type: ignore[no-untyped-def]
    """lawindex's embedder with WordLlama's own l2_supercat 256 table (the starting point of training): its `tokens`
    and `_matrix` are the definition."""
    from indexer.retrieval.embedding import WORDLLAMA, StaticEmbedder, wordllama_files

    return StaticEmbedder(wordllama_files()[1], WORDLLAMA)


def token_texts(embedder) -> list[str]:  # type: ignore[no-untyped-def]
    """Each of the 32,000 WordLlama tokens as plain text: `▁` a space (stripped), a byte token its
    character where it is printable ASCII, otherwise empty."""
    tok = embedder._tokenizer
    out = []
    for i in range(embedder._matrix.shape[0]):
        piece = tok.id_to_token(i) or ""
        if piece.startswith("<0x") and piece.endswith(">") and len(piece) == 6:
            code = int(piece[3:5], 16)
            piece = chr(code) if 33 <= code < 127 else ""
        elif piece in ("<s>", "</s>", "<unk>"):
            piece = ""
        out.append(piece.replace(SPACE, " ").strip())
    return out


def corpus_rows() -> list[dict]:  # type: ignore[type-arg]
    """Every row of the sample states and of eval/corpora/OH.jsonl (their texts only: no judgement is read; not
    CO or FL, which are held out)."""
    rows = []
    paths = [*sorted(glob.glob(str(MAIN / "corpora/*.jsonl"))), str(MAIN / "eval/corpora/OH.jsonl")]
    for path in paths:
        rows.extend(json.loads(line) for line in Path(path).read_text().splitlines() if line.strip())
    return rows


def row_text(row: dict) -> str:  # type: ignore[type-arg]
    return f"{row['law']} {row['question']} {row['concept'].replace('-', ' ')}"


def traindata(dev: bool = False) -> list[dict]:  # type: ignore[type-arg]
    """The learner-question/passage pairs (`{"passage", "kind", "questions"}`), training topics or dev topics."""
    out = []
    for path in sorted(TRAINDATA.glob("*.jsonl")):
        if (path.stem in DEV_TOPICS) != dev:
            continue
        for line in Path(path).read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                item["topic"] = path.stem
                out.append(item)
    return out


def pooled(matrix: np.ndarray, ids: list[list[int]]) -> np.ndarray:
    """Unit mean-of-rows vectors (float32) of texts given as token ids."""
    out = np.zeros((len(ids), matrix.shape[1]), dtype=np.float32)
    for n, one in enumerate(ids):
        if one:
            out[n] = matrix[one].mean(0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


def scaled(matrix: np.ndarray) -> np.ndarray:
    """The table scaled so its largest value is 8 (a float16 table then sums exactly in any order for 2^53 /
    2^27 tokens, as WordLlama's: embedding.exact_terms), as float16 values in float32. A common scale does not
    change a normalised mean."""
    matrix = matrix * (8.0 / float(np.abs(matrix).max()))
    return matrix.astype(np.float16).astype(np.float32)
