"""A first start on a bare machine (issue 48.5): only what the first answer needs is fetched (no k-NN unless asked,
or unless the node was made with it), what can overlap does (scripts/demo's background fetch needs nothing pip
installs), and each download and each wait on another process's says what it waits for, with its progress."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from indexer.errors import BadInput
from indexer.node import distribution, fetch, knn, launch, node, plugin, progress, record
from indexer.node.host import RunAs
from indexer.retrieval.embedding import default_embedder, sparse_products

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """start_distribution with everything around k-NN faked (Java, the distribution, the node's process); the
    versions knn.install was asked to install into, in order."""
    installs: list[str] = []
    dist = tmp_path / "dist"
    (dist / "modules").mkdir(parents=True)
    monkeypatch.setattr(launch, "find_java", lambda version: (tmp_path / "jdk", 21))
    monkeypatch.setattr(plugin, "node_home", lambda version, cache, java_home: dist)
    monkeypatch.setattr(launch, "run_as", lambda cache: RunAs("me", 0, 0))
    monkeypatch.setattr(launch, "prepare_node", lambda folder, *args: folder.root.mkdir(parents=True, exist_ok=True))
    monkeypatch.setattr(launch, "reachable", lambda *args: None)
    monkeypatch.setattr(launch, "port_free", lambda port: True)
    monkeypatch.setattr(launch, "_spawn_detached", lambda *args: 4242)

    def install(home: Path, version: str, cache: Path) -> str:
        installs.append(version)
        return knn.NAME

    monkeypatch.setattr(knn, "install", install)
    return installs


def test_a_node_gets_no_k_nn_unless_asked(launched: list[str], tmp_path: Path) -> None:
    member = launch.start_distribution(tmp_path / "cache", "3.6.0", 9350, "512m", {}, "a note")
    assert launched == []
    assert member.knn == knn.NOT_ASKED
    member = launch.start_distribution(tmp_path / "cache", "3.6.0", 9351, "512m", {}, "a note", with_knn=True)
    assert launched == ["3.6.0"]
    assert member.knn == knn.NAME


def test_a_node_made_with_k_nn_keeps_it(tmp_path: Path) -> None:
    """Its indices may hold knn_vector fields, which a node without k-NN cannot open."""
    made: dict[str, Any] = {"version": "3.6.0", "port": 9350, "heap": "512m", "pid": None}
    assert node.had_knn(record.Member(**made, knn=knn.NAME))
    assert not node.had_knn(record.Member(**made, knn=knn.NOT_ASKED))
    assert not node.had_knn(record.Member(**made, knn="none: no opensearch-knn zip is published for 3.8.0"))
    assert not node.had_knn(record.Member(**made))  # a record from before the field
    assert not node.had_knn(None)


@pytest.mark.parametrize("shape", [{"nodes": 3}, {"secure": True}])
def test_k_nn_is_for_a_single_node(shape: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="--knn installs k-NN into a single node"):
        node.start(port=9350, cache_dir=tmp_path, knn=True, **shape)


def test_a_big_download_says_each_quarter_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    shown = progress.Download("downloading OpenSearch 9.9.9", 64 * progress.MB)
    for megabytes in (10, 20, 40, 50, 64):
        shown.update(megabytes * progress.MB)
    shown.done()
    lines = capsys.readouterr().err.splitlines()
    assert lines[:4] == [
        "downloading OpenSearch 9.9.9 (64.0 MB) ...",
        "  downloading OpenSearch 9.9.9: 20.0 MB of 64.0 MB (25%)",
        "  downloading OpenSearch 9.9.9: 40.0 MB of 64.0 MB (50%)",
        "  downloading OpenSearch 9.9.9: 50.0 MB of 64.0 MB (75%)",
    ]
    assert lines[4].startswith("  downloading OpenSearch 9.9.9: 64.0 MB in ")
    assert len(lines) == 5


def test_a_small_download_says_only_its_end(capsys: pytest.CaptureFixture[str]) -> None:
    shown = progress.Download("downloading lucene-core-10.jar", 4 * progress.MB)
    shown.update(4 * progress.MB)
    shown.done()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("  downloading lucene-core-10.jar: 4.0 MB in ")
    shown = progress.Download("downloading opensearch-cli-3.6.0.jar", 25_000)
    shown.update(25_000)
    shown.done()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("  downloading opensearch-cli-3.6.0.jar: 25 kB in ")


def test_a_lock_another_process_holds_is_waited_for_by_the_waiter(tmp_path: Path) -> None:
    lock = tmp_path / "opensearch-9.9.9.lock"
    other = lock.open("a")  # another open file: flock treats it as another process would be
    fcntl.flock(other, fcntl.LOCK_EX)
    waited: list[str] = []

    def waiter(take: Any) -> None:
        waited.append("waiting")
        while not take():
            time.sleep(0.01)

    def release() -> None:
        fcntl.flock(other, fcntl.LOCK_UN)
        other.close()

    releaser = threading.Timer(0.2, release)
    releaser.start()
    with distribution.locked(lock, waiter):
        waited.append("held")
    releaser.join()
    assert waited == ["waiting", "held"]
    with distribution.locked(lock, waiter):  # free: no wait, nothing said
        pass
    assert waited == ["waiting", "held"]


def test_a_wait_on_another_process_download_shows_its_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "opensearch-9.9.9.zip"
    partial = archive.with_name(archive.name + ".part")
    distribution.length_file(partial).write_text(f"{40 * progress.MB}\n")
    sizes = iter([0, 12, 24, 36])

    def take() -> bool:  # the other process writes a little more each time the lock is tried
        size = next(sizes, None)
        if size is None:
            partial.rename(archive)
            return True
        partial.write_bytes(b"\0" * size * progress.MB)
        return False

    distribution._watching(archive, "OpenSearch 9.9.9")(take)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "waiting for another lawindex process that fetches OpenSearch 9.9.9 ..."
    assert lines[1] == "downloading OpenSearch 9.9.9 (another process) (40.0 MB) ..."
    assert "  downloading OpenSearch 9.9.9 (another process): 12.0 MB of 40.0 MB (25%)" in lines
    assert lines[-1].startswith("  downloading OpenSearch 9.9.9 (another process): 36.0 MB in ")


def test_the_background_fetch_needs_nothing_pip_installs() -> None:
    """scripts/demo runs it before pip: without site-packages (-S) it still imports, and says its usage errors."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", "import indexer.node.fetch as f; print(f.main.__name__)"],
        cwd=REPO, capture_output=True, text=True, check=False, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "main"), done.stderr


