"""The vector's one copy on the plugin's path (issue 28, item 6): an index built for the lawindex plugin keeps each
row's vector only as `vector_grid` (base64 of 256 int32 grid units, in `_source` and in doc values), and the seal
holds the digest of what that reads back as. Every row of a generated state, as the load sends it, is intact by
the seal (a state with a row that has a component the embedder makes -0.0, which the grid reads back as 0.0:
sealed as the float it was, it was refused as altered; with WordLlama's table GU-S00518 of seed 22 was one); a
grid moved by one unit, or gone, is altered. On the window path the floats are the copy, sealed as they are."""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

import numpy as np
import pytest

from indexer.opensearch.cluster.schema import GRID_FIELD, VECTOR_FIELD
from indexer.opensearch.cluster.vector_layout import Meaning
from indexer.opensearch.trust import integrity
from indexer.opensearch.write import index_body
from indexer.opensearch.write.index_body import documents
from indexer.retrieval.embedding import default_embedder, row_text
from indexer.retrieval.reference import statistics
from tests import synthetic


@cache
def _negative_zero() -> tuple[int, int]:
    """The first generated state of 800 rows (seed 22 on) with a row the embedder gives a -0.0 component (about
    one state in two has one, whatever the table), and that row's place."""
    embedder = default_embedder()
    for seed in range(22, 62):
        made = embedder.embed([row_text(law) for law in synthetic.generate_corpus("GU", 800, seed)])
        rows = np.flatnonzero((np.signbit(made) & (made == 0)).any(axis=1))
        if len(rows):
            return seed, int(rows[0])
    raise AssertionError("no generated state has a row with a -0.0 component")


def _loaded(knn: bool) -> tuple[list[dict[str, Any]], bytes, bytes]:
    laws = synthetic.generate_corpus("GU", 800, _negative_zero()[0])
    actions = list(
        documents(synthetic.corpus_of("GU", laws), statistics(laws), meaning=Meaning(default_embedder(), knn=knn))
    )
    sealed = actions[-1]["_source"]["statistics"]
    rows = actions[:-1]
    return rows, integrity.unpacked(sealed["digests"]), integrity.unpacked(sealed["vector_digests"])


def test_every_row_of_the_plugins_path_is_intact_by_its_grid_and_a_unit_moved_is_altered() -> None:
    rows, digests, vectors = _loaded(knn=False)
    for row in rows:
        source = row["_source"]
        assert isinstance(source, dict) and VECTOR_FIELD not in source and isinstance(source[GRID_FIELD], str)
        assert not integrity.altered(str(row["_id"]), source, digests, vectors), source["id"]
    # The case is exercised: the embedder gives that row a -0.0 component.
    seed, place = _negative_zero()
    (made,) = default_embedder().embed([row_text(synthetic.generate_corpus("GU", 800, seed)[place])])
    assert rows[place]["_source"]["id"] == f"GU-S{place + 1:05d}" and bool((np.signbit(made) & (made == 0)).any())
    source = dict(rows[place]["_source"])
    units = np.frombuffer(base64.b64decode(source[GRID_FIELD]), dtype="<i4").copy()
    units[7] += 1
    moved = {**source, GRID_FIELD: base64.b64encode(units.tobytes()).decode("ascii")}
    assert integrity.altered(str(rows[place]["_id"]), moved, digests, vectors)
    gone = {key: value for key, value in source.items() if key != GRID_FIELD}
    assert integrity.altered(str(rows[place]["_id"]), gone, digests, vectors)


def test_on_the_window_path_the_floats_are_sealed_and_the_grid_is_not_read() -> None:
    rows, digests, vectors = _loaded(knn=True)
    for row in rows:
        source = row["_source"]
        assert isinstance(source, dict) and isinstance(source[VECTOR_FIELD], list)
        assert not integrity.altered(str(row["_id"]), source, digests, vectors), source["id"]


@pytest.mark.parametrize("at_once", [7, 4096])  # blocks that end mid-state, and one block for the state
def test_each_rows_grid_is_its_own_vectors_and_sealed_as_it(monkeypatch: pytest.MonkeyPatch, at_once: int) -> None:
    monkeypatch.setattr(index_body, "_ROWS_AT_ONCE", at_once)
    laws = synthetic.generate_corpus("GU", 800, _negative_zero()[0])  # the state _loaded makes
    made = default_embedder().embed([row_text(law) for law in laws])
    for knn in (False, True):
        rows, digests, vectors = _loaded(knn)
        for order, row in enumerate(rows):
            source = row["_source"]
            units = np.frombuffer(base64.b64decode(source[GRID_FIELD]), dtype="<i4")
            assert units.tolist() == [round(value * 2**20) for value in made[order].tolist()], order  # by hand
            if knn:
                assert source[VECTOR_FIELD] == made[order].tolist(), order
            assert not integrity.altered(str(row["_id"]), source, digests, vectors), order
