"""The examples of README.md and docs/*.md as tests: every `$ lawindex ...` line of a fenced block is run,
and its output compared with what the page shows under it, so that a change that breaks the docs fails.

tests/unit/test_readme.py runs the examples that need no server (ask and get, on the reference engine,
which prints exactly what the OpenSearch engine prints); tests/integration/test_readme.py runs the rest
against the test node, page by page in each page's order, each page in a namespace of its own (so that a
page's `lawindex load corpora/` meets no index, as on a fresh machine).

What legitimately varies is normalised on both sides before comparing: seconds, the generation in an
index name, the spaces of a table's padding. A line cut for the page (ending in ` ...`) matches
the line that begins with it. An example followed by no output (often a `# comment` saying what it
does) must only succeed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The pages whose examples are run: README.md, then every docs/*.md."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


# Examples no test can run as written, and why. Keep this list short: everything else runs.
CANNOT_RUN = {
    "lawindex opensearch start": "starts a node on the fixed port 9200 (the tests start their own)",
    "lawindex opensearch status": "shows the node on port 9200, which the tests never use",
    "lawindex opensearch logs": "the log of the node on port 9200",
    "lawindex opensearch stop": "would stop the node on port 9200",
    "lawindex serve": "serves until stopped; tests/integration/test_serve.py starts it and checks every endpoint",
}

# What a test needs: ask and get run on the reference engine too; everything else needs a cluster.
NEEDS_NO_SERVER = ("lawindex ask ", "lawindex get ")


@dataclass(frozen=True)
class Example:
    """One `$ ...` line of a page and the output shown under it."""

    line: int  # 1-based, in the page
    command: str  # the shell command, without `$ ` and without a trailing `# comment`
    expected: tuple[str, ...]
    page: str = "README.md"  # relative to the repository's root

    @property
    def where(self) -> str:
        """`page:line`, for a test's id and its failure."""
        return f"{self.page}:{self.line}"

    @property
    def lawindex(self) -> str:
        """The `lawindex ...` part of the command (after a pipe, if any)."""
        return self.command[self.command.index("lawindex ") :]

    def skipped_because(self) -> str | None:
        """Why this example cannot run in a test, or None."""
        for prefix, reason in CANNOT_RUN.items():
            if self.lawindex.startswith(prefix):
                return reason
        return None


def examples(text: str | None = None, page: Path = README) -> list[Example]:
    """Every `$ ... lawindex ...` line of every fenced block of `page` (python blocks aside), or of `text`."""
    lines = (text if text is not None else page.read_text(encoding="utf-8")).splitlines()
    name = page.relative_to(ROOT).as_posix()
    found: list[Example] = []
    inside = False
    current: tuple[int, str] | None = None
    output: list[str] = []

    def close() -> None:
        nonlocal current, output
        if current is not None:
            found.append(Example(current[0], current[1], tuple(output), name))
        current, output = None, []

    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            if inside:
                close()
            inside = not inside and line.strip() in ("```", "```console", "```shell", "```text")
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            close()
            command = re.sub(r"\s+#\s.*$", "", line[2:]).strip()
            if "lawindex " in command:
                current = (number, command)
        elif current is not None:
            output.append(line)
    return found


def every_example() -> list[Example]:
    """The examples of every page, page by page, each page's in its order."""
    return [example for page in pages() for example in examples(page=page)]


def normalise(line: str) -> str:
    """`line` with what legitimately varies from run to run replaced."""
    line = line.rstrip()
    line = re.sub(r'"seconds": [0-9.e-]+', '"seconds": S', line)
    line = re.sub(r'"index": "[^"]*"', '"index": INDEX', line)
    line = re.sub(r"\bin \d+(\.\d+)?s\b", "in Ns", line)
    if re.search(r"[│┃]", line):  # a table row: its seconds cell, and the padding of every cell
        line = re.sub(r"\b\d+\.\d\d\b(?=\s*[│┃]\s*$)", "S", line)
        line = re.sub(r"[ ]+", " ", line)
    if re.search(r"[━─]", line):  # a table rule: its width follows the cells
        line = re.sub(r"[━─]+", "─", line)
    return line


def differences(example: Example, stdout: str) -> list[str]:
    """What differs between the page's output for `example` and `stdout`; [] when they agree."""
    if not example.expected:
        return []
    got = [normalise(line) for line in stdout.splitlines()]
    want = [normalise(line) for line in example.expected]
    problems = []
    if len(got) != len(want):
        problems.append(f"{len(want)} lines shown, {len(got)} printed")
    for number, (shown, printed) in enumerate(zip(want, got, strict=False), start=1):
        same = printed.startswith(shown[: -len(" ...")]) if shown.endswith(" ...") else printed == shown
        if not same:
            problems.append(f"line {number}: the page shows {shown!r}, printed {printed!r}")
    return problems


def run(example: Example, command: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run `command` (by default the example's) in the repository's root, `lawindex` being this Python's."""
    program = (
        f'lawindex() {{ "{sys.executable}" -c '
        f'\'import sys; from indexer.cli import main; sys.argv[0] = "lawindex"; main()\' "$@"; }}\n'
        f"{command or example.command}\n"
    )
    done = subprocess.run(
        ["bash", "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        # Wide enough that no table wraps: the pages show them whole.
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
