"""A user's own vectors (issue 46 item 3, docs/meaning.md "Your own vectors"): a row's `vector` checked as the file is
read (file, line and field named, exit 2), a question's `vector` checked by the contract's rules, and a state whose
rows carry them ranked by them exactly, as a grid computed here, independently, ranks them."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.cli import app
from indexer.errors import BadInput, CorpusError
from indexer.retrieval import meaning
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.own_vectors import OwnVectors
from indexer.retrieval.request import Request, Way, checked_vector
from tests.unit.laws import row

ROOT = Path(__file__).resolve().parents[2]
DIMENSION = 48
OUT = "not a finite number from -1e+150 to 1e+150"
ONE_LENGTH = "every row's vector has the same length"
ALL_OR_NONE = "every row carries its vector, or none does"
ZERO = "no value is 1e-150 or more in magnitude: the zero vector is near no row"


def numbers(seed: int, count: int = DIMENSION) -> list[float]:
    """Deterministic vectors, made here (not by the code under test): whole thousandths from -1 to 1."""
    rng = random.Random(seed)
    return [rng.randint(-1000, 1000) / 1000 for _ in range(count)]


def write(tmp_path: Path, lines: list[str], name: str = "TX.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def refused(path: Path) -> CorpusError:
    with pytest.raises(CorpusError) as caught:
        read_corpus(path)
    assert caught.value.exit_code == 2
    assert str(path) in caught.value.message
    return caught.value


def test_rows_carrying_vectors_are_read_with_them(tmp_path: Path) -> None:
    given = [numbers(1), numbers(2), [1, 0, 0] + [0] * (DIMENSION - 3)]
    corpus = read_corpus(write(tmp_path, [row(id=f"TX-{n}", vector=v) for n, v in enumerate(given)]))
    assert corpus.vectors is not None
    assert corpus.vectors.tolist() == [[float(x) for x in one] for one in given]
    assert read_corpus(write(tmp_path, [row()])).vectors is None
    assert read_corpus(write(tmp_path, [row(vector=None)])).vectors is None  # null: no vector


@pytest.mark.parametrize(
    ("vectors", "line", "problem"),
    [
        ([numbers(1), numbers(2, 47)], 2, f"47 numbers, and line 1's vector has 48: {ONE_LENGTH}"),
        ([numbers(1), None], 2, f"this row has no vector and line 1's carries one: {ALL_OR_NONE}"),
        ([None, numbers(1)], 2, f"this row carries a vector and line 1's has none: {ALL_OR_NONE}"),
        ([[0] * DIMENSION], 1, ZERO),
        ([[1e-200] * DIMENSION], 1, ZERO),
        ([[0.5, "0.5"]], 1, "vector[1] is not a number"),
        ([[0.5, True]], 1, "vector[1] is not a number"),
        ([[0.5, None]], 1, "vector[1] is not a number"),
        ([[0.5, [1]]], 1, "vector[1] is not a number"),
        (["0.5"], 1, "must be an array of numbers"),
        ([{"0": 1}], 1, "must be an array of numbers"),
        ([[]], 1, "0 numbers, not from 1 to 4096"),
        ([[0.5] * 4097], 1, "4097 numbers, not from 1 to 4096"),
        ([[1e308, 1.0]], 1, f"vector[0] is 1e+308, {OUT}"),
        ([[1.0, -2e150]], 1, f"vector[1] is -2e+150, {OUT}"),
        ([[1.0, 10**400]], 1, f"vector[1] is {10**400}, {OUT}"),
    ],
)  # fmt: skip
def test_a_bad_vector_names_file_line_and_field(tmp_path: Path, vectors: list[object], line: int, problem: str) -> None:
    lines = [row(id=f"TX-{n}", vector=v) for n, v in enumerate(vectors)]
    error = refused(write(tmp_path, lines))
    assert (error.line, error.field, error.problem) == (line, "vector", problem)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_in_a_vector_name_the_field(tmp_path: Path, constant: str) -> None:
    line = row(vector=[0.5, 0.25])[:-2] + f", {constant}]}}"
    error = refused(write(tmp_path, [row(id="TX-0", vector=[0.5, 0.25, 1.0]), line]))
    assert (error.line, error.field) == (2, "vector")
    assert constant in error.message


def test_1e400_in_a_vector_is_out_of_range_not_infinity_taken(tmp_path: Path) -> None:
    line = row(vector=[0.5, 0.25])[:-2] + ", 1e400]}"
    error = refused(write(tmp_path, [line]))
    assert (error.field, error.problem) == ("vector", f"vector[2] is Infinity, {OUT}")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"vector": [1.0]}, "vector: only meaning, hybrid takes it, not by words"),
        ({"by": "meaning", "vector": [math.nan]}, f"vector: vector[0] is NaN, {OUT}"),
        ({"by": "meaning", "vector": [1.0, math.inf]}, f"vector: vector[1] is Infinity, {OUT}"),
        ({"by": "hybrid", "vector": [0.0, -0.0]}, f"vector: {ZERO}"),
        ({"by": "hybrid", "vector": "[1, 2]"}, "vector: must be an array of numbers"),
        ({"by": "meaning", "vector": [1.0] * 4097}, "vector: 4097 numbers, not from 1 to 4096"),
        ({"by": "meaning", "vector": [1.0, "x"]}, "vector: vector[1] is not a number"),
    ],
)  # fmt: skip
def test_a_questions_vector_is_checked_by_the_contract(given: dict[str, object], message: str) -> None:
    with pytest.raises(BadInput) as caught:
        Request.of("TX", "q", given)
    assert caught.value.message == message
    with pytest.raises(BadInput):
        Request("TX", "q", Way(str(given.get("by", "words"))), vector=given["vector"])  # type: ignore[arg-type]


def test_the_edges_of_a_vector_pass() -> None:
    assert checked_vector([1e150, -1e150, 1e-150]) == (1e150, -1e150, 1e-150)
    assert checked_vector([0.0] * 4095 + [1e-150]) == (0.0,) * 4095 + (1e-150,)
    assert Request.of("TX", "q", {"by": "meaning", "vector": [1, 2]}).vector == (1.0, 2.0)
    assert Request.of("TX", "", {"by": "meaning", "vector": [1, 2]}).embeddable  # the vector is its meaning


def grid(values: list[float]) -> list[int]:
    """A vector on the grid as its units (component * 2^20), computed here from the definition: the exact norm
    (math.fsum of the float64 squares, its square root), each quotient times 2^20 rounded half to even."""
    squares = [x * x for x in values]
    norm = math.sqrt(math.fsum(squares))
    return [round(x / norm * 2**20) for x in values]


def expected_meaning(rows: list[list[float]], question: list[float]) -> list[int]:
    """Every row's index by exact cosine (integer dot products of grid units), best first, ties by index."""
    asked = grid(question)
    dots = [sum(a * b for a, b in zip(grid(one), asked, strict=True)) for one in rows]
    return sorted(range(len(rows)), key=lambda index: (-dots[index], index))


