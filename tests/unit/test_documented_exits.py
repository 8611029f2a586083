"""Each exit code the docs promise, held to what the command does: docs/exit-codes.md's errors (generated from
indexer/errors.py) and every case of docs/bad-input.md that runs without a server, run here as a user runs it.
Every row of the catalogue is either run here, run against a node (tests/integration/test_documented_exits_cluster.py),
or named below as held by another test: a row added to the docs fails this test until it is one of the three."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer

from indexer import errors
from indexer.cli._common import reporting
from tests.documented import ON_A_NODE, catalogue, error_codes
from tests.unit.commands import CORPORA, NOWHERE, run
from tests.unit.laws import row

EVAL = Path(__file__).resolve().parents[2] / "eval"
REFERENCE = ("--engine", "reference")


@dataclass(frozen=True)
class Case:
    """A command for one row: its arguments (FOLDER in them is the case's own folder, made by `files`)."""

    args: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    input: bytes | None = None
    env: dict[str, str] | None = None
    exit: int | None = None  # which of the row's codes, where it gives several (else its one)
    fifo: str | None = None


def _corpus(*lines: str | bytes) -> dict[str, bytes]:
    return {"TX.jsonl": b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines)}


ASK = ("ask", "TX", "fire hydrant", *REFERENCE, "--corpora", "FOLDER")
JUDGED = b'{"state": "OH", "question": "how old til i can get my temps", "relevant": ["OH-S001"]}\n'
CASES: dict[str, Case] = {
    "a line that is not JSON": Case(ASK, _corpus(row(), "{not json")),
    "a missing or mistyped field (`law` absent": Case(ASK, _corpus(row(law=None))),
    "an empty `law` (or blank)": Case(ASK, _corpus(row(law=" "))),
    "a duplicate id": Case(ASK, _corpus(row(), row())),
    "a file name that is not a state code (`te": Case(
        ("load", "FOLDER", "--dry-run", "--url", NOWHERE), {"texas.jsonl": row().encode() + b"\n"}
    ),
    "an empty file, or only blank lines": Case(ASK, _corpus("", "  ")),
    "bytes that are not UTF-8": Case(ASK, _corpus(row(), row(id="TX-2").encode()[:-2] + b'\xff"}')),
    "a UTF-8 byte-order mark, CRLF line ends": Case(ASK, {"TX.jsonl": b"\xef\xbb\xbf" + row().encode() + b"\r\n"}),
    "a byte-order mark at the start of a later ": Case(ASK, _corpus(row(), b"\xef\xbb\xbf" + row(id="TX-2").encode())),
    "a directory with no corpus files": Case(ASK, {"notes.txt": b"x"}),
    "a folder that does not exist, or is a sym": Case(("ask", "TX", "q", *REFERENCE, "--corpora", "FOLDER/none")),
    "a corpus file that is not a regular file:": Case(ASK, {"MD.jsonl": row(id="MD-1").encode()}, fifo="TX.jsonl"),
    "empty, or only spaces": Case(("ask", "TX", "   ", *REFERENCE, "--corpora", str(CORPORA))),
    "only stopwords (`how can i do it`), only ": Case(
        ("ask", "TX", "how can i do it", *REFERENCE, "--corpora", str(CORPORA))
    ),
    "a fusion parameter the way does not take": Case(
        ("ask", "TX", "fire hydrant", "--by", "words", "--rrf-k", "5", *REFERENCE, "--corpora", str(CORPORA))
    ),
    "2,001 characters": Case(("ask", "TX", "a" * 2001, *REFERENCE, "--corpora", str(CORPORA))),
    "bytes that are not UTF-8 on standard inpu": Case(
        ("ask", "TX", "--from", "-", *REFERENCE, "--corpora", str(CORPORA)), input=b"fire hydrant\n\xff\n"
    ),
    "`--from -` (standard input) without line ": Case(
        ("ask", "TX", "--from", "-", *REFERENCE, "--corpora", str(CORPORA)), input=b"x" * 70_000
    ),
    "a FIFO (even one nobody writes to), a dev": Case(
        ("eval", "FOLDER/fifo", *REFERENCE, "--corpora", str(EVAL / "corpora")), fifo="fifo"
    ),
    "a line over 1 MiB (eval's files) or 64 Ki": Case(
        ("eval", "FOLDER/judged.jsonl", *REFERENCE, "--corpora", str(EVAL / "corpora")),
        {"judged.jsonl": JUDGED + b"x" * (1 << 20 | 1)},
    ),
    "bytes that are not UTF-8 (eval's files, `": Case(
        ("eval", "FOLDER/judged.jsonl", *REFERENCE, "--corpora", str(EVAL / "corpora")),
        {"judged.jsonl": JUDGED + b'{"state": "OH\xff"}\n'},
    ),
    "a UTF-8 byte-order mark at the start, CRL": Case(
        ("eval", "FOLDER/judged.jsonl", "--by", "words", *REFERENCE, "--corpora", str(EVAL / "corpora")),
        {"judged.jsonl": b"\xef\xbb\xbf" + JUDGED.replace(b"\n", b"\r\n")},
    ),
    "a question that fails in a `--from` batch": Case(
        ("ask", "TX", "--from", "-", *REFERENCE, "--corpora", str(CORPORA)), input=b"a" * 2001 + b"\nhydrant\n"
    ),
    "an unknown state (`ZZ`), or `../x`, `*`, ": Case(("ask", "../x", "q", "--url", NOWHERE)),
    "a state without a corpus file (reference ": Case(("ask", "WY", "q", *REFERENCE, "--corpora", str(CORPORA))),
    "a bad URL (`not-a-url`, `ftp://...`, `htt": Case(("ask", "TX", "q", "--url", "ftp://127.0.0.1")),
    "an impossible URL: port 0 or an empty por": Case(("ask", "TX", "q", "--url", "http://127.0.0.1:0")),
    "a URL carrying credentials (`http://user:": Case(("ask", "TX", "q", "--url", "http://user:pw@127.0.0.1:9")),
    "a comma-separated `--url` with an empty e": Case(("ask", "TX", "q", "--url", f"{NOWHERE},")),
    "an unreachable URL (nothing listens)": Case(("ask", "TX", "q", "--url", NOWHERE)),
    "`LAWINDEX_TIMEOUT`/`LAWINDEX_RETRIES` not": Case(
        ("ask", "TX", "q", "--url", NOWHERE), env={"LAWINDEX_TIMEOUT": "soon"}
    ),
    "an option that does not exist (`--passwor": Case(("ask", "TX", "q", "--password", "x")),
    "`start --nodes 0` or `--nodes 6`": Case(("opensearch", "start", "--nodes", "6", "--port", "9")),
    "`--setting` not `key.name=value`, or one ": Case(
        ("opensearch", "start", "--setting", "http.port=1", "--port", "9")
    ),
}  # fmt: skip

