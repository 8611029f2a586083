"""Served laws are the laws that were loaded (indexer/opensearch/trust/integrity.py), on a real OpenSearch.

A law document altered in place with `_update` (its text, or its counts) is refused by `ask`, `ask --family`
and `get` with one line naming the state, the index and the law (exit 4, DamagedIndex), never served; the
next `load` finds the index not intact and rebuilds it; `load --force` rebuilds an intact one; `verify`
names the altered laws. On an index with vectors the meaning path checks the same seal, the vectors'
digests with it: an altered vector (or law) is refused by `--by meaning` and `--by hybrid` the same way.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from opensearchpy import OpenSearch, RequestError

from indexer.errors import DamagedIndex
from indexer.node import knn
from indexer.opensearch.cluster.connection import alias_of
from indexer.opensearch.cluster.plugin_path import cluster_has_plugin
from indexer.opensearch.cluster.schema import GRID_FIELD, STATISTICS_ID, VECTOR_FIELD, law_id
from indexer.retrieval.meaning import question_vector
from tests.integration.support import drop_namespace, lawindex, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
HYDRANT = "how far from a fire hydrant can i park"
TAMPERED = "TAMPERED: school buses may be passed at any speed."


@pytest.fixture
def loaded(opensearch_url: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], Path, OpenSearch]]:
    """TX and MD loaded in a namespace of their own (a fresh one per test: each test alters an index)."""
    folder = tmp_path / "corpora"
    folder.mkdir()
    for state in ("TX", "MD"):
        shutil.copy(CORPORA / f"{state}.jsonl", folder / f"{state}.jsonl")
    env = {"OPENSEARCH_URL": opensearch_url, "LAWINDEX_NAMESPACE": unique_namespace()}
    code, _out, err = lawindex("load", str(folder), "--json", env=env)
    assert code == 0, err
    client = OpenSearch(opensearch_url)
    yield env, folder, client
    drop_namespace(client, env["LAWINDEX_NAMESPACE"])


def _alter(client: OpenSearch, env: dict[str, str], state: str, law: str, change: dict[str, object]) -> str:
    """`_update` one law's document in place, as anyone with write access could; the concrete index."""
    alias = alias_of(state, env["LAWINDEX_NAMESPACE"])
    done = client.update(index=alias, id=law_id(law), body={"doc": change}, params={"refresh": "true"})
    assert done["result"] == "updated"
    return str(done["_index"])


def _grid(vector: np.ndarray) -> str:
    """A vector as `vector_grid` holds it: base64 of 256 little-endian int32, each component times 2^20."""
    return base64.b64encode(np.rint(vector.astype(np.float64) * 2.0**20).astype("<i4").tobytes()).decode("ascii")


def _refused(code: int, out: str, err: str, state: str, index: str, law: str) -> None:
    assert code == DamagedIndex.exit_code == 4, err
    assert "TAMPERED" not in out + err and out == ""
    first = err.strip().splitlines()[0]
    assert state in first and index in first and law in first and "altered" in first, err


def _outcomes(out: str) -> dict[str, str]:
    return {row["state"]: row["outcome"] for row in map(json.loads, out.splitlines())}


def test_an_altered_law_text_is_refused_by_ask_and_get_and_rebuilt_by_load(
    loaded: tuple[dict[str, str], Path, OpenSearch],
) -> None:
    env, folder, client = loaded
    code, out, _ = lawindex("ask", "TX", HYDRANT, "--json", env=env)
    first = json.loads(out)["hits"][0]["id"]
    index = _alter(client, env, "TX", first, {"law": TAMPERED})
    _refused(*lawindex("ask", "TX", HYDRANT, env=env), "TX", index, first)
    _refused(*lawindex("get", "TX", first, env=env), "TX", index, first)
    code, out, err = lawindex("ask", "MD", HYDRANT, env=env)  # another state is not touched
    assert code == 0, err
    # verify names it, and checks every document (not only those its questions reach).
    code, out, err = lawindex("verify", "TX", "--corpora", str(folder), "--json", env=env)
    assert code == 4, err
    assert json.loads(out)["altered_laws"] == [first] and first in err
    code, out, err = lawindex("load", str(folder), "--json", env=env)
    assert code == 0, err
    assert _outcomes(out) == {"TX": "indexed", "MD": "unchanged"}
    code, out, err = lawindex("ask", "TX", HYDRANT, "--json", env=env)
    assert code == 0, err
    assert json.loads(out)["hits"][0]["id"] == first and "TAMPERED" not in out
    code, out, err = lawindex("verify", "TX", "--corpora", str(folder), "--json", env=env)
    assert code == 0 and json.loads(out)["altered_laws"] == [], err