def test_the_grid_of_a_huge_vector_does_not_overflow() -> None:
    from indexer.retrieval.embedding import given_grid

    values = [1e150, -1e150, 3e149] + [0.0] * 45
    units = [int(x) for x in (given_grid(values).astype("float64") * 2**20).tolist()]
    assert units == grid(values)
    assert Fraction(sum(u * u for u in units), 2**40) == pytest.approx(1.0, abs=1e-5)


def sample(tmp_path: Path, rows: int = 40) -> Path:
    laws = [json.loads(line) for line in (ROOT / "corpora" / "PA.jsonl").read_text().splitlines() if line.strip()]
    lines = [json.dumps({**law, "vector": numbers(100 + n)}) for n, law in enumerate(laws[:rows])]
    # Two rows whose vectors are equal after normalisation: a tie, broken by corpus order.
    lines.append(json.dumps({**laws[rows], "vector": [2 * x for x in numbers(100)]}))
    return write(tmp_path, lines, "PA.jsonl")


def test_a_state_of_own_vectors_is_ranked_by_them_exactly(tmp_path: Path) -> None:
    corpus = read_corpus(sample(tmp_path))
    rows = [numbers(100 + n) for n in range(40)] + [[2 * x for x in numbers(100)]]
    for seed in range(5):
        question = numbers(seed)
        asked = Request.of("PA", "where can i park", {"by": "meaning", "limit": 100, "vector": question})
        answer = meaning.answer(corpus, asked)
        assert [hit.order for hit in answer.hits] == expected_meaning(rows, question)
    # The question equal to row 0's vector: row 0 and its double tie, in corpus order, at the top.
    answer = meaning.answer(corpus, Request.of("PA", "x", {"by": "meaning", "vector": numbers(100)}))
    assert [hit.order for hit in answer.hits[:2]] == [0, 40]
    hybrid = meaning.answer(corpus, Request.of("PA", "fire hydrant", {"by": "hybrid", "vector": numbers(7)}))
    assert hybrid.hits and all(reached.meaning is not None for reached in hybrid.reached)


