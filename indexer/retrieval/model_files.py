"""Where the embedder's files are: the shipped table (models/ in a checkout, _data/models in a wheel) and the
`wordllama` wheel's tokenizer and weights. Standard library only, so that a node's start can put them in the
plugin's jar before numpy is installed (scripts/demo starts the node while pip installs the rest: issue 48.5);
indexer.retrieval.embedding reads them."""

from __future__ import annotations

from pathlib import Path

DIMENSION = 256  # indexer.retrieval.embedding's (a test holds them equal)
MODEL = f"lawindex-road-{DIMENSION}"
WORDLLAMA = f"wordllama-l2_supercat-{DIMENSION}"
_TABLE = f"{MODEL}.safetensors"


def shipped_table() -> Path:
    """The default embedder's table: models/lawindex-road-256.safetensors, else the wheel's copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "models" / _TABLE, here / "_data" / "models" / _TABLE):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"models/{_TABLE} (the default embedder's table) not found next to the indexer package")


def wordllama_files() -> tuple[Path, Path]:
    """The `wordllama` wheel's tokenizer (a Hugging Face tokenizer.json) and its l2_supercat 256-d weights.

    Found, not imported: wordllama's import configures the root logger (`logging.basicConfig(level=INFO)`, which
    printed every opensearch-py request of a `lawindex ask`) and costs 0.3 s."""
    import importlib.util

    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the wordllama package is not installed (pip install wordllama)")
    folder = Path(spec.origin).resolve().parent
    return (
        folder / "tokenizers" / "l2_supercat_tokenizer_config.json",
        folder / "weights" / f"l2_supercat_{DIMENSION}.safetensors",
    )


