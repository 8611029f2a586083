"""A user's own vectors (docs/meaning.md, "Your own vectors"): a state whose every row carries its `vector` (read and
checked by indexer.retrieval.corpus) is ranked by meaning with those, not the road table's, and its questions are
asked with their own vectors (`Request.vector`), which the same user's embedder made.

As an embedder (indexer.retrieval.embedding.Embedder) the rows' vectors are model `external`, version a digest of
every row's numbers as given (a changed vector is a new index), their dimension the rows', and `questions_on_node`
False: neither lawindex nor its plugin can embed a question into that space. A row's vector is put on the grid by
the rule a text's sums are (`embedding.given_grid`, `normalised`), so it is ranked exactly like a built-in vector,
sealed like one, and cosines stay exact in any order of addition (a product of two grid components is a whole
number of 2^-40 of magnitude at most 1, and a sum of 4,096 of them stays below 2^53 units).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from indexer.errors import BadInput
from indexer.retrieval.embedding import Vectors, normalised
from indexer.retrieval.request import refusal

EXTERNAL = "external"


@dataclass(frozen=True, eq=False)
class OwnVectors:
    """The rows' own vectors of one state (float64, one row a law, as given), as an Embedder of no text."""

    given: npt.NDArray[np.float64] = field(repr=False)

    @property
    def model(self) -> str:
        return EXTERNAL

    @property
    def version(self) -> str:
        """The SHA-256 (first 16 hex digits) of every row's numbers, little-endian float64, row after row."""
        return hashlib.sha256(self.given.astype("<f8").tobytes()).hexdigest()[:16]

    @property
    def dimension(self) -> int:
        return int(self.given.shape[1])

    @property
    def questions_on_node(self) -> bool:
        return False

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Never: the user's embedder made these vectors, and only it can embed a text into their space."""
        raise needs_vector("this state")

    def grid(self) -> Vectors:
        """Every row's vector on the grid, in corpus order (`normalised`, as a text's sums)."""
        return normalised(self.given)


def needs_vector(where: str, model: str = EXTERNAL) -> BadInput:
    """The refusal of a question asked by meaning of a state whose vectors lawindex cannot make a question's of."""
    error = refusal("vector_needed", index=where, model=model)
    return BadInput(
        error.message,
        hint="its rows' vectors came from your own embedder: embed the question with it and ask with"
        " `--vector-from FILE` (a JSON array of numbers), or `vector` in serve's JSON or the plugin's query",
    )