def test_altered_counts_are_refused_even_where_they_would_only_move_the_law(
    loaded: tuple[dict[str, str], Path, OpenSearch],
) -> None:
    env, folder, client = loaded
    code, out, _ = lawindex("ask", "TX", HYDRANT, "--json", env=env)
    hits = json.loads(out)["hits"]
    last = hits[-1]["id"]
    # The last of the eight made to count "hydrant" ten times: it would rank first, with its text intact.
    source = client.get(index=alias_of("TX", env["LAWINDEX_NAMESPACE"]), id=law_id(last))["_source"]
    index = _alter(client, env, "TX", last, {"counts": {**source["counts"], "hydrant": 10}})
    _refused(*lawindex("ask", "TX", HYDRANT, env=env), "TX", index, last)
    code, out, err = lawindex("load", str(folder), "--state", "TX", "--json", env=env)
    assert code == 0 and _outcomes(out) == {"TX": "indexed"}, err
    code, out, err = lawindex("ask", "TX", HYDRANT, "--json", env=env)
    assert code == 0 and [hit["id"] for hit in json.loads(out)["hits"]] == [hit["id"] for hit in hits], err


def test_an_altered_process_row_is_refused_by_family(loaded: tuple[dict[str, str], Path, OpenSearch]) -> None:
    env, _, client = loaded
    code, _out, err = lawindex("ask", "TX", "--family", "permit-holding-period", "--json", env=env)
    assert code == 0, err
    index = _alter(client, env, "TX", "TX-P02", {"law": TAMPERED})
    _refused(*lawindex("ask", "TX", "--family", "permit-holding-period", env=env), "TX", index, "TX-P02")


def test_load_force_rebuilds_an_intact_state(loaded: tuple[dict[str, str], Path, OpenSearch]) -> None:
    env, folder, _ = loaded
    code, out, err = lawindex("load", str(folder), "--json", env=env)
    assert code == 0 and _outcomes(out) == {"TX": "unchanged", "MD": "unchanged"}, err
    before = {row["state"]: row["index"] for row in map(json.loads, out.splitlines())}
    code, out, err = lawindex("load", str(folder), "--state", "TX", "--force", "--json", env=env)
    assert code == 0 and _outcomes(out) == {"TX": "indexed"}, err
    assert json.loads(out)["index"] != before["TX"]
    code, out, err = lawindex("ask", "TX", HYDRANT, env=env)
    assert code == 0, err


def _statistics(client: OpenSearch, env: dict[str, str], state: str) -> dict[str, object]:
    found = client.get(index=alias_of(state, env["LAWINDEX_NAMESPACE"]), id=STATISTICS_ID)["_source"]
    statistics: dict[str, object] = found["statistics"]
    return statistics


def test_an_altered_vector_is_refused_by_meaning_and_hybrid_and_rebuilt_by_load(
    loaded: tuple[dict[str, str], Path, OpenSearch],
) -> None:
    env, folder, client = loaded
    statistics = _statistics(client, env, "TX")
    laws = [json.loads(line) for line in (folder / "TX.jsonl").read_text().splitlines() if line.strip()]
    if not knn.installed(client) and not cluster_has_plugin(client):
        # Neither k-NN nor the lawindex plugin (which ranks by meaning itself): no vectors to seal.
        assert "vector_digests" not in statistics
        return
    # Sealed: 16 bytes a row, in the statistics' checksum with the laws' digests.
    assert len(base64.b64decode(str(statistics["vector_digests"]))) == 16 * len(laws)
    code, out, err = lawindex("ask", "TX", HYDRANT, "--by", "meaning", "--json", env=env)
    assert code == 0, err
    before = [hit["id"] for hit in json.loads(out)["hits"]]
    # The corpus's last row, far from hydrants, given the question's own vector: it would rank first by
    # meaning (a cosine of 1), its law's text untouched.
    last = laws[-1]["id"]
    assert last not in before
    # Where the row keeps it: a knn_vector's floats (the window path), or the grid's base64, the one copy on the
    # plugin's path (which ranks by its doc values, re-made from the altered source).
    vector = question_vector(HYDRANT)
    alias = alias_of("TX", env["LAWINDEX_NAMESPACE"])
    kept = client.get(index=alias, id=law_id(last), _source_includes=[VECTOR_FIELD, GRID_FIELD])["_source"]
    change: dict[str, object] = {VECTOR_FIELD: vector.tolist()} if VECTOR_FIELD in kept else {GRID_FIELD: _grid(vector)}
    assert set(kept) == set(change), kept
    index = _alter(client, env, "TX", last, change)
    for by in ("meaning", "hybrid"):
        code, out, err = lawindex("ask", "TX", HYDRANT, "--by", by, env=env)
        assert code == DamagedIndex.exit_code == 4 and out == "", (by, err)
        first = err.strip().splitlines()[0]
        assert "TX" in first and index in first and last in first and "altered" in first, err
    # Words never read a vector: they still answer, and another state by meaning too.
    code, out, err = lawindex("ask", "TX", HYDRANT, env=env)
    assert code == 0, err
    code, out, err = lawindex("ask", "MD", HYDRANT, "--by", "meaning", env=env)
    assert code == 0, err
    code, out, err = lawindex("verify", "TX", "--corpora", str(folder), "--json", env=env)
    assert code == 4 and json.loads(out)["altered_laws"] == [last], err
    code, out, err = lawindex("load", str(folder), "--json", env=env)
    assert code == 0 and _outcomes(out) == {"TX": "indexed", "MD": "unchanged"}, err
    code, out, err = lawindex("ask", "TX", HYDRANT, "--by", "meaning", "--json", env=env)
    assert code == 0 and [hit["id"] for hit in json.loads(out)["hits"]] == before, err


