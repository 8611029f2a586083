"""The package's layers, read from every module's imports with `ast` (those inside functions and under
TYPE_CHECKING too: a circle a reader must follow is a circle, whether or not Python ever runs it).

    errors      indexer/errors.py                 imports nothing of lawindex
    observe     indexer/observe.py                imports nothing of lawindex: timings handed to a watcher
    cache       indexer/cache.py                  imports nothing of lawindex: the folder every layer keeps things in
    retrieval   indexer/retrieval/                in process, no server: imports only itself and errors
    opensearch  indexer/opensearch/               the OpenSearch side
    node        indexer/node/                     a local node, Docker, clusters, security
    service     indexer/service/                  the engines, the output models, `lawindex serve`
    evaluation  indexer/evaluation/               `lawindex eval`: offline, over an engine, above the service
    cli         indexer/cli/                      the `lawindex` command

The OpenSearch layer stands in wings, in this order (docs/architecture.md's table lists their modules):

    cluster     indexer/opensearch/cluster/       the client, its errors, the index's shape, plugins, versions
    trust       indexer/opensearch/trust/         ownership, the seal, the laws' and vectors' digests
    read        indexer/opensearch/read/          ask, its statistics and limits, status, meaning
    write       indexer/opensearch/write/         load, the lock, generations, history: beside read
    (top)       indexer/opensearch/*.py           verify: above every wing

Read and write stand side by side: neither imports the other (what both need of an index, its shape and how its
rows carry their vectors, is the cluster wing's).

A module imports modules of its own layer or of a layer below it, never one above it, and inside the
OpenSearch layer of its own wing or a wing below it; no module
imports itself back through others; `indexer/retrieval/` never imports opensearchpy (nor the web or CLI
frameworks); a module of more than LONG lines says why at the top of its docstring ("Long: ...").
Each rule is also shown to fail, on a small tree made here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "indexer"

# layer -> height: a module may import a module of its own layer or of a lower height
# The order of the architecture (docs/architecture.md): the retrieval core, the OpenSearch side, the local node
# (which names what it secures with the OpenSearch side's names), the service, offline evaluation, the CLI.
HEIGHTS = {
    "errors": 0,
    "observe": 0,
    "cache": 0,
    "retrieval": 1,
    "opensearch": 2,
    "node": 3,
    "service": 4,
    "evaluation": 5,
    "cli": 6,
}
# wing of indexer/opensearch/ -> height; a module of indexer/opensearch/ itself (verify) stands above them all.
WINGS = {"cluster": 0, "trust": 1, "read": 2, "write": 2}  # read and write side by side
TOP = "top"
# What the retrieval layer must run without: a server's client, the service's and the CLI's frameworks.
NOT_IN_RETRIEVAL = {"opensearchpy", "fastapi", "starlette", "uvicorn", "typer", "docker"}
LONG = 400  # lines; past it a module's docstring must give the reason


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(root, path): path for path in sorted(root.rglob("*.py"))}


def imports(path: Path, known: set[str]) -> set[str]:
    """Every name `path` imports, anywhere in it; `from a import b` counts as a.b when a.b is a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import; lawindex spells every import in full"
            base = node.module or ""
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found.update(submodules or {base})
    return found


def layer(name: str) -> str | None:
    """The layer of a module of the package (None for indexer/__init__.py)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def wing(name: str) -> str | None:
    """The wing of a module of the OpenSearch layer (TOP for one of indexer/opensearch/ itself), else None."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] != "opensearch":
        return None
    return parts[2] if parts[2] in WINGS or len(parts) > 3 else TOP


def wing_height(name: str) -> int:
    own = wing(name)
    return len(WINGS) if own == TOP else WINGS[own or ""]


def violations(root: Path) -> list[str]:
    found = modules(root)
    known = set(found)
    graph: dict[str, set[str]] = {}
    broken = []
    for name, path in found.items():
        own = layer(name)
        assert own is None or own in HEIGHTS, f"{path}: a module outside every layer ({sorted(HEIGHTS)})"
        ours = wing(name)
        assert ours in {None, TOP, *WINGS}, f"{path}: a module outside every wing ({sorted(WINGS)})"
        imported = imports(path, known)
        graph[name] = {target for target in imported if target in known and target != name}
        for target in sorted(imported):
            top = target.split(".")[0]
            if own == "retrieval" and top in NOT_IN_RETRIEVAL:
                broken.append(f"{name} imports {target}: the retrieval layer runs with no server")
            if top != root.name or target == root.name or own is None:
                continue
            theirs = layer(target)
            if theirs == own == "opensearch" and wing(target) in {TOP, *WINGS} and ours is not None:
                if wing_height(target) > wing_height(name):
                    broken.append(f"{name} imports {target}: the {wing(target)} wing is above {ours}")
                elif wing_height(target) == wing_height(name) and wing(target) != ours:
                    broken.append(f"{name} imports {target}: the {wing(target)} wing is beside {ours}")
                continue
            if theirs is None or theirs == own:
                continue
            if theirs not in HEIGHTS:
                continue  # reported as its own module's violation
            if HEIGHTS[theirs] >= HEIGHTS[own]:
                where = "above" if HEIGHTS[theirs] > HEIGHTS[own] else "beside"
                broken.append(f"{name} imports {target}: the {theirs} layer is {where} {own}")
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > LONG:
            docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if "\nLong: " not in f"\n{docstring}":
                broken.append(f"{name} has {lines} lines and no 'Long: <reason>' paragraph in its docstring")
    broken.extend(f"an import circle: {' -> '.join(circle)}" for circle in circles(graph))
    return broken


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan's algorithm), as a path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(graph.get(name, ())):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                groups.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    found = []
    for group in groups:
        members = set(group)
        start = min(group)
        path, seen = [start], {start}
        while True:  # walk inside the group until a module repeats: that stretch is a circle
            following = min(target for target in graph[path[-1]] if target in members)
            if following in seen:
                found.append([*path[path.index(following) :], following])
                break
            path.append(following)
            seen.add(following)
    return found