# Rows held by the files the catalogue names at its top: a process that must be a process (a pipe, a full disk,
# signals), a file of gigabytes, a cluster to break (ownership, damage, locks, blocks, security, faults, nodes).
ELSEWHERE = {
    "a word (a run of letters and digits) or a": "tests/unit/test_bad_input.py",
    "an id over 508 bytes (OpenSearch's `_id` ": "tests/unit/test_bad_input.py",
    "a line of several megabytes": "tests/unit/test_bad_input.py",
    "a corpus file that is a symlink loop (`TX": "tests/unit/test_bad_input.py",
    "a corpus file over 256 MiB": "tests/unit/test_edges.py",
    "one bad file among good ones": "tests/unit/test_bad_input.py",
    "a file rewritten while it is read": "tests/unit/test_bad_input.py",
    "a state of 50,000 laws": "tests/unit/test_bad_input.py",
    "2,000 characters of distinct words": "tests/unit/test_bad_input.py",
    "control characters (NUL, BEL, ESC, backsp": "tests/unit/test_bad_input.py",
    "right-to-left text (Hebrew, Arabic), dire": "tests/unit/test_bad_input.py",
    "query syntax (`*`, `AND OR NOT`, `field:v": "tests/integration/test_hostile.py",
    "a file over 64 MiB": "tests/unit/test_files.py",
    "a question whose words pass the cluster's": "tests/integration/test_limits.py",
    "ties wider than the index's result window": "tests/integration/test_limits.py",
    "`--family` of more than 1,000 rows": "tests/integration/test_limits.py",
    "the state's alias on an index lawindex di": "tests/integration/test_ownership.py",
    "the state's alias on another state's (or ": "tests/integration/test_ownership.py",
    "the state's alias on several indices, one": "tests/integration/test_ownership.py",
    "the state's alias on several of lawindex'": "tests/integration/test_ownership.py",
    "a copy of a lawindex index (reindex, clon": "tests/integration/test_ownership.py",
    "an old generation another alias points t": "tests/integration/test_ownership.py",
    "a `lawindex-locks` index lawindex did not": "tests/integration/test_ownership.py",
    "the statistics document deleted": "tests/integration/test_damage.py",
    "the statistics altered (one number, one d": "tests/integration/test_damage.py",
    "malformed statistics, or another index's ": "tests/integration/test_damage.py",
    "the serving index closed": "tests/integration/test_damage.py",
    "a law document deleted from the serving i": "tests/integration/test_damage.py",
    "two loads of one state at once (threads, ": "tests/integration/test_lock.py",
    "another load holds the state's lock past ": "tests/integration/test_lock.py",
    "a lock whose lease ran out, or whose hold": "tests/integration/test_lock.py",
    "a load whose lock was taken over (its lea": "tests/integration/test_lock.py",
    "an answer lost after the node applied it ": "tests/integration/test_failover.py",
    "a load that fails in one state of several": "tests/integration/test_faults.py",
    "SIGINT / SIGTERM during `lawindex load` (": "tests/integration/test_signals.py",
    "a server at the URL that is not OpenSearc": "tests/unit/test_edges.py",
    "a cluster-wide read-only block (`cluster.": "tests/integration/test_edges_cluster.py",
    "a block on reads (`index.blocks.read`)": "tests/integration/test_bad_input_cluster.py",
    "a user without a permission a command nee": "tests/integration/test_secure.py",
    "a load whose new index cannot be green wi": "tests/integration/test_replicas.py",
    "a wrong password (a cluster answering 401": "tests/integration/test_bad_input_cluster.py",
    "`https://` to a cluster whose certificate": "tests/integration/test_secure.py",
    "`https://` to a plain-HTTP port": "tests/integration/test_bad_input_cluster.py",
    "`http://` to a TLS (https) port": "tests/integration/test_secure.py",
    "a cluster that accepts connections and ne": "tests/unit/test_edges.py",
    "one node of several URLs alive and silent": "tests/integration/test_failover.py",
    "every node of several URLs silent": "tests/integration/test_failover.py",
    "a block set on the index a load is fillin": "tests/integration/test_edges_cluster.py",
    "standard output closed early (`lawindex a": "tests/unit/test_edges.py",
    "standard output full (`> /dev/full`)": "tests/unit/test_edges.py",
    "a cache directory that cannot be written ": "tests/unit/test_node.py",
    "run as root with the cache under a privat": "tests/unit/test_node.py",
    "`stop`/`logs --node K` past the cluster's": "tests/integration/test_cluster.py",
    "a version outside 2.11.0 to 3.9.x (`--ver": "tests/unit/test_versions.py",
    "a version with no distribution zip (`--ve": "tests/unit/test_distribution_digests.py",
    "a zip Maven Central publishes with no dig": "tests/unit/test_distribution_digests.py",
    "`lawindex load` against a cluster outside": "tests/unit/test_load_version.py",
    "no Java that fits the version": "tests/unit/test_node.py",
    "`lawindex opensearch image` with no Docke": "tests/unit/test_image.py",
    "`start --runtime docker` with no engine, ": "tests/unit/test_image.py",
}

