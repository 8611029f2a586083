"""`python3 -m indexer.node.fetch`: what a first `lawindex opensearch start` waits for, made while pip installs.

scripts/demo runs it from the source tree (PYTHONPATH=.) on a bare machine, in three parts (issue 48.5):

- `python3 -m indexer.node.fetch [--version V]`, before pip, standard library only: the distribution
  (downloaded, checked, unpacked) and, beside it, the lawindex plugin's compile jars and classes (javac);
- `--requirements`: the two lines of pyproject.toml that a start needs installed, pydantic (the node's record)
  and wordllama (the embedder's files, which go into the plugin's jar), which the demo installs first;
- `--start PORT`, once those two are installed: the node started as `lawindex opensearch start --port PORT`
  starts it (the same record), green while pip installs what the first answer needs;
- `--requirements answer`: the lines of what `lawindex load` and `lawindex ask` need besides (ANSWER), then
  the names of what those import of their own dependencies (ANSWER_IMPORTS), which the demo installs without
  pip's resolver while the node starts; `--check answer` says whether the first answer's modules import (if
  not, the demo installs ANSWER with its dependencies); then the demo loads the state asked about and answers
  from the source tree while pip installs the rest (the service's, eval's, a secured node's) and lawindex.

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
# eval's (ir-measures, matplotlib, scipy: a load sums a batch token by token without it, the same bytes), the
# page's (jinja2) or a secured node's (cryptography, bcrypt).
ANSWER = ("opensearch-py", "orjson", "typer", "rich", "numpy", "tokenizers", "safetensors")
# What those import of their own dependencies, installed with them without pip's resolver (`--no-deps`): not
# what they depend on and the first answer never imports (opensearch-py's gRPC transport, grpcio and protobuf;
# tokenizers' model hub client, huggingface-hub with hf-xet, httpx, fsspec, tqdm, PyYAML), which took two
# thirds of that pip's CPU beside the node's start. tests/unit/test_first_start.py holds that the two commands
# import nothing else; should a newer release import more, `--check answer` says what is missing and the demo
# installs ANSWER with its dependencies instead.
ANSWER_IMPORTS = (
    "certifi", "charset-normalizer", "Events", "idna", "python-dateutil", "requests", "urllib3",  # opensearch-py
    "annotated-doc", "shellingham",  # typer
    "markdown-it-py", "mdurl", "pygments",  # rich
)  # fmt: skip
NEEDS = {"start": FIRST, "answer": ANSWER}
# What the first answer imports: the commands' modules, the load's and the engine's.
ANSWER_MODULES = ("indexer.cli", "indexer.opensearch.write.load", "indexer.opensearch.read.engine")


def requirements(pyproject: Path, names: tuple[str, ...] = FIRST) -> list[str]:
    """The lines of `pyproject`'s dependencies that name `names`' distributions, in their order."""
    found = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    named = {re.split(r"[\s\[<>=!~;]", line, maxsplit=1)[0].lower(): line for line in found}
    return [named[name] for name in names]


def missing(modules: tuple[str, ...] = ANSWER_MODULES) -> list[str]:
    """What importing `modules` could not find (a module's name, and who wanted it), none when all import."""
    import importlib

    gaps: list[str] = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            gaps.append(f"{error.name or error} (imported by {module})")
    return gaps


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
    parser.add_argument(
        "--check", choices=["answer"], help="exit 1 naming what the first answer's modules cannot import"
    )
    asked = parser.parse_args(argv)
    if asked.requirements:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        lines = requirements(pyproject, NEEDS[asked.requirements])
        print("\n".join(lines + (list(ANSWER_IMPORTS) if asked.requirements == "answer" else [])))
        return 0
    if asked.check:
        gaps = missing()
        for gap in gaps:
            print(f"lawindex fetch: the first answer cannot import {gap}", file=sys.stderr)
        return 1 if gaps else 0
    version = asked.version or default_version()
    failures = start(version, asked.start) if asked.start else ahead(version)
    for failure in failures:
        print(f"lawindex fetch: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
