"""The lawindex plugin's raw query on a real three-node cluster: the spec's top 8 from every node, from a
primary or a replica, and after one node is SIGKILLed (its shards' replicas promoted).

The cluster is the module's own: `lawindex opensearch start --nodes 3` (which installs the plugin on every
node) on LAWINDEX_CLUSTER_PORT (default 9480; transport ports +100), 256m heaps, stopped at the end.
scripts/test runs this file in its phase of files that start their own nodes. When the cluster cannot be
had, the tests fail.
"""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.node import node, plugin
from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.verify import default_questions
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import read_corpora
from tests import synthetic
from tests.integration.plugin_support import RawClient, generated, spec_ids, tie_pair_corpus
from tests.integration.support import CLUSTER_NODES, CLUSTER_PORT, three_nodes, unique_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PORT = CLUSTER_PORT
NODES = CLUSTER_NODES


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    with three_nodes() as urls:
        client = OpenSearch(hosts=urls, timeout=60)
        assert plugin.installed(client), "a node of the cluster has no lawindex plugin"
        work = tmp_path_factory.mktemp("plugin-cluster")
        laws, questions = generated("TX", 800, 250, seed=2121)
        tie_laws, tie_question, _ = tie_pair_corpus()
        corpora = [corpus for corpus in read_corpora(CORPORA) if corpus.state not in ("TX", "WY")]
        corpora += [synthetic.corpus_of("TX", laws), synthetic.corpus_of("WY", tie_laws)]
        asked = {"TX": questions, "WY": [tie_question]}
        for corpus in corpora:
            asked.setdefault(corpus.state, default_questions(corpus)[:30])
        truth = {c.state: spec_ids(work, c.state, c.laws, asked[c.state]) for c in corpora}
        connection = Connection.from_env(",".join(urls), namespace=unique_namespace(), timeout=60.0)
        load(connection, corpora)  # a replica of each state on another node (auto_expand_replicas 0-1)
        yield {"urls": urls, "client": client, "namespace": connection.namespace, "asked": asked, "truth": truth}


def _wrong(cluster: dict[str, object], urls: list[str], preference: str | None = None) -> tuple[int, list[object]]:
    """Every question of every state through the raw query, round-robin over `urls`: how many were asked,
    and those whose ids or order are not the spec's."""
    asked: dict[str, list[str]] = cluster["asked"]  # type: ignore[assignment]
    truth: dict[str, list[list[str]]] = cluster["truth"]  # type: ignore[assignment]
    raws = itertools.cycle([RawClient(url) for url in urls])
    total = 0
    wrong: list[object] = []
    for state, questions in asked.items():
        index = alias_of(state, str(cluster["namespace"]))
        for question, want in zip(questions, truth[state], strict=True):
            got = next(raws).ids(index, question, preference=preference)
            total += 1
            if got != want:
                wrong.append((state, question, want, got))
    return total, wrong


@pytest.mark.parametrize("copy", [None, "_primary", "_replica"])
def test_every_node_and_either_copy_answers_the_spec(cluster: dict[str, object], copy: str | None) -> None:
    urls: list[str] = cluster["urls"]  # type: ignore[assignment]
    total, wrong = _wrong(cluster, urls, copy)
    print(f"\nplugin query on {NODES} nodes ({copy or 'any copy'}): {total - len(wrong)} of {total} exact")
    assert not wrong, wrong[:3]


def test_after_a_node_is_killed_the_others_answer_the_spec(cluster: dict[str, object]) -> None:
    urls: list[str] = cluster["urls"]  # type: ignore[assignment]
    victim = (node.status(PORT).nodes or [])[NODES - 1]
    os.kill(int(victim["pid"]), signal.SIGKILL)
    survivors = [url for url in urls if not url.endswith(f":{victim['http_port']}")]
    assert len(survivors) == NODES - 1
    survivor = OpenSearch(hosts=survivors, timeout=60)
    # Two nodes left: every state's shard has a copy there (promoted where the primary died).
    survivor.cluster.health(
        index=f"{cluster['namespace']}-*",
        wait_for_nodes=str(NODES - 1),
        wait_for_status="yellow",
        timeout="120s",
        request_timeout=150,
    )
    total, wrong = _wrong(cluster, survivors)
    print(f"\nplugin query after a node was killed: {total - len(wrong)} of {total} exact")
    assert not wrong, wrong[:3]
