"""The window path (k-NN's `knn_score` script over a graph-free `knn_vector`, re-scored exactly and proven:
read/vectors.py) with vectors that are not the road table's: a state whose rows carry their own vectors (model
`external`, each question asked with its own vector) and states embedded by all-MiniLM-L6-v2 (the client embeds
each question and sends its vector). test_own_vectors and test_minilm_path hold both on the lawindex plugin's path;
here they are loaded `--no-plugin` (Lucene's BM25 and the window path: what a cluster with k-NN and without the
lawindex plugin gets) on the session's node, which must have k-NN (scripts/test starts its pins with `--knn`;
without it this file fails, never skips).

Every answer, by meaning and hybrid, is the reference engine's (indexer.retrieval.meaning, in process, with the
same vectors or the same embedder): the same laws in the same order, with the same scores and ranks, through the
library (OpenSearchEngine) and `lawindex ask --json` (a file of questions with `--from`, a question's own vector
with `--vector-from`). The questions: the samples' (eval/questions.jsonl) and hostile ones (empty, no [a-z0-9]
after lowercasing, stopwords only, letters that lowercase to ASCII, 2,000 characters); the states: PA's sample rows
with 48-dimension vectors made here, and a generated state of 400 rows wide enough that the first windows (16 by
meaning, 64 for hybrid) must widen, with a block of 40 rows of nearly one direction (exact ties, broken by corpus
order, and cosines apart by less than k-NN's float32 scores can tell, so that the first windows leave out rows of
the exact first: a proof without its float32 slack answers wrongly there). A vector of the wrong length, or none
where the rows' are the user's, is refused naming `vector`, as the reference refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from indexer.errors import BadInput
from indexer.node import knn
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.read.status import status
from indexer.opensearch.read.vectors import VECTOR_FIELD
from indexer.retrieval import meaning
from indexer.retrieval.answers import Answer, answer_json
from indexer.retrieval.corpus import Corpus, read_corpus
from indexer.retrieval.embedders import MINILM, named
from indexer.retrieval.embedding import Embedder
from indexer.retrieval.request import MAX_QUESTION_CHARS, Request
from tests import synthetic
from tests.integration.support import drop_namespace, lawindex, unique_namespace
from tests.integration.test_own_vectors import DIMENSION, numbers, own_state

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
SAMPLES = [json.loads(line) for line in (ROOT / "eval" / "questions.jsonl").read_text().splitlines() if line.strip()]
MINILM_STATES = ("AL", "TX", "VT")  # three of the samples: each load embeds its rows, and so does the reference
GENERATED = 400
TIED = range(100, 140)  # the generated state's rows of one direction (the same vector, some of it scaled)
TIE_SEED = 77
# About a grid unit of a unit vector (2^-20), in numbers(TIE_SEED)'s scale (its length is about 4).
NUDGE = 4e-6
LONG = ("where can i park near a fire hydrant at night " * 50)[:MAX_QUESTION_CHARS]
# Questions a window path could part from the reference on: nothing at all; nothing of [a-z0-9] after lowercasing
# (fullwidth letters, Arabic-Indic digits); stopwords only; letters that lowercase to ASCII (Kelvin's K, the dotted
# I: "i" and a combining dot); a question at the length limit, and one token that long.
HOSTILE = [
    "?!",
    "ＰＡＲＫＩＮＧ ＨＹＤＲＡＮＴ ٣",
    "the of and to a",
    "\u212aEEP RIGHT İ",
    LONG,
    "x" * MAX_QUESTION_CHARS,
]


def questions_of(state: str) -> list[str]:
    return [q["question"] for q in SAMPLES if q["state"] == state] + HOSTILE


@dataclass(frozen=True)
class Loaded:
    connection: Connection
    corpora: dict[str, Corpus]
    env: dict[str, str]
    folder: Path


def generated_state(folder: Path) -> Path:
    """GU: 400 generated laws, each with its own 48-dimension vector made here; rows 100-139 of one direction
    (numbers(TIE_SEED), some of them doubled or halved: the same vector on the grid), most of them moved by about a
    grid unit (2^-20 of the unit vector) in one component: exact cosines apart by less than the float32 scores k-NN
    ranks them by can tell (Lucene then orders equal scores by document, which is not the exact order)."""
    laws = synthetic.generate_corpus("GU", GENERATED, 46)
    rows = []
    for place, law in enumerate(laws):
        vector = numbers(5000 + place)
        if place in TIED:
            vector = numbers(TIE_SEED)
            moved = place % DIMENSION
            vector[moved] += (place % 3 - 1) * NUDGE
            vector = [value * (1, 2, 0.5)[place % 5 % 3] for value in vector]
        rows.append(json.dumps({**law.model_dump(exclude_none=True), "vector": vector}))
    path = folder / "GU.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _loaded_on_the_window_path(opensearch_url: str, namespace: str, *args: str) -> dict[str, str]:
    """`lawindex load --no-plugin ARGS` in `namespace`, as a cluster without the lawindex plugin is loaded: its env."""
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}
    code, out, err = lawindex("load", *args, "--no-plugin", env=env)
    assert code == 0, out + err
    return env


@pytest.fixture(scope="module")
def client(opensearch_url: str) -> OpenSearch:
    found = OpenSearch(hosts=[opensearch_url], timeout=120)
    if not knn.installed(found):
        pytest.fail(
            f"the node at {opensearch_url} has no k-NN plugin: the window path's meaning needs it "
            "(`lawindex opensearch start --knn`, as scripts/test starts its pins)"
        )
    return found


@pytest.fixture(scope="module")
def own(opensearch_url: str, client: OpenSearch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """PA's sample rows and the generated GU, with their own vectors, loaded for the window path."""
    folder = tmp_path_factory.mktemp("knn-own")
    corpora = {"PA": read_corpus(own_state(folder)), "GU": read_corpus(generated_state(folder))}
    namespace = unique_namespace()
    try:
        env = _loaded_on_the_window_path(opensearch_url, namespace, str(folder))
        yield Loaded(Connection.from_env(opensearch_url, namespace=namespace, timeout=120.0), corpora, env, folder)
    finally:
        drop_namespace(client, namespace)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return named(MINILM)  # BadInput (a failure, not a skip) where the extra or the wheel is missing