def test_a_state_of_own_vectors_needs_the_questions_vector_of_its_length(tmp_path: Path) -> None:
    corpus = read_corpus(sample(tmp_path))
    with pytest.raises(BadInput, match=r"^vector: PA's vectors were made by external, which cannot embed") as caught:
        meaning.answer(corpus, Request.of("PA", "fire hydrant", {"by": "meaning"}))
    assert "--vector-from" in str(caught.value.hint)
    with pytest.raises(BadInput, match=r"^vector: 47 numbers, and the index's vectors have 48$"):
        meaning.answer(corpus, Request.of("PA", "fire hydrant", {"by": "hybrid", "vector": numbers(1, 47)}))
    words = meaning.answer(corpus, Request.of("PA", "fire hydrant"))
    assert words.hits  # words need no vector


def test_own_vectors_as_an_embedder() -> None:
    import numpy as np

    given = np.array([numbers(1), numbers(2)], dtype=np.float64)
    own = OwnVectors(given)
    assert (own.model, own.dimension, own.questions_on_node) == ("external", DIMENSION, False)
    changed = given.copy()
    changed[1, 3] = np.nextafter(changed[1, 3], 2.0)
    assert own.version != OwnVectors(changed).version and len(own.version) == 16
    with pytest.raises(BadInput):
        own.embed(["a question"])
    assert [int(x) for x in (own.grid()[1].astype("float64") * 2**20).tolist()] == grid(numbers(2))


def test_ask_vector_from_a_file(tmp_path: Path) -> None:
    corpora = sample(tmp_path).parent
    question = tmp_path / "q.json"
    question.write_text(json.dumps(numbers(3)))
    runner = CliRunner()
    base = ["ask", "PA", "where can i park", "--engine", "reference", "--corpora", str(corpora), "--json"]
    done = runner.invoke(app, [*base, "--by", "meaning", "--limit", "100", "--vector-from", str(question)])
    assert done.exit_code == 0, done.output
    ids = [hit["id"] for hit in json.loads(done.stdout)["hits"]]
    corpus = read_corpus(corpora / "PA.jsonl")
    expected = expected_meaning([numbers(100 + n) for n in range(40)] + [[2 * x for x in numbers(100)]], numbers(3))
    assert ids == [corpus.laws[index].id for index in expected]
    bad = [("[1, NaN]", "not a JSON array"), ('{"a": 1}', "must be an array"), ("[1, 2]", "2 numbers")]
    for content, problem in bad:
        question.write_text(content)
        done = runner.invoke(app, [*base, "--by", "meaning", "--vector-from", str(question)])
        assert done.exit_code == 2 and problem in done.output, done.output
    done = runner.invoke(app, [*base, "--by", "meaning"])
    assert done.exit_code == 2 and "--vector-from" in done.output


def test_serve_refuses_a_bad_vector_before_asking_the_cluster() -> None:
    from fastapi.testclient import TestClient

    from indexer.opensearch.cluster.connection import Connection
    from indexer.service.routes import create_app

    # Nothing listens on the discard port: each of these is refused before any request to a cluster.
    client = TestClient(create_app(Connection(url="http://127.0.0.1:9")))
    for params, message in (
        ({"vector": "[1, 2]"}, "vector: only meaning, hybrid takes it, not by words"),
        ({"by": "meaning", "vector": "[1, NaN]"}, f"vector: vector[1] is NaN, {OUT}"),
        ({"by": "meaning", "vector": "[1e308]"}, f"vector: vector[0] is 1e+308, {OUT}"),
        ({"by": "hybrid", "vector": "1, 2"}, "vector: must be an array of numbers"),
        ({"by": "hybrid", "vector": '["1"]'}, "vector: vector[0] is not a number"),
        ({"by": "meaning", "vector": "[0, 0]"}, f"vector: {ZERO}"),
        ({"by": "meaning", "vector": json.dumps([0.5] * 4097)}, "vector: 4097 numbers, not from 1 to 4096"),
    ):
        got = client.get("/v1/states/TX/ask", params={"q": "fire hydrant", **params})
        assert got.status_code == 400 and got.json()["error"] == message, (params, got.text)
    for body, message in (
        ({"by": "meaning", "vector": [1, "x"]}, "vector: vector[1] is not a number"),
        ({"vector": [1.0]}, "vector: only meaning, hybrid takes it, not by words"),
        ({"by": "hybrid", "vector": {"a": 1}}, "vector: must be an array of numbers"),
    ):
        batch = client.post("/v1/states/TX/ask", json={"questions": ["fire hydrant"], **body})
        assert batch.status_code == 400 and batch.json()["error"] == message, (body, batch.text)
    nan = client.post(
        "/v1/states/TX/ask",
        content=b'{"questions": ["q"], "by": "meaning", "vector": [1, NaN]}',
        headers={"content-type": "application/json"},
    )
    assert nan.status_code == 400, nan.text
    schema = client.get("/openapi.json").json()
    listed = {one["name"] for one in schema["paths"]["/v1/states/{state}/ask"]["get"]["parameters"]}
    assert "vector" in listed