# Each dict above is keyed by the start of a row (Row.key): what is given, cut at 40 characters.
CASES = {key[:40]: case for key, case in CASES.items()}
ELSEWHERE = {key[:40]: path for key, path in ELSEWHERE.items()}
ROWS = {one.key: one for one in catalogue()}
ROOT = Path(__file__).resolve().parents[2]


def test_every_documented_case_is_held_by_a_test() -> None:
    assert len(ROWS) == len(catalogue()), "two rows of docs/bad-input.md begin alike: lengthen Row.key"
    held = set(CASES) | ON_A_NODE | set(ELSEWHERE)
    assert set(ROWS) - held == set(), "a row of docs/bad-input.md no test holds"
    assert held - set(ROWS) == set(), "a case for a row docs/bad-input.md no longer has"
    assert not set(CASES) & set(ELSEWHERE) and not ON_A_NODE & (set(CASES) | set(ELSEWHERE))
    assert all((ROOT / path).is_file() for path in ELSEWHERE.values())


@pytest.mark.parametrize("key", list(CASES))
def test_a_documented_case_exits_as_the_docs_say(tmp_path: Path, key: str) -> None:
    documented, case = ROWS[key], CASES[key]
    for name, content in case.files.items():
        (tmp_path / name).write_bytes(content)
    if case.fifo is not None:
        os.mkfifo(tmp_path / case.fifo)
    args = [arg.replace("FOLDER", str(tmp_path)) for arg in case.args]
    result = run(*args, input=case.input, env=case.env)
    expected = case.exit if case.exit is not None else min(documented.exits)
    assert expected in documented.exits
    assert result.exit_code == expected, (documented.given, documented.exits, result.output)
    if expected not in (0, 141):
        assert "error: " in result.output or "Usage:" in result.output, result.output


@pytest.mark.parametrize(("name", "code"), sorted(error_codes().items()))
def test_each_documented_error_exits_with_its_code(name: str, code: int) -> None:
    kind = getattr(errors, name)
    assert kind.exit_code == code
    raised: Callable[[], errors.LawindexError] = {
        "CorpusError": lambda: errors.CorpusError("TX.jsonl", 1, "law", "bad"),
        "LoadInterrupted": lambda: errors.LoadInterrupted("stopped", 15),
    }.get(name, lambda: kind("documented"))
    with pytest.raises(typer.Exit) as ended, reporting():
        raise raised()
    # A load stopped by a signal exits as a shell reports it (the table's first part: 130, 143), its class's 5 aside.
    assert ended.value.exit_code == (128 + 15 if name == "LoadInterrupted" else code)


def test_every_error_of_the_package_is_documented() -> None:
    made = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.LawindexError)
    }
    assert made == set(error_codes())
