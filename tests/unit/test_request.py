"""indexer.retrieval.request: a question as one value, checked once by contract/request.json's rules (the ways, each
way's parameters, their ranges, defaults and messages), on the CLI and serve alike; and the rule of a question with
nothing to embed."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from indexer.errors import BadInput
from indexer.opensearch.cluster.connection import Connection
from indexer.retrieval import request
from indexer.retrieval.request import FUSION, Fusion, Request, Way, has_meaning, js_number
from indexer.service.engines import ReferenceEngine

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = json.loads((ROOT / "contract" / "request.json").read_text(encoding="utf-8"))
CORPORA = ROOT / "corpora"


def test_the_ways_and_the_fusion_are_the_contracts() -> None:
    assert [way.value for way in Way] == CONTRACT["ways"]
    assert request.DEFAULT_WAY.value == CONTRACT["default_way"]
    parameters = CONTRACT["parameters"]
    assert list(FUSION) == [name for name, rule in parameters.items() if rule["ways"] == ["hybrid"]]
    assert [field.name for field in dataclasses.fields(Fusion)] == list(FUSION)
    assert Fusion().parameters() == {name: parameters[name]["default"] for name in FUSION}
    assert (parameters["limit"]["default"], parameters["limit"]["max"]) == (request.RETRIEVED_LAWS, request.MAX_LIMIT)
    assert parameters["question"]["max_chars"] == request.MAX_QUESTION_CHARS
    assert (request.WEIGHT_MIN, request.WEIGHT_MAX) == (1e-6, 1e6)


def test_the_wheel_packages_the_contract_where_the_module_looks() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    included = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert included["contract"] == "indexer/retrieval/_data/contract"
    assert request._PLACES[1] == ROOT / "indexer" / "retrieval" / "_data" / "contract" / "request.json"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"by": "nosuch"}, "by: the way must be words, meaning or hybrid, not nosuch"),
        ({"by": "meaning", "rrf_k": 5}, "rrf_k: only hybrid takes it, not by meaning"),
        ({"rrf_k": 5}, "rrf_k: only hybrid takes it, not by words"),
        ({"by": "words", "meaning_weight": 4.0}, "meaning_weight: only hybrid takes it, not by words"),
        ({"limit": 0}, "limit: must be an integer from 1 to 100, not 0"),
        ({"limit": 101}, "limit: must be an integer from 1 to 100, not 101"),
        ({"limit": True}, "limit: must be an integer from 1 to 100, not True"),
        ({"by": "hybrid", "rrf_k": 10_001}, "rrf_k: must be an integer from 1 to 10000, not 10001"),
        ({"by": "hybrid", "rrf_k": 2.5}, "rrf_k: must be an integer from 1 to 10000, not 2.5"),
        (
            {"by": "hybrid", "words_weight": 1e40},
            "words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not 1e+40",
        ),
        (
            {"by": "hybrid", "meaning_weight": 5e-7},
            "meaning_weight: a weight must be 0 or a number from 0.000001 to 1000000, not 5e-7",
        ),
        (
            {"by": "hybrid", "meaning_weight": math.nan},
            "meaning_weight: a weight must be 0 or a number from 0.000001 to 1000000, not NaN",
        ),
        (
            {"by": "hybrid", "words_weight": -1.0},
            "words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not -1",
        ),
        (
            {"by": "hybrid", "words_weight": 0, "meaning_weight": 0.0},
            "words_weight, meaning_weight: the two weights cannot both be 0",
        ),
    ],
)
def test_a_parameter_out_of_range_or_not_for_its_way_is_refused_with_the_contracts_message(
    given: dict[str, object], message: str
) -> None:
    with pytest.raises(BadInput) as refused:
        Request.of("TX", "fire hydrant", given)
    assert refused.value.message == message
    assert refused.value.exit_code == 2


def test_a_question_too_long_is_refused_and_the_edges_pass() -> None:
    with pytest.raises(BadInput, match=r"^question: 2001 characters, more than the 2000 accepted$"):
        Request("TX", "x" * 2001)
    Request("TX", "x" * 2000)
    asked = Request.of("TX", "q", {"by": "hybrid", "rrf_k": 10_000, "words_weight": 0, "meaning_weight": 1e6})
    assert asked.fusion == Fusion(10_000, 0.0, 1e6)
    assert Request.of("TX", "q", {"by": "hybrid", "limit": None, "rrf_k": None}).fusion == Fusion()
    assert Request.of("TX", "q").answer_fields() == {"by": "words"}
    assert Request.of("TX", "q", {"by": "hybrid", "rrf_k": 7}).answer_fields() == {
        "by": "hybrid",
        "rrf_k": 7,
        "weights": (1.0, 4.0),
    }


def test_a_request_built_directly_cannot_carry_a_fusion_its_way_does_not_take() -> None:
    with pytest.raises(BadInput, match=r"^words_weight: only hybrid takes it, not by meaning$"):
        Request("TX", "q", Way.meaning, 8, Fusion(5, 2.0, 4.0))
    with pytest.raises(BadInput, match=r"^by: the way must be"):
        Request("TX", "q", "sideways")  # type: ignore[arg-type]
    assert Request("TX", "q", "meaning").way is Way.meaning  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "written"),
    [(1e-6, "0.000001"), (1e6, "1000000"), (1e40, "1e+40"), (5, "5"), (-3.0, "-3"), (1.5e-7, "1.5e-7"),
     (1e21, "1e+21"), (1e20, "100000000000000000000"), (123.456, "123.456"), (0.0, "0"), (2.5e300, "2.5e+300"),
     (math.inf, "Infinity"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308")],
)  # fmt: skip
def test_a_number_in_a_message_is_written_as_javascript_writes_it(value: float, written: str) -> None:
    assert js_number(value) == written


@pytest.mark.parametrize(
    "question", ["", " ", "   ", "\t\n", "?!", "...", "\x00\x07", "¿¡", "—", "\u200b", "🙂", "é", "日本", "٣", "ß"]
)
def test_a_question_with_no_letter_or_digit_has_nothing_to_embed_and_reaches_no_row(question: str) -> None:
    assert not has_meaning(question)
    engine = ReferenceEngine(CORPORA)
    for way in (Way.meaning, Way.hybrid):
        answer = engine.ask(Request("TX", question, way))
        assert answer.hits == [] and answer.reached == []


@pytest.mark.parametrize("question", ["a", "5", " x ", "?a", "¿qué?", "İ", "\u212a", "Z9"])
def test_a_letter_or_a_digit_is_something_to_embed(question: str) -> None:
    assert has_meaning(question)


def test_the_cli_refuses_a_parameter_its_way_does_not_take_with_the_contracts_message() -> None:
    from indexer.cli import app

    runner = CliRunner()
    base = ["ask", "TX", "fire hydrant", "--engine", "reference", "--corpora", str(CORPORA)]
    refused = runner.invoke(app, [*base, "--by", "meaning", "--rrf-k", "5"])
    assert refused.exit_code == 2
    assert "error: rrf_k: only hybrid takes it, not by meaning" in refused.output
    refused = runner.invoke(app, [*base, "--by", "hybrid", "--words-weight", "1e40"])
    assert refused.exit_code == 2
    assert "words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not 1e+40" in refused.output
    answered = runner.invoke(app, [*base, "--by", "hybrid", "--rrf-k", "20", "--words-weight", "2", "--json"])
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.output)["rrf_k"] == 20


def test_serve_refuses_a_parameter_its_way_does_not_take_before_asking_the_cluster() -> None:
    from indexer.service.routes import create_app

    # Nothing listens on the discard port: each of these is refused before any request to a cluster.
    client = TestClient(create_app(Connection(url="http://127.0.0.1:9")))
    for params, message in (
        ({"by": "meaning", "rrf_k": "5"}, "rrf_k: only hybrid takes it, not by meaning"),
        ({"rrf_k": "5"}, "rrf_k: only hybrid takes it, not by words"),
        ({"by": "hybrid", "words_weight": "1e40"}, "words_weight: a weight must be 0 or a number from 0.000001 to"),
        ({"by": "hybrid", "rrf_k": "x"}, "rrf_k: must be an integer from 1 to 10000, not x"),
        ({"by": "sideways"}, "by: the way must be words, meaning or hybrid, not sideways"),
        ({"limit": "0"}, "limit: must be an integer from 1 to 100, not 0"),
    ):
        got = client.get("/v1/states/TX/ask", params={"q": "fire hydrant", **params})
        assert got.status_code == 400 and got.json()["error"].startswith(message), (params, got.text)
    batch = client.post("/v1/states/TX/ask", json={"questions": ["fire hydrant"], "by": "meaning", "rrf_k": 5})
    assert batch.status_code == 400 and batch.json()["error"] == "rrf_k: only hybrid takes it, not by meaning"
    schema = client.get("/openapi.json").json()
    listed = {one["name"] for one in schema["paths"]["/v1/states/{state}/ask"]["get"]["parameters"]}
    assert {"q", "explain", "limit", "by", *FUSION} <= listed


def test_the_typescript_clients_contract_is_contract_request_json() -> None:
    # src/contract.ts is generated by scripts/contract (a package installed from dist/ has no repository to read).
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "contract"), "--check"], check=False)
    assert done.returncode == 0, "clients/typescript/src/contract.ts is stale: run scripts/contract"


def test_every_path_is_held_to_the_same_cases() -> None:
    # clients/typescript/test/request-cases.json: the TypeScript client's test/request.test.ts holds its own
    # checks to the same questions and messages (and the plugin's tests may read it too).
    cases = json.loads((ROOT / "clients" / "typescript" / "test" / "request-cases.json").read_text(encoding="utf-8"))
    assert len(cases) >= 20 and sum(one["refused"] is None for one in cases) >= 5
    for one in cases:
        question = one["question"]
        text = question if isinstance(question, str) else question["repeat"] * question["times"]
        try:
            Request.of("TX", text, one["given"])
        except BadInput as refused:
            assert refused.message == one["refused"], one["given"]
        else:
            assert one["refused"] is None, one["given"]