@pytest.fixture(scope="module")
def minilm(opensearch_url: str, client: OpenSearch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """Three sample states embedded by all-MiniLM-L6-v2, loaded for the window path."""
    namespace = unique_namespace()
    chosen = [arg for state in MINILM_STATES for arg in ("--state", state)]
    try:
        env = _loaded_on_the_window_path(opensearch_url, namespace, str(CORPORA), "--embedder", MINILM, *chosen)
        corpora = {state: read_corpus(CORPORA / f"{state}.jsonl") for state in MINILM_STATES}
        connection = Connection.from_env(opensearch_url, namespace=namespace, timeout=120.0)
        yield Loaded(connection, corpora, env, tmp_path_factory.mktemp("knn-minilm"))
    finally:
        drop_namespace(client, namespace)


def _index_of(loaded: Loaded, state: str) -> tuple[str, dict[str, Any]]:
    client = loaded.connection.client()
    index = next(iter(client.indices.get_alias(index=alias_of(state, loaded.connection.namespace))))
    return index, client.indices.get_mapping(index=index)[index]["mappings"]


def _on_the_window_path(loaded: Loaded, state: str, model: str, dimension: int) -> None:
    """The state's index is the window path's: a graph-free knn_vector of `dimension`, `model`'s, the client's
    questions; status says the window path for words and meaning."""
    mappings = _index_of(loaded, state)[1]
    field = mappings["properties"][VECTOR_FIELD]
    assert (field["type"], field["dimension"], "method" in field) == ("knn_vector", dimension, False)
    found = mappings["_meta"]["lawindex"]["meaning"]
    assert (found["model"], found["dimension"], found["questions"], found["knn"]) == (model, dimension, "client", True)
    (row,) = [row for row in status(loaded.connection) if row.state == state]
    assert (row.path, row.meaning_path) == ("window", "window"), row


def _same(got: Answer, want: Answer, *where: object) -> None:
    assert [hit.law.id for hit in got.hits] == [hit.law.id for hit in want.hits], where
    assert [hit.score for hit in got.hits] == [hit.score for hit in want.hits], where
    assert got.reached == want.reached, where


def _asked_in_lines(loaded: Loaded, state: str, questions: list[str], *args: str) -> list[dict[str, Any]]:
    """`lawindex ask STATE --from FILE --json ARGS` of `questions` (one a line): each answer's JSON."""
    asked = loaded.folder / "questions.txt"
    asked.write_text("".join(question + "\n" for question in questions), encoding="utf-8")
    code, out, err = lawindex("ask", state, "--from", str(asked), "--json", *args, env=loaded.env)
    assert code == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert len(answers) == len(questions), out
    return answers


# ---------------------------------------------------------------------------------------------------
# The rows' own vectors.


def own_reference(corpus: Corpus, by: str, question: str, vector: list[float], limit: int = 8) -> Answer:
    return meaning.answer(corpus, Request.of(corpus.state, question, {"by": by, "limit": limit, "vector": vector}))


def test_own_vectors_are_on_the_window_path(own: Loaded) -> None:
    for state in own.corpora:
        _on_the_window_path(own, state, "external", DIMENSION)


@pytest.mark.parametrize("by", ["meaning", "hybrid"])
def test_own_vectors_rank_as_the_reference_through_the_library(own: Loaded, by: str) -> None:
    engine = OpenSearchEngine(own.connection)
    asked = 0
    pa, gu = own.corpora["PA"], own.corpora["GU"]
    # PA: the samples' questions and the hostile ones, each with a vector of its own; GU: generated questions.
    cases = [("PA", question, numbers(seed)) for seed, question in enumerate([*questions_of("PA"), ""])]
    cases += [
        ("GU", question, numbers(100 + seed))
        for seed, question in enumerate(synthetic.generate_questions(gu.laws, 6, 3))
    ]
    for number, (state, question, vector) in enumerate(cases):
        for limit in (1, 8, 100) if number % 4 == 0 else (8,):
            want = own_reference(own.corpora[state], by, question, vector, limit)
            assert want.hits, (state, question)  # a vector reaches every row by meaning, whatever the text
            got = engine.ask(Request.of(state, question, {"by": by, "limit": limit, "vector": vector}))
            _same(got, want, state, by, question[:40], limit)
            asked += 1
    # GU's near tie: the rows' direction (the first windows hold rows k-NN's float32 scores cannot order, and
    # leave out some of the exact first), and its opposite (the tie last).
    tie = numbers(TIE_SEED)
    for vector in (tie, [-value for value in tie]):
        for limit in (1, 4, 8, 40, 41, 100):
            want = own_reference(gu, by, "permit hours", vector, limit)
            got = engine.ask(Request.of("GU", "permit hours", {"by": by, "limit": limit, "vector": vector}))
            _same(got, want, "GU", by, limit, vector[0])
            asked += 1
    assert asked == len(cases) + 2 * ((len(cases) + 3) // 4) + 12 and len(pa.laws) < 64 < len(gu.laws)
    # The near tie is there: the generated state's 40 rows of (nearly) one direction come first by meaning.
    if by == "meaning":
        top = engine.ask(Request.of("GU", "q", {"by": by, "limit": 41, "vector": tie}))
        assert {hit.order for hit in top.hits[:40]} == set(TIED) and top.hits[40].order not in TIED


@pytest.mark.parametrize("by", ["meaning", "hybrid"])
def test_own_vectors_rank_as_the_reference_through_ask_json(own: Loaded, by: str) -> None:
    checked = 0
    path = own.folder / "vector.json"
    # GU (400 rows, hybrid's windows widen): four of the samples' questions and the hostile ones.
    for state, vector, limit in (("PA", numbers(11), "8"), ("GU", numbers(TIE_SEED), "20")):
        questions = questions_of("PA") if state == "PA" else questions_of("PA")[-len(HOSTILE) - 4 :]
        path.write_text(json.dumps(vector))
        got = _asked_in_lines(own, state, questions, "--by", by, "--vector-from", str(path), "--limit", limit)
        for question, answer in zip(questions, got, strict=True):
            want = own_reference(own.corpora[state], by, question, vector, int(limit))
            assert answer == json.loads(answer_json(want)), (state, by, question[:40])
            checked += 1
    # The empty question, asked alone (a line of --from is never empty): its vector is its meaning.
    code, out, err = lawindex("ask", "PA", "", "--by", by, "--json", "--vector-from", str(path), env=own.env)
    assert code == 0, err
    assert json.loads(out) == json.loads(answer_json(own_reference(own.corpora["PA"], by, "", numbers(TIE_SEED))))
    assert checked == len(questions_of("PA")) + len(HOSTILE) + 4


def test_a_vector_of_the_wrong_length_or_none_is_refused_naming_vector(own: Loaded) -> None:
    engine = OpenSearchEngine(own.connection)
    corpus = own.corpora["PA"]
    for vector, message in (
        ([0.5] * (DIMENSION - 1), f"vector: {DIMENSION - 1} numbers, and the index's vectors have {DIMENSION}"),
        ([0.5] * 256, f"vector: 256 numbers, and the index's vectors have {DIMENSION}"),
    ):
        for by in ("meaning", "hybrid"):
            with pytest.raises(BadInput) as reference_refused:
                own_reference(corpus, by, "where to park", vector)
            assert message in reference_refused.value.message
            with pytest.raises(BadInput) as refused:
                engine.ask(Request.of("PA", "where to park", {"by": by, "vector": vector}))
            assert refused.value.message == reference_refused.value.message
        path = own.folder / "wrong.json"
        path.write_text(json.dumps(vector))
        asked = ("ask", "PA", "where to park", "--by", "hybrid", "--vector-from", str(path))
        code, out, err = lawindex(*asked, env=own.env)
        assert (code, out) == (2, "") and message in err, err
    # No vector at all: lawindex cannot embed a question into the rows' space.
    with pytest.raises(BadInput, match=r"vector: .*external, which cannot embed a question here"):
        engine.ask(Request.of("PA", "where to park", {"by": "meaning"}))
    code, out, err = lawindex("ask", "PA", "where to park", "--by", "meaning", env=own.env)
    assert (code, out) == (2, "") and "vector: " in err and "--vector-from" in err, err
    # Words need no vector.
    code, out, err = lawindex("ask", "PA", "where to park", "--json", env=own.env)
    assert code == 0 and json.loads(out)["hits"], err


# ---------------------------------------------------------------------------------------------------
# all-MiniLM-L6-v2.


def minilm_questions(state: str) -> list[str]:
    """The state's sample questions and the hostile ones; the two of 2,000 characters (a sixth of a second each
    to embed, three times a question) on the first state only."""
    questions = questions_of(state)
    return questions if state == MINILM_STATES[0] else questions[:-2]


def minilm_reference(corpus: Corpus, by: str, question: str, embedder: Embedder, limit: int = 8) -> Answer:
    return meaning.answer(corpus, Request.of(corpus.state, question, {"by": by, "limit": limit}), embedder)


def test_minilm_states_are_on_the_window_path(minilm: Loaded, embedder: Embedder) -> None:
    for state in MINILM_STATES:
        _on_the_window_path(minilm, state, MINILM, embedder.dimension)
        assert _index_of(minilm, state)[1]["_meta"]["lawindex"]["meaning"]["version"] == embedder.version


@pytest.mark.parametrize("by", ["meaning", "hybrid"])
def test_minilm_ranks_as_the_reference_through_the_library_and_ask_json(
    minilm: Loaded, embedder: Embedder, by: str
) -> None:
    engine = OpenSearchEngine(minilm.connection)
    checked = 0
    for state in MINILM_STATES:
        corpus = minilm.corpora[state]
        questions = minilm_questions(state)
        answered = _asked_in_lines(minilm, state, questions, "--by", by)
        for number, (question, line) in enumerate(zip(questions, answered, strict=True)):
            want = minilm_reference(corpus, by, question, embedder)
            assert line == json.loads(answer_json(want)), (state, by, question[:40])
            _same(engine.ask(Request.of(state, question, {"by": by})), want, state, by, question[:40])
            for limit in (1, 100) if number % 8 == 0 else ():
                want = minilm_reference(corpus, by, question, embedder, limit)
                got = engine.ask(Request.of(state, question, {"by": by, "limit": limit}))
                _same(got, want, state, by, question[:40], limit)
            checked += 1
        # Nothing to embed, so near no row: the empty question and those of no [a-z0-9] after lowercasing.
        for nothing in ("", "?!", "ＰＡＲＫＩＮＧ ＨＹＤＲＡＮＴ ٣"):
            assert minilm_reference(corpus, by, nothing, embedder).hits == []
            assert engine.ask(Request.of(state, nothing, {"by": by})).hits == []
        # A question's own vector of the model's length is ranked as the reference ranks that vector.
        vector = numbers(state.encode()[0], embedder.dimension)
        want = meaning.answer(corpus, Request.of(state, "school bus", {"by": by, "vector": vector}), embedder)
        _same(engine.ask(Request.of(state, "school bus", {"by": by, "vector": vector})), want, state, by, "own")
    assert checked == sum(len(minilm_questions(state)) for state in MINILM_STATES)


def test_a_vector_of_another_length_on_a_minilm_state_is_refused_naming_vector(
    minilm: Loaded, embedder: Embedder
) -> None:
    engine = OpenSearchEngine(minilm.connection)
    message = f"vector: 256 numbers, and the index's vectors have {embedder.dimension}"
    with pytest.raises(BadInput, match=message):
        meaning.answer(
            minilm.corpora["AL"], Request.of("AL", "q", {"by": "meaning", "vector": numbers(1, 256)}), embedder
        )
    with pytest.raises(BadInput, match=message):
        engine.ask(Request.of("AL", "where can i park", {"by": "hybrid", "vector": numbers(1, 256)}))
    path = minilm.folder / "wrong.json"
    path.write_text(json.dumps(numbers(1, 256)))
    asked = ("ask", "AL", "where can i park", "--by", "meaning", "--vector-from", str(path))
    code, out, err = lawindex(*asked, env=minilm.env)
    assert (code, out) == (2, "") and message in err, err
