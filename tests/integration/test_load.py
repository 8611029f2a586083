"""`lawindex load` and `lawindex status` against a real OpenSearch, each test in a namespace of its own.

Expected values come from the corpus files read as plain JSON lines and from the reference scorer's
statistics, never from what the load code reports about itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch
from typer.testing import CliRunner

from indexer.cli import app
from indexer.errors import LoadFailed, Unreachable
from indexer.node import node
from indexer.opensearch.cluster.connection import Connection, alias_of, index_prefix
from indexer.opensearch.cluster.schema import STATISTICS_ID
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.generations import serving
from indexer.opensearch.write.load import load
from indexer.retrieval.corpus import Law, read_corpora, read_corpus
from indexer.retrieval.reference import statistics
from indexer.retrieval.words import ranked_text, words
from tests import synthetic
from tests.integration.support import drop_namespace

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def rows(path: Path) -> list[dict[str, Any]]:
    """A corpus file as plain JSON objects: the test's own reading, independent of indexer.retrieval.corpus."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def indices(client: OpenSearch, connection: Connection, state: str) -> list[str]:
    """Every index of `state` in the connection's namespace, sorted."""
    found = client.indices.get(
        index=index_prefix(state, connection.namespace) + "*", ignore_unavailable=True, allow_no_indices=True
    )
    return sorted(found)


def behind_alias(client: OpenSearch, connection: Connection, state: str) -> list[str]:
    """The indices the state's alias points to (none when it has no alias)."""
    alias = alias_of(state, connection.namespace)
    if not client.indices.exists_alias(name=alias):
        return []
    return sorted(client.indices.get_alias(name=alias))


def write_corpus(path: Path, laws: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(law) + "\n" for law in laws), encoding="utf-8")
    return path