def test_the_demo_keeps_port_9200_by_default_and_starts_the_node_beside_pip() -> None:
    demo = (REPO / "scripts" / "demo").read_text()
    assert 'port="${LAWINDEX_DEMO_PORT:-9200}"' in demo
    steps = (
        "-m indexer.node.fetch >", "--no-deps", '--start "$port" &', "--requirements answer)",
        '--no-deps "${answer[@]}"', "--check answer", "opensearch start --port", "load corpora/ --state TX",
        "ask TX", "-e . toml &&", "load corpora/\n", 'wait "$rest"',
    )  # fmt: skip
    places = [demo.index(step) for step in steps]
    assert places == sorted(places)


def test_the_first_answer_imports_only_what_the_demo_installs_first() -> None:
    """scripts/demo loads Texas and answers before pip has installed the rest, and installs the first answer's
    packages without pip's resolver: `lawindex load` and `lawindex ask` (its commands' modules, the load's
    embedding and the engine's ask) import no installed package but those the demo has installed by then (the
    start's, pydantic with its own dependencies, and the answer's, ANSWER and ANSWER_IMPORTS), every other
    package hidden as if not installed; pyproject.toml names every package of FIRST and ANSWER; and without scipy
    a batch embeds to the same bytes (token by token, not by sparse products)."""
    needed = fetch.requirements(REPO / "pyproject.toml", fetch.FIRST + fetch.ANSWER)
    assert len(needed) == len(fetch.FIRST) + len(fetch.ANSWER)
    texts = ["how far from a fire hydrant can i park", "a law of two words", "Left turns; U-turns & school buses"]
    script = f"""
import importlib.metadata as metadata, re, sys
def name(distribution):
    return re.sub(r"[-_.]+", "-", distribution).lower()
first = [re.split(r"[ ;<>=!~]", line)[0] for line in metadata.requires("pydantic") if "extra ==" not in line]
installed = {{name(one) for one in {list(fetch.FIRST + fetch.ANSWER + fetch.ANSWER_IMPORTS)!r} + first + ["lawindex"]}}
for top, distributions in metadata.packages_distributions().items():
    if top not in sys.modules and not installed & {{name(one) for one in distributions}}:
        sys.modules[top] = None  # as if not installed: importing it fails, find_spec finds nothing
import indexer.cli, indexer.opensearch.write.load, indexer.opensearch.read.engine
from indexer.retrieval.embedding import default_embedder, sparse_products
assert not sparse_products()
print(default_embedder().embed({texts!r}).tobytes().hex())
sys.argv = ["lawindex", "ask", "TX", "how far from a fire hydrant can i park", "--engine", "reference"]
indexer.cli.main()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sparse_products()  # here, scipy's products
    assert lines[0] == default_embedder().embed(texts).tobytes().hex()
    assert lines[2].startswith("TX-S01 ")


def test_the_check_names_what_the_first_answer_cannot_import() -> None:
    """The demo's `--check answer`: exit 1 naming the missing module (then it installs with dependencies)."""
    script = "import sys; sys.modules['orjson'] = None; import indexer.node.fetch as f; sys.exit(f.main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", script, "--check", "answer"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "the first answer cannot import orjson (imported by indexer.opensearch.write.load)" in done.stderr
    assert fetch.main(["--check", "answer"]) == 0


def test_a_start_needs_first_what_pyproject_names_for_its_record_and_the_plugin_jar() -> None:
    assert fetch.requirements(REPO / "pyproject.toml") == ["pydantic>=2.6", "wordllama==0.4.0.post1"]
    asked = subprocess.run(
        [sys.executable, "-S", "-m", "indexer.node.fetch", "--requirements", "answer"],
        cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    answer = fetch.requirements(REPO / "pyproject.toml", fetch.ANSWER)
    assert asked.stdout.splitlines() == answer + list(fetch.ANSWER_IMPORTS)
    assert "scipy" not in asked.stdout


def test_the_plugins_jar_files_are_found_without_numpy() -> None:
    """The demo starts the node (and so packs the plugin's jar, the embedder's files in it) while pip installs the
    rest: finding those files must not import numpy, which is not there yet."""
    script = "import sys, indexer.node.plugin as p; p.embedder_files(); print('numpy' in sys.modules)"
    found = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert found.stdout.strip() == "False"