def test_an_altered_law_is_refused_by_meaning_as_by_words(loaded: tuple[dict[str, str], Path, OpenSearch]) -> None:
    env, _, client = loaded
    if not knn.installed(client) and not cluster_has_plugin(client):
        return  # no way to ask by meaning here
    code, out, err = lawindex("ask", "TX", HYDRANT, "--by", "meaning", "--json", env=env)
    assert code == 0, err
    first = json.loads(out)["hits"][0]["id"]
    index = _alter(client, env, "TX", first, {"law": TAMPERED})
    for by in ("meaning", "hybrid"):
        _refused(*lawindex("ask", "TX", HYDRANT, "--by", by, env=env), "TX", index, first)


def test_a_law_whose_vector_was_removed_is_refused_by_meaning_from_any_client(
    loaded: tuple[dict[str, str], Path, OpenSearch],
) -> None:
    """Where the plugin ranks by meaning: a law `_update`d to have no `vector_grid` cannot be ranked by meaning, and
    its absence would move every row after it, though it is among no answer's hits. The plugin refuses the
    question (400, naming the law's corpus order) for a raw client; lawindex says which law is altered (exit 4);
    words still answer, verify names it, and a load rebuilds it."""
    env, folder, client = loaded
    if not cluster_has_plugin(client):
        assert os.environ.get("CI") != "true", "the test node has no lawindex plugin"
        return
    laws = [json.loads(line) for line in (folder / "TX.jsonl").read_text().splitlines() if line.strip()]
    code, out, err = lawindex("ask", "TX", HYDRANT, "--by", "meaning", "--json", env=env)
    assert code == 0, err
    before = [hit["id"] for hit in json.loads(out)["hits"]]
    last = laws[-1]["id"]
    assert last not in before
    index = _alter(client, env, "TX", last, {GRID_FIELD: None})
    alias = alias_of("TX", env["LAWINDEX_NAMESPACE"])
    for by in ("meaning", "hybrid"):
        with pytest.raises(RequestError) as raised:
            client.search(index=alias, body={"query": {"lawindex": {"question": HYDRANT, "by": by}}})
        assert raised.value.status_code == 400
        assert f"the law of corpus order [{len(laws) - 1}] has no vector_grid" in str(raised.value.info), by
        _refused(*lawindex("ask", "TX", HYDRANT, "--by", by, env=env), "TX", index, last)
    code, out, err = lawindex("ask", "TX", HYDRANT, env=env)
    assert code == 0, err
    code, out, err = lawindex("verify", "TX", "--corpora", str(folder), "--json", env=env)
    assert code == 4 and json.loads(out)["altered_laws"] == [last], err
    code, out, err = lawindex("load", str(folder), "--state", "TX", "--json", env=env)
    assert code == 0 and _outcomes(out) == {"TX": "indexed"}, err
    code, out, err = lawindex("ask", "TX", HYDRANT, "--by", "hybrid", "--json", env=env)
    assert code == 0, err