def one_state(directory: Path, state: str = "MD") -> Path:
    """`directory` holding a copy of one sample corpus."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(CORPORA / f"{state}.jsonl", directory / f"{state}.jsonl")
    return directory


def cli(connection: Connection, *args: str) -> Any:
    """`lawindex ARGS` through typer's runner, in the connection's namespace."""
    runner = CliRunner()
    return runner.invoke(app, list(args), env={"LAWINDEX_NAMESPACE": connection.namespace, "COLUMNS": "200"})


# --- a load -----------------------------------------------------------------------------------------


def test_load_every_sample_state(connection: Connection) -> None:
    client = connection.client()
    corpora = read_corpora(CORPORA)
    results = load(connection, corpora)
    assert [result.state for result in results] == sorted(path.stem for path in CORPORA.glob("*.jsonl"))
    for result in results:
        raw = rows(CORPORA / f"{result.state}.jsonl")
        process = sum(1 for row in raw if row["kind"] == "process")
        assert (result.laws, result.ranked, result.process) == (len(raw), len(raw) - process, process)
        assert result.outcome == "indexed"
        # The alias points to exactly one index, the one the load reports, and nothing else is left.
        assert behind_alias(client, connection, result.state) == [result.index]
        assert indices(client, connection, result.state) == [result.index]
        alias = alias_of(result.state, connection.namespace)
        assert client.count(index=alias)["count"] == len(raw)  # the statistics document: behind the alias's filter

        hits = client.search(index=alias, body={"size": 10_000, "query": {"match_all": {}}})["hits"]["hits"]
        by_id = {hit["_id"]: hit["_source"] for hit in hits}
        for order, row in enumerate(raw):
            source = by_id[f"law:{row['id']}"]
            assert source["order"] == order
            assert source["id"] == row["id"]
            assert source["law"] == row["law"]
            if row["kind"] == "process":
                assert "words" not in source
                assert source["counts"] == {} and source["length"] == 0
            else:
                text = f"{row['law']} {row['question']} {row['concept'].replace('-', ' ')}"
                assert source["words"] == text
                assert source["length"] == len(words(text))

        # The statistics document is the reference's Index of the same laws.
        stats = statistics(read_corpus(CORPORA / f"{result.state}.jsonl").laws)
        stored = client.get(index=alias, id=STATISTICS_ID)["_source"]["statistics"]
        assert stored["size"] == stats.size == len(raw) - process
        assert stored["average"] == stats.average
        # The vocabulary: out of _source, in stored blocks a question reads as it needs them; all of them
        # read back here are the reference's words and df, in its order.
        assert "lexicon" not in client.get(index=alias, id=STATISTICS_ID)["_source"]
        engine_stats = OpenSearchEngine(connection).statistics(result.state)
        assert engine_stats.spelling.lexicon.in_order() == list(stats.vocabulary.items())
        assert stored["total_length"] == sum(stats.lengths)

        # Lucene's view: the laws that have the ranked field are the ranked laws with at least one word.
        with_words = sum(1 for row in raw if row["kind"] != "process" and words(ranked_text(Law.model_validate(row))))
        assert stored["doc_count"] == with_words
        found = client.search(
            index=alias,
            body={"size": 0, "track_total_hits": True, "query": {"exists": {"field": "words"}}},
        )
        assert found["hits"]["total"]["value"] == with_words


def test_reload_unchanged_writes_nothing(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    corpora = read_corpora(one_state(tmp_path))
    (first,) = load(connection, corpora)
    assert first.index is not None
    written = client.indices.stats(index=first.index, metric="indexing")["indices"][first.index]["primaries"]
    (again,) = load(connection, read_corpora(tmp_path))
    assert again.outcome == "unchanged"
    assert again.index == first.index
    assert indices(client, connection, "MD") == [first.index]
    after = client.indices.stats(index=first.index, metric="indexing")["indices"][first.index]["primaries"]
    assert after["indexing"]["index_total"] == written["indexing"]["index_total"]


def test_reload_changed_builds_a_new_generation(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    path = one_state(tmp_path) / "MD.jsonl"
    (first,) = load(connection, read_corpora(tmp_path))
    raw = rows(path)
    added = {"id": "MD-NEW", "kind": "statute", "law": "Chains on tires in snow.", "question": "", "concept": "snow"}
    write_corpus(path, [*raw, added])
    (second,) = load(connection, read_corpora(tmp_path))
    assert second.outcome == "indexed"
    assert first.index is not None and second.index is not None
    assert second.index > first.index, "a generation sorts after the one it replaces"
    # The generation it replaced is kept for `lawindex rollback` (load --keep 2), behind no alias.
    assert behind_alias(client, connection, "MD") == [second.index]
    assert indices(client, connection, "MD") == [first.index, second.index]
    alias = alias_of("MD", connection.namespace)
    assert client.count(index=alias)["count"] == len(raw) + 1
    assert client.get(index=alias, id="law:MD-NEW")["_source"]["words"] == "Chains on tires in snow.  snow"


def test_an_orphan_of_a_crash_is_removed_by_the_next_load(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    (first,) = load(connection, read_corpora(one_state(tmp_path)))
    # What a load killed between creating its index and moving the alias leaves behind: lawindex's
    # marker in its mapping, and its private filling alias.
    orphan = index_prefix("MD", connection.namespace) + "2" * 20
    marker = {"owner": "lawindex", "namespace": connection.namespace, "state": "MD", "index": orphan}
    client.indices.create(
        index=orphan,
        body={
            "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}},
            "mappings": {"_meta": {"lawindex": marker}},
            "aliases": {f"{orphan}-filling": {}},
        },
    )
    # Not a generation of this state: a name lawindex never makes is never deleted.
    stranger = index_prefix("MD", connection.namespace) + "notes"
    client.indices.create(
        index=stranger, body={"settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}}}
    )
    # Named like a generation, but without lawindex's marker: not lawindex's, never deleted.
    unmarked = index_prefix("MD", connection.namespace) + "3" * 20
    client.indices.create(
        index=unmarked, body={"settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}}}
    )
    (again,) = load(connection, read_corpora(tmp_path))
    assert again.outcome == "unchanged"
    assert first.index is not None
    assert indices(client, connection, "MD") == sorted([first.index, stranger, unmarked])


def test_an_index_deleted_during_its_load_is_never_swapped_in(connection: Connection, tmp_path: Path) -> None:
    # Another load of the state, starting now, would take this half-built index for an orphan and
    # delete it; the bulk requests that follow auto-create a namesake without the analyzer.
    client = connection.client()
    (first,) = load(connection, read_corpora(one_state(tmp_path)))
    bigger = tmp_path / "bigger"
    laws = [law.model_dump(exclude_none=True) for law in synthetic.generate_corpus("MD", 2500, 3)]
    write_corpus(bigger / "MD.jsonl", laws)
    deleted: list[str] = []

    def delete_midway(state: str, written: int, total: int) -> None:
        if not deleted and 0 < written < total:
            (building,) = [name for name in indices(client, connection, state) if name != first.index]
            client.indices.delete(index=building)
            deleted.append(building)

    with pytest.raises(LoadFailed):
        load(connection, read_corpora(bigger), progress=delete_midway)
    assert deleted
    assert behind_alias(client, connection, "MD") == [first.index]
    assert indices(client, connection, "MD") == [first.index]


# --- bad input, dry runs, no cluster ----------------------------------------------------------------


def test_a_bad_corpus_writes_nothing_and_the_old_index_still_serves(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    one_state(tmp_path, "MD")
    one_state(tmp_path, "WV")
    loaded = load(connection, read_corpora(tmp_path))
    before = {result.state: result.index for result in loaded}
    # MD changes (it would be rewritten) and WV breaks on line 3: every file is checked before any write.
    write_corpus(tmp_path / "MD.jsonl", rows(tmp_path / "MD.jsonl")[:-1])
    lines = (tmp_path / "WV.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"kind"', '"kinds"', 1)
    (tmp_path / "WV.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = cli(connection, "load", str(tmp_path), "--url", connection.url)
    assert result.exit_code == 2, result.output
    assert "WV.jsonl:3" in result.output and "kind" in result.output
    for state, index in before.items():
        assert behind_alias(client, connection, state) == [index]
        assert indices(client, connection, state) == [index]
    assert client.count(index=alias_of("MD", connection.namespace))["count"] == len(rows(CORPORA / "MD.jsonl"))


def test_dry_run_writes_nothing(connection: Connection, tmp_path: Path) -> None:
    client = connection.client()
    one_state(tmp_path)
    result = cli(connection, "load", str(tmp_path), "--dry-run", "--json", "--url", connection.url)
    assert result.exit_code == 0, result.output
    (reported,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert reported["outcome"] == "would index" and reported["dry_run"] is True
    assert reported["laws"] == len(rows(tmp_path / "MD.jsonl"))
    assert client.indices.get(index=f"{connection.namespace}-*", allow_no_indices=True) == {}

    (loaded,) = load(connection, read_corpora(tmp_path))
    write_corpus(tmp_path / "MD.jsonl", rows(tmp_path / "MD.jsonl")[1:])
    result = cli(connection, "load", str(tmp_path), "--dry-run", "--url", connection.url)
    assert result.exit_code == 0, result.output
    assert "dry run: nothing written" in result.stdout and "would index" in result.stdout
    assert indices(client, connection, "MD") == [loaded.index]
    assert client.count(index=alias_of("MD", connection.namespace))["count"] == len(rows(CORPORA / "MD.jsonl"))


def test_an_unreachable_url_is_exit_3_with_one_line_naming_it(connection: Connection) -> None:
    # Nothing listens on a port just bound and closed again.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    result = cli(connection, "load", str(CORPORA), "--url", url)
    assert result.exit_code == 3, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and url in errors[0]
    assert "lawindex opensearch start" in result.stderr
    assert result.stdout == ""


# --- status -----------------------------------------------------------------------------------------


def test_status_text_and_json(connection: Connection, tmp_path: Path) -> None:
    empty = cli(connection, "status", "--url", connection.url)
    assert empty.exit_code == 0 and "no state is loaded yet" in empty.stderr
    assert cli(connection, "status", "--json", "--url", connection.url).stdout == ""

    one_state(tmp_path, "MD")
    one_state(tmp_path, "AL")
    loaded = {result.state: result for result in load(connection, read_corpora(tmp_path))}
    result = cli(connection, "status", "--json", "--url", connection.url)
    assert result.exit_code == 0, result.output
    listed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["state"] for row in listed] == ["AL", "MD"]
    for row in listed:
        raw = rows(tmp_path / f"{row['state']}.jsonl")
        process = sum(1 for law in raw if law["kind"] == "process")
        assert row["alias"] == alias_of(row["state"], connection.namespace)
        assert row["index"] == loaded[row["state"]].index
        assert (row["laws"], row["ranked"], row["process"]) == (len(raw), len(raw) - process, process)
        assert row["documents"] == len(raw) + 1
        assert row["sha256"] == hashlib.sha256((tmp_path / f"{row['state']}.jsonl").read_bytes()).hexdigest()
        assert row["loaded_at"]

    text = cli(connection, "status", "--url", connection.url)
    assert text.exit_code == 0, text.output
    for row in listed:
        line = next(line for line in text.stdout.splitlines() if row["alias"] in line)
        assert row["index"] in line and str(row["laws"]) in line and row["sha256"][:12] in line


# --- OpenSearch stopped in the middle of a load -----------------------------------------------------


def _free_port() -> int:
    """A free HTTP port for a node of this test's own: the first of ten from LAWINDEX_TEST_KILL_PORT
    (default 9260) that nothing listens on."""
    first = int(os.environ.get("LAWINDEX_TEST_KILL_PORT", "9260"))
    for port in range(first, first + 10):
        if node.status(port).state == "running":
            continue
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError(f"no free port in {first}-{first + 9} for a node of this test's own")


def test_opensearch_killed_mid_load(opensearch_version: str, tmp_path: Path) -> None:
    port = _free_port()
    started = node.start(version=opensearch_version, port=port)
    url = started.url
    connection = Connection.from_env(url, namespace=f"lawindex_tkill{port}")
    client = connection.client()
    try:
        drop_namespace(client, connection.namespace)
        old = tmp_path / "old"
        write_corpus(
            old / "TX.jsonl", [law.model_dump(exclude_none=True) for law in synthetic.generate_corpus("TX", 300, 1)]
        )
        new = tmp_path / "new"
        write_corpus(
            new / "TX.jsonl", [law.model_dump(exclude_none=True) for law in synthetic.generate_corpus("TX", 4000, 2)]
        )
        (first,) = load(connection, read_corpora(old))

        killed: list[int] = []

        def kill_midway(state: str, written: int, total: int) -> None:
            # SIGKILL, not a stop: the node gets no chance to tidy up, as in a crash or an OOM kill.
            if not killed and 0 < written < total:
                pid = node.status(port).pid
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                killed.append(written)

        with pytest.raises(Unreachable) as failure:
            load(connection, read_corpora(new), progress=kill_midway)
        assert killed, "the load ended before the node could be killed"
        assert url in failure.value.message

        node.start(version=opensearch_version, port=port)
        # The half-built index survives the crash: nothing was there to delete it.
        (half,) = [name for name in indices(client, connection, "TX") if name != first.index]
        client.cluster.health(index=f"{connection.namespace}-*", wait_for_status="green", request_timeout=60)
        alias = alias_of("TX", connection.namespace)
        # The old alias serves the old corpus, whole.
        assert serving(client, "TX", connection.namespace) == first.index
        assert client.count(index=alias)["count"] == 300
        assert client.get(index=alias, id=STATISTICS_ID)["_source"]["statistics"]["size"] == first.ranked

        (second,) = load(connection, read_corpora(new))
        assert second.outcome == "indexed"
        # The half-built index is gone; the serving generation and the one it replaced are kept (`--keep 2`,
        # indexer.opensearch.write.history), the kept one whole and untouched by the crash.
        assert indices(client, connection, "TX") == sorted([first.index, second.index])
        assert half not in (first.index, second.index)
        assert client.count(index=first.index)["count"] == 300 + 1
        assert client.count(index=alias)["count"] == 4000
    finally:
        try:
            drop_namespace(client, connection.namespace)
        finally:
            node.stop(port)
