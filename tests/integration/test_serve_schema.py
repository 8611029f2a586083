"""schemathesis against `lawindex serve`'s own OpenAPI: every endpoint, generated requests; no 5xx, and every
response (its status, content type, headers and body) as the schema says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from indexer.retrieval.request import contract
from tests.integration.serving import running
from tests.integration.support import drop_namespace, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


@pytest.fixture(scope="module")
def api_schema(opensearch_url: str) -> Iterator[Any]:
    namespace = unique_namespace()
    connection = Connection.from_env(opensearch_url, namespace=namespace)
    load(connection, read_corpora(CORPORA, ["MD", "PA"]))
    try:
        with running({"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": namespace}, ready="/readyz") as service:
            yield schemathesis.openapi.from_url(service.url + "/openapi.json")
    finally:
        drop_namespace(connection.client(), namespace)


# Generated requests an endpoint: enough to reach each parameter's edges, few enough to run in seconds.
EXAMPLES = 40


def _expressible(case: Any) -> bool:
    """False for the rules of the ask's parameters that OpenAPI cannot state, being across two of them (each a 400
    naming the parameter, contract/request.json): words_weight and meaning_weight not both 0 (each alone may be
    0), and a parameter only some ways take (the fusion's, hybrid's alone) given with another way; and a question's
    own `vector`, whose length must be the state's index's dimension (a rule across the parameter and the index;
    on GET a JSON array in a string). Its refusals are test_own_vectors' (every one a 400 naming `vector`)."""
    body = case.body if isinstance(case.body, dict) else {}
    query = {**(case.query or {}), **body}  # the GET's parameters, or the batch body's
    if query.get("words_weight") == 0 and query.get("meaning_weight") == 0:
        return False
    if query.get("vector") is not None:
        return False
    rules = contract()["parameters"]
    way = query.get("by", contract()["default_way"])
    return all(way in rules[name]["ways"] for name, value in query.items() if name in rules and value is not None)


def test_every_endpoint_keeps_to_its_schema(api_schema: Any) -> None:
    # The operations one by one through Hypothesis (schemathesis' pytest plugin does not load under pytest 9).
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) == 8  # laws by path and by ?id=
    for operation in operations:

        @given(case=operation.as_strategy().filter(_expressible))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        def keeps_to_it(case: Any) -> None:
            case.call_and_validate()

        keeps_to_it()