def test_lawindex_keeps_its_layers() -> None:
    assert violations(PACKAGE) == []


def test_every_module_is_in_a_layer() -> None:
    names = modules(PACKAGE)
    assert {layer(name) for name in names} == {None, *HEIGHTS}


def test_every_wing_holds_modules() -> None:
    assert {wing(name) for name in modules(PACKAGE)} == {None, TOP, *WINGS}


# ---- each rule fails when broken, on a tree made here ------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "indexer"
    for name, text in {"__init__.py": "", "errors.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            (root / parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    return root


LAWFUL = {
    "retrieval/corpus.py": "from indexer.errors import BadInput\nimport numpy\n",
    "retrieval/reference.py": "from indexer.retrieval import corpus\n",
    "opensearch/cluster/schema.py": "FIELD = 'words'\n",
    "opensearch/read/query.py": "from opensearchpy import OpenSearch\nfrom indexer.retrieval.reference import x\n"
    "from indexer.opensearch.cluster.schema import FIELD\n",
    "opensearch/write/load.py": "from indexer.opensearch.cluster.schema import FIELD\n",
    "opensearch/verify.py": "from indexer.opensearch.read.query import ask\n",
    "node/node.py": "import subprocess\nfrom indexer.errors import NodeError\n",
    "service/serve.py": "from indexer.opensearch.read.query import ask\nfrom indexer.node import node\n",
    "cli/ask.py": "from indexer.service import serve\n",
}


def test_a_lawful_tree_passes(tmp_path: Path) -> None:
    assert violations(_tree(tmp_path, LAWFUL)) == []


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        (
            "retrieval/scoring.py",
            "from opensearchpy import OpenSearch\n",
            "indexer.retrieval.scoring imports opensearchpy: the retrieval layer runs with no server",
        ),
        (
            "retrieval/scoring.py",
            "def f():\n    import opensearchpy.helpers\n",
            "indexer.retrieval.scoring imports opensearchpy.helpers: the retrieval layer runs with no server",
        ),
        (
            "retrieval/scoring.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from indexer.opensearch.read.query import ask\n",
            "indexer.retrieval.scoring imports indexer.opensearch.read.query: the opensearch layer is above retrieval",
        ),
        (
            "opensearch/write/load.py",
            "from indexer.service import serve\n",
            "indexer.opensearch.write.load imports indexer.service.serve: the service layer is above opensearch",
        ),
        (
            "opensearch/write/load.py",
            "from indexer.node.node import start\n",
            "indexer.opensearch.write.load imports indexer.node.node: the node layer is above opensearch",
        ),
        (
            "opensearch/write/load.py",
            "def f():\n    from indexer.opensearch.read.vectors import Meaning\n",
            "indexer.opensearch.write.load imports indexer.opensearch.read.vectors: the read wing is beside write",
        ),
        (
            "opensearch/read/query.py",
            "from indexer.opensearch.write import load\n",
            "indexer.opensearch.read.query imports indexer.opensearch.write.load: the write wing is beside read",
        ),
        (
            "opensearch/trust/integrity.py",
            "from indexer.opensearch.write.generations import swap\n",
            "indexer.opensearch.trust.integrity imports indexer.opensearch.write.generations: "
            "the write wing is above trust",
        ),
        (
            "opensearch/cluster/connection.py",
            "def f():\n    from indexer.opensearch import verify\n",
            "indexer.opensearch.cluster.connection imports indexer.opensearch.verify: the top wing is above cluster",
        ),
        (
            "service/engines.py",
            "import indexer.cli.ask\n",
            "indexer.service.engines imports indexer.cli.ask: the cli layer is above service",
        ),
        (
            "retrieval/corpus.py",
            "from indexer.retrieval.words import words\n",
            "an import circle: indexer.retrieval.corpus -> indexer.retrieval.words -> indexer.retrieval.corpus",
        ),
        (
            "retrieval/long.py",
            '"""A module with a docstring but no reason."""\n' + "x = 1\n" * LONG,
            f"indexer.retrieval.long has {LONG + 1} lines and no 'Long: <reason>' paragraph in its docstring",
        ),
    ],
)
def test_each_rule_fails_when_broken(tmp_path: Path, file: str, text: str, expected: str) -> None:
    files = {**LAWFUL, "retrieval/words.py": "from indexer.retrieval.corpus import Law\n", file: text}
    assert violations(_tree(tmp_path, files)) == [expected]


def test_a_long_module_with_its_reason_passes(tmp_path: Path) -> None:
    text = '"""A module.\n\nLong: one state machine, read top to bottom."""\n' + "x = 1\n" * LONG
    assert violations(_tree(tmp_path, {**LAWFUL, "retrieval/long.py": text})) == []
