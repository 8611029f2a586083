"""Every path and module a docstring names is there: a file of the repository (`indexer/cache.py`, `docs/cli.md`,
`tests/spec_port.py`, or `read/query.py` from inside indexer/opensearch/) or a module and its name
(`indexer.retrieval.embedding`, `indexer.opensearch.cluster.fast_search.FastSearch`). A docstring that names a
file which moved, or the shared spec as if the repository held it (it lies beside the repository, at
../shared/spec/retrieve.md; docs/contract.md is the repository's own statement of it), sends a reader nowhere.
docs/architecture.md is made of these docstrings.

Read from the source (ast), nothing imported: the docstrings of every module, class and function of the Python
files under the repository (and its Python scripts without a suffix)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {".git", "node_modules", "target", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist"}
# A name the docstrings give as a file of the repository that it is not: the shared spec's folder.
NOT_HERE = {"spec"}
# A relative path: words joined by slashes (`indexer/x/y.py`, `read/query.py`, `docs/*.md`, `corpora/<STATE>.jsonl`).
PATH = re.compile(r"(?<![\w./:<>*-])([\w.<>*-]+(?:/[\w.<>*-]+)+)")
# A dotted module name of the repository's own packages, perhaps followed by a name it defines.
DOTTED = re.compile(r"(?<![\w./-])((?:indexer|tests|benchmarks)(?:\.[A-Za-z_]\w*)+)")


def python_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        if SKIPPED & set(path.relative_to(ROOT).parts) or not path.is_file():
            continue
        if path.suffix == ".py":
            yield path
        elif not path.suffix and path.parent.name in ("scripts", "benchmarks"):
            with path.open("rb") as file:
                first = file.readline()
            if first.startswith(b"#!") and b"python" in first:
                yield path


def docstrings(source: str) -> Iterator[tuple[str, str]]:
    """(where, docstring) for the module and each class and function of `source`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield ("module" if isinstance(node, ast.Module) else node.name), text


def _bases(module: Path) -> list[Path]:
    """The folders a path in `module`'s docstrings may be read from: the repository's root, then each folder
    from the module's own up to the root (`read/query.py` in indexer/opensearch/verify.py)."""
    folders = [ROOT]
    folder = module.parent
    while folder != ROOT and ROOT in folder.parents:
        folders.append(folder)
        folder = folder.parent
    return folders


def _exists(base: Path, path: str) -> bool:
    """Whether `path` names something under `base`; a glob (`docs/*.md`) must match something, and of a
    placeholder (`corpora/<STATE>.jsonl`, `plugin/.../X.java`) the folders before it must be there."""
    parts = path.split("/")
    for index, part in enumerate(parts):
        if "*" in part:
            return any(base.glob(path))
        if "<" in part or part == "...":
            return (base / "/".join(parts[:index])).is_dir()
    return (base / path).exists()


def missing_paths(module: Path, text: str) -> list[str]:
    bases = _bases(module)
    missing = []
    for found in PATH.findall(text):
        path = found.rstrip(".")
        first = path.split("/")[0]
        if first in NOT_HERE:
            missing.append(path)
            continue
        # Only what reads as a path of the repository: its first folder is one of the root's, or of the folders
        # around the module (not `q/s`, `bin/opensearch` inside a node's home, `_nodes/stats` of the REST API).
        if first in ("", ".", "..") or not any((base / first).is_dir() for base in bases):
            continue
        if not any(_exists(base, path) for base in bases):
            missing.append(path)
    return missing


def _defines(tree: ast.AST, name: str) -> ast.AST | None:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return node
        if isinstance(node, ast.Import | ast.ImportFrom) and any(
            (alias.asname or alias.name.split(".")[0]) == name for alias in node.names
        ):
            return node
    return None


def resolves(dotted: str) -> bool:
    """Whether `dotted` is a module of the repository, or a module and names defined in it (a class's method)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        stem = ROOT.joinpath(*parts[:cut])
        for file in (stem.with_suffix(".py"), stem / "__init__.py"):
            if not file.is_file():
                continue
            node: ast.AST | None = ast.parse(file.read_text(encoding="utf-8"))
            for name in parts[cut:]:
                if node is None:
                    break
                if (stem / name).is_dir() or (stem / f"{name}.py").is_file():
                    return False  # a module the search above would have found
                node = _defines(node, name) if isinstance(node, ast.Module | ast.ClassDef) else None
            return node is not None
        if stem.is_dir():
            return cut == len(parts)  # a folder of modules, named as a namespace
    return False


def missing_names(text: str) -> list[str]:
    return [found.rstrip(".") for found in DOTTED.findall(text) if not resolves(found.rstrip("."))]


def test_every_path_and_module_a_docstring_names_is_there() -> None:
    stale = []
    checked = 0
    for module in python_files():
        for where, text in docstrings(module.read_text(encoding="utf-8")):
            checked += len(PATH.findall(text)) + len(DOTTED.findall(text))
            stale += [f"{module.relative_to(ROOT)} ({where}): {path}" for path in missing_paths(module, text)]
            stale += [f"{module.relative_to(ROOT)} ({where}): {name}" for name in missing_names(text)]
    assert checked > 300  # the docstrings were read
    assert stale == []


def test_what_the_check_finds() -> None:
    here = ROOT / "indexer" / "opensearch" / "read" / "query.py"
    assert missing_paths(here, "see indexer/cache.py, docs/cli.md, tests/spec_port.py and docs/*.md") == []
    assert missing_paths(here, "beside it, read/rescore.py; corpora/<STATE>.jsonl; plugin/.../X.java") == []
    assert missing_paths(here, "q/s, p50/p99, bin/opensearch of a home, _nodes/stats, ../shared/spec/retrieve.md") == []
    assert missing_paths(here, "indexer/moved.py, docs/gone.md, read/gone.py and docs/*.txt.") == [
        "indexer/moved.py",
        "docs/gone.md",
        "read/gone.py",
        "docs/*.txt",
    ]
    assert missing_paths(here, "as spec/retrieve.md ranks them") == ["spec/retrieve.md"]
    assert missing_names("indexer.retrieval.embedding and indexer.opensearch.cluster.fast_search.FastSearch") == []
    assert missing_names("tests.spec_port.CachedSpec, indexer.cli.main, indexer.opensearch") == []
    assert missing_names("indexer.embedding, indexer.opensearch.connection.FastSearch, indexer.cache.nothing.") == [
        "indexer.embedding",
        "indexer.opensearch.connection.FastSearch",
        "indexer.cache.nothing",
    ]
