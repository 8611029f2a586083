"""`python3 -m indexer.node.fetch`: what a first `lawindex opensearch start` waits for, made while pip installs.

scripts/demo runs it from the source tree (PYTHONPATH=.) on a bare machine, in three parts (issue 48.5):

- `python3 -m indexer.node.fetch [--version V]`, before pip, standard library only: the distribution
  (downloaded, checked, unpacked) and, beside it, the lawindex plugin's compile jars and classes (javac);
- `--requirements`: the two lines of pyproject.toml that a start needs installed, pydantic (the node's record)
  and wordllama (the embedder's files, which go into the plugin's jar), which the demo installs first;
- `--start PORT`, once those two are installed: the node started as `lawindex opensearch start --port PORT`
  starts it (the same record), green while pip installs what the first answer needs;
- `--requirements answer`: the lines of what `lawindex load` and `lawindex ask` need besides (ANSWER), which
  the demo installs while the node starts, then loads the state asked about and answers from the source tree
  while pip installs the rest (the service's, eval's, a secured node's) and lawindex itself.

Each step finds in the cache what another made, or waits for it, saying so. A failure is one line and exit 1:
the start that follows does the same work and says the same.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
import tomllib
from pathlib import Path

from indexer.errors import LawindexError
from indexer.node import distribution, plugin
from indexer.node.host import writable_cache
from indexer.node.pins import default_version

# The distributions a start needs before any other: its record's models, the embedder's files.
FIRST = ("pydantic", "wordllama")
# What `lawindex load` and `lawindex ask` need besides FIRST (wordllama's files only: its own dependencies are
# tokenizers and safetensors, which read them, and numpy): not the service's (fastapi, uvicorn, prometheus-client),
# eval's (ir-measures, matplotlib), the page's (jinja2) or a secured node's (cryptography, bcrypt).
# tests/unit/test_first_start.py holds that the two commands import nothing else.
ANSWER = ("opensearch-py", "orjson", "typer", "rich", "numpy", "tokenizers", "safetensors", "scipy")
NEEDS = {"start": FIRST, "answer": ANSWER}


def requirements(pyproject: Path, names: tuple[str, ...] = FIRST) -> list[str]:
    """The lines of `pyproject`'s dependencies that name `names`' distributions, in their order."""
    found = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    named = {re.split(r"[\s\[<>=!~;]", line, maxsplit=1)[0].lower(): line for line in found}
    return [named[name] for name in names]


def ahead(version: str) -> list[str]:
    """The distribution and the plugin's classes for `version`, side by side; the failures' messages."""
    cache = writable_cache(None)
    failures: list[str] = []

    def distribution_home() -> None:
        try:
            distribution.home(version, cache)
        except LawindexError as error:
            failures.append(error.message)

    beside = threading.Thread(target=distribution_home, name="distribution")
    beside.start()
    try:
        plugin.compiled(version, cache)
    except LawindexError as error:
        failures.append(error.message)
    beside.join()
    return failures


def start(version: str, port: int) -> list[str]:
    """The node on `port`, as `lawindex opensearch start` starts it, said as it says it; the failure's message."""
    from indexer.node import node  # pydantic: installed by now (--requirements)

    began = time.monotonic()
    said = f"starting OpenSearch {version} on port {port}, while pip installs what the first answer needs ..."
    print(said, file=sys.stderr)
    try:
        found = node.start(version=version, port=port)
    except LawindexError as error:
        return [error.message]
    print(f"OpenSearch {found.version} green in {time.monotonic() - began:.1f} s: {found.describe()}", file=sys.stderr)
    return []


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m indexer.node.fetch", description=__doc__.split("\n")[0])
    parser.add_argument("--version", default=None, help="OpenSearch version [default: the pinned 3.x]")
    parser.add_argument(
        "--requirements",
        nargs="?",
        const="start",
        choices=sorted(NEEDS),
        help="print what a start (or the first answer) needs installed first",
    )
    parser.add_argument("--start", type=int, metavar="PORT", help="start the node on PORT")
    asked = parser.parse_args(argv)
    if asked.requirements:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        print("\n".join(requirements(pyproject, NEEDS[asked.requirements])))
        return 0
    version = asked.version or default_version()
    failures = start(version, asked.start) if asked.start else ahead(version)
    for failure in failures:
        print(f"lawindex fetch: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
