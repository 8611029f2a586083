"""lawindex's public surface, read from the code with `ast` as tests/unit/test_layers.py reads the layers:

- a package's `__all__` names the modules other packages may import (indexer.node's four, each wing's
  own), and an import from another package of a module it does not name fails: what a package keeps to
  itself can change without a reader elsewhere noticing, and what it offers is written in one place;
- no module uses another module's private name (`_name`, imported or read as `module._name`): a name
  another module needs is made public, under a name that says what it is.

Each rule is also shown to fail, on a small tree made here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "indexer"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def declared(path: Path) -> list[str] | None:
    """The `__all__` of a module, or None without one."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list), f"{path}: __all__ is a list"
            return [str(name) for name in value]
    return None


def breaches(root: Path) -> list[str]:
    paths = {module_name(root, path): path for path in sorted(root.rglob("*.py"))}
    packages = {module_name(root, path) for path in root.rglob("__init__.py")}
    offered = {name: declared(paths[name]) for name in packages}
    found: list[str] = []
    for package, names in offered.items():
        if names is None:
            found.append(f"{package} has no __all__")
            continue
        for name in names:
            if f"{package}.{name}" not in paths and not _defines(paths[package], name):
                found.append(f"{package}.__all__ names {name}, which it does not hold")
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules: dict[str, str] = {}  # a name bound in this module -> the lawindex module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                whole = {f"{node.module}.{alias.name}": alias for alias in node.names}
                targets = [target for target in whole if target in paths] or [node.module]
                for target, alias in whole.items():
                    if target in paths:
                        modules[alias.asname or alias.name] = target
                    elif alias.name.startswith("_") and node.module in paths and node.module != name:
                        found.append(f"{name} imports {node.module}.{alias.name}, a private name")
            else:
                continue
            for target in targets:
                parent = target.rpartition(".")[0]
                if target in paths and target not in packages and parent in packages:
                    inside = name == parent or name.startswith(parent + ".")
                    offers = offered[parent]  # None: reported once above, as a package with no __all__
                    if not inside and offers is not None and target.rpartition(".")[2] not in offers:
                        found.append(f"{name} imports {target}, which {parent}.__all__ does not offer")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{name} reads {modules[node.value.id]}.{node.attr}, a private name")
    return sorted(set(found))


def _defines(path: Path, name: str) -> bool:
    """True when the module defines `name` at its top, or answers names through a module `__getattr__`."""
    defined = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return name in defined or "__getattr__" in defined


def test_lawindex_keeps_its_public_surface() -> None:
    assert breaches(PACKAGE) == []


# ---- each rule fails when broken, on a tree made here ------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "indexer"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


LAWFUL = {
    "__init__.py": "__all__ = []\n",
    "node/__init__.py": '__all__ = ["node"]\n',
    "node/node.py": "from indexer.node import pins\nfrom indexer.node.pins import PINNED\n\ndef _start(): ...\n",
    "node/pins.py": "PINNED = 1\n",
    "cli/__init__.py": '__all__ = ["main"]\n\ndef main() -> None: ...\n',
    "cli/ask.py": "from indexer.node import node\nfrom indexer.node.node import start\n",
}


def test_a_lawful_tree_passes(tmp_path: Path) -> None:
    assert breaches(_tree(tmp_path, LAWFUL)) == []


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        ("cli/ask.py", "from indexer.node import pins\n", "indexer.cli.ask imports indexer.node.pins, which "),
        ("cli/ask.py", "def f():\n    import indexer.node.pins\n", "indexer.cli.ask imports indexer.node.pins"),
        ("cli/ask.py", "from indexer.node.node import _start\n", "indexer.cli.ask imports indexer.node.node._start"),
        (
            "cli/ask.py",
            "from indexer.node import node\nnode._start()\n",
            "indexer.cli.ask reads indexer.node.node._start",
        ),
        ("node/__init__.py", '__all__ = ["node", "gone"]\n', "indexer.node.__all__ names gone, which it does not"),
        ("node/__init__.py", '"""No list."""\n', "indexer.node has no __all__"),
    ],
)
def test_each_rule_fails_when_broken(tmp_path: Path, file: str, text: str, expected: str) -> None:
    found = breaches(_tree(tmp_path, {**LAWFUL, file: text}))
    assert len(found) == 1 and found[0].startswith(expected), found
