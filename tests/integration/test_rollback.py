"""`lawindex load --keep`, `lawindex history` and `lawindex rollback` on a real OpenSearch: a rollback under
concurrent asks (every answer exactly the old generation's or the new one's, by the reference engine, never a
mix and never an error), and a rollback refused onto an altered generation, an index lawindex did not make, a
copy, and another state's generation, the alias untouched each time."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from indexer.opensearch.cluster.connection import Connection, alias_of
from indexer.opensearch.cluster.schema import law_id
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.generations import behind
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.request import Request
from tests.integration.support import lawindex
from tests.synthetic import generate_corpus, generate_questions, write_corpus

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def _corpus(directory: Path, state: str, laws: int, seed: int) -> Corpus:
    directory.mkdir(parents=True, exist_ok=True)
    write_corpus(directory / f"{state}.jsonl", generate_corpus(state, laws, seed))
    (corpus,) = read_corpora(directory, [state])
    return corpus


def _env(connection: Connection) -> dict[str, str]:
    return {"OPENSEARCH_URL": connection.url, "LAWINDEX_NAMESPACE": connection.namespace}


def _key(hits: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    return tuple(hits)


def test_three_loads_keep_two_and_history_names_them(connection: Connection, tmp_path: Path) -> None:
    env = _env(connection)
    loaded = []
    for seed in (1, 2, 3):
        corpus = _corpus(tmp_path / str(seed), "TX", 60, seed)
        (done,) = load(connection, [corpus])
        loaded.append((done.index, corpus.sha256))
    code, out, err = lawindex("history", "TX", "--json", env=env)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    kept = [row for row in rows if row["kind"] == "generation"]
    # The default keep: the serving one and the one it replaced; the first load's is retired.
    assert [(row["index"], row["sha256"]) for row in kept] == [loaded[2], loaded[1]]
    assert [row["serving"] for row in kept] == [True, False]
    assert all(row["laws"] == 60 and row["opensearch"] and row["lawindex"] and row["host"] for row in kept)
    events = [row for row in rows if row["kind"] != "generation"]
    assert [(row["kind"], row["to"]) for row in events] == [("load", index) for index, _ in loaded]
    assert events[1]["from"] == [loaded[0][0]]
    client = connection.client()
    assert not client.indices.exists(index=loaded[0][0])

    code, out, err = lawindex("rollback", "TX", "--json", env=env)
    assert code == 0, err
    done = json.loads(out)
    assert (done["from_index"], done["to_index"]) == ([loaded[2][0]], loaded[1][0])
    assert behind(client, alias_of("TX", connection.namespace), connection.namespace) == [loaded[1][0]]
    code, out, _ = lawindex("history", "TX", "--json", env=env)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["serving"] for row in rows if row["kind"] == "generation"] == [False, True]
    assert rows[-1]["kind"] == "rollback" and rows[-1]["to"] == loaded[1][0]
    # Nothing older is kept: a second rollback has nowhere to go, and says so (exit 2).
    code, _, err = lawindex("rollback", "TX", env=env)
    assert code == 2 and "no generation older" in err
    # The next load keeps the generation it replaced (the rolled-back-to one), retires the other.
    corpus = _corpus(tmp_path / "4", "TX", 60, 4)
    (fourth,) = load(connection, [corpus])
    assert client.indices.exists(index=loaded[1][0]) and not client.indices.exists(index=loaded[2][0])
    assert fourth.index is not None


def test_rollback_under_concurrent_asks_answers_one_generation_or_the_other(
    connection: Connection, tmp_path: Path
) -> None:
    old = _corpus(tmp_path / "old", "TX", 600, 11)
    new = _corpus(tmp_path / "new", "TX", 600, 12)
    (first,) = load(connection, [old])
    (second,) = load(connection, [new])
    questions = generate_questions(old.laws, 20, 5) + generate_questions(new.laws, 20, 6)
    expected = {
        question: (
            _key([(hit.law.id, hit.score) for hit in reference.ask(old, question).hits]),
            _key([(hit.law.id, hit.score) for hit in reference.ask(new, question).hits]),
        )
        for question in questions
    }
    assert sum(1 for a, b in expected.values() if a != b) >= 30  # the two generations answer apart
    seen: Counter[str] = Counter()
    problems: list[str] = []
    guard = threading.Lock()
    stop = threading.Event()

    def asker() -> None:
        engine = OpenSearchEngine(connection)
        while not stop.is_set():
            for question in questions:
                try:
                    got = _key([(hit.law.id, hit.score) for hit in engine.ask(Request("TX", question)).hits])
                except Exception as error:
                    with guard:
                        problems.append(f"{question!r}: {type(error).__name__}: {error}")
                    continue
                was, now = expected[question]
                with guard:
                    if got == was and got == now:
                        seen["either"] += 1
                    elif got == was:
                        seen["old"] += 1
                    elif got == now:
                        seen["new"] += 1
                    else:
                        problems.append(f"{question!r}: an answer of neither generation: {got}")

    threads = [threading.Thread(target=asker) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        env = _env(connection)
        code, _, err = lawindex("rollback", "TX", env=env)  # to the old one
        assert code == 0, err
        code, _, err = lawindex("rollback", "TX", "--to", str(second.index), env=env)  # and forward again
        assert code == 0, err
        code, _, err = lawindex("rollback", "TX", "--to", str(first.index), env=env)
        assert code == 0, err
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert not problems, problems[:5]
    assert seen["old"] > 0 and seen["new"] > 0
    # Once the last rollback is done, every answer is the old generation's.
    engine = OpenSearchEngine(connection)
    for question in questions:
        got = _key([(hit.law.id, hit.score) for hit in engine.ask(Request("TX", question)).hits])
        assert got == expected[question][0]


def _serving(client: OpenSearch, connection: Connection, state: str = "TX") -> list[str]:
    return behind(client, alias_of(state, connection.namespace), connection.namespace)


def test_rollback_is_refused_onto_what_is_not_an_intact_generation_of_the_state(
    connection: Connection, tmp_path: Path
) -> None:
    client = connection.client()
    env = _env(connection)
    namespace = connection.namespace
    (first,) = load(connection, [_corpus(tmp_path / "1", "TX", 50, 21)])
    (second,) = load(connection, [_corpus(tmp_path / "2", "TX", 50, 22)])
    (maryland,) = load(connection, read_corpora(CORPORA, ["MD"]))
    serving = _serving(client, connection)
    assert serving == [second.index]

    # Another state's generation.
    code, _, err = lawindex("rollback", "TX", "--to", str(maryland.index), env=env)
    assert code == 4 and "not one of TX's generations" in err, err
    # An index named as a TX generation that lawindex did not make.
    foreign = f"{namespace}-tx-20200101000000000000"
    client.indices.create(index=foreign, body={"mappings": {"properties": {"x": {"type": "keyword"}}}})
    code, _, err = lawindex("rollback", "TX", "--to", foreign, env=env)
    assert code == 4 and "no lawindex marker" in err, err
    # A copy of the old generation (a clone keeps the mapping's marker, which names the original).
    copy = f"{namespace}-tx-20200101000000000001"
    client.indices.put_settings(index=str(first.index), body={"index.blocks.write": True})
    client.indices.clone(index=str(first.index), target=copy)
    client.indices.put_settings(index=str(first.index), body={"index.blocks.write": False})
    code, _, err = lawindex("rollback", "TX", "--to", copy, env=env)
    assert code == 4 and "is a copy of" in err, err
    # The kept generation itself, once one law of it is altered in place.
    (law,) = [law for law in _corpus(tmp_path / "1", "TX", 50, 21).laws[:1]]
    client.update(
        index=str(first.index), id=law_id(law.id), body={"doc": {"law": "altered"}}, params={"refresh": "true"}
    )
    code, _, err = lawindex("rollback", "TX", env=env)
    assert code == 4 and "written after its load" in err, err
    # Nothing moved, and the foreign index and the copy survive.
    assert _serving(client, connection) == serving
    assert client.indices.exists(index=foreign) and client.indices.exists(index=copy)
    # A generation whose statistics were sealed for another index (its seal) is refused as well: the
    # check is the load's own (tests/integration/test_integrity.py alters the rest).
    code, _, err = lawindex("rollback", "TX", "--to", f"{namespace}-tx-20200101000000000009", env=env)
    assert code == 2 and "there is no index" in err, err
    # Names that are no index (docs/operations.md: exit 2, as bad input): empty, a pattern, the state's alias,
    # several at once, a name OpenSearch would refuse. Never sent as a pattern; nothing moves.
    for name in ("", "*", alias_of("TX", namespace), f"{first.index},{second.index}", "_all", "Upper", "../x"):
        code, _, err = lawindex("rollback", "TX", "--to", name, env=env)
        assert code == 2 and f"there is no index {name!r}" in err, (name, err)
    assert _serving(client, connection) == serving
