"""The exit codes the docs promise, read from the docs themselves: docs/exit-codes.md's table of errors (generated
from indexer/errors.py) and docs/bad-input.md's catalogue, so that a test holds each documented case to its code
(tests/unit/test_documented_exits.py without a server, tests/integration/test_documented_exits_cluster.py with one)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"

# The rows of docs/bad-input.md that tests/integration/test_documented_exits_cluster.py runs against a node (by
# Row.key); tests/unit/test_documented_exits.py runs those that need none, and names where the rest are held.
ON_A_NODE = frozenset(
    {
        "a state with no index yet",
        "an index named like the alias (`lawindex",
        "`rollback --to` a name that is no index ",
        "`rollback --to` an index that is not one",
    }
)


@dataclass(frozen=True)
class Row:
    """One case of docs/bad-input.md: what is given, what lawindex says, and the exit codes it may give."""

    given: str
    said: str
    exits: frozenset[int]

    @property
    def key(self) -> str:
        """The row's name in the tests: the start of what is given (enough to tell every row apart)."""
        return self.given[:40]


def catalogue() -> list[Row]:
    """Every row of docs/bad-input.md's table, section headings left out."""
    rows = []
    for line in (DOCS / "bad-input.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith(("| input ", "| ---")):
            continue
        if line.startswith("| **"):  # a section's heading
            continue
        given, said, exits = (cell.strip() for cell in re.split(r"(?<!\\) \| ", line.strip().strip("|").strip()))
        numbers = {int(n) for n in re.findall(r"\d+", exits)}
        if "–" in exits:  # a range, 2–4
            low, high = sorted(numbers)
            numbers = set(range(low, high + 1))
        rows.append(Row(given, said, frozenset(numbers)))
    return rows


def error_codes() -> dict[str, int]:
    """docs/exit-codes.md's generated table: each error class of indexer/errors.py and its exit code."""
    codes = {}
    for line in (DOCS / "exit-codes.md").read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| (\d+) \| `(\w+)` \|", line)
        if found:
            codes[found.group(2)] = int(found.group(1))
    return codes
