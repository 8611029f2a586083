"""Every file a command reads is read within bounds (indexer.retrieval.files): a FIFO, a device, a directory
refused before a byte is read and without waiting on `open`; a file past its size refused by its size; a line
past its length refused naming the file and the line; a byte-order mark at the start taken off.

Driven through the command, as its own process with a time limit: a FIFO nobody writes to hung
`lawindex eval` at `open`, and `lawindex eval /dev/zero` grew to 22 GB before the kernel killed it."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer.errors import CorpusError
from indexer.evaluation import evaluate as evaluation
from indexer.retrieval import files
from tests.unit.commands import NOWHERE

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
HANDBOOK = ROOT / "eval" / "handbook.jsonl"
MAIN = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"


def process(*args: str, memory: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """`lawindex ARGS` as its own process, a minute at most (a hang fails, it does not stall the run), with at
    most `memory` bytes of address space where given; never a traceback."""

    def limited() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    done = subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        capture_output=True,
        timeout=60,
        preexec_fn=limited,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")
    return done


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "fifo")
    return folder / "fifo"


def _sparse(folder: Path) -> Path:
    path = folder / "huge.jsonl"
    with path.open("wb") as handle:
        handle.truncate((64 << 20) + 1)  # one byte past every bound of these commands; sparse, costs no disk
    return path


SPECIAL: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a FIFO": (_fifo, "not a regular file (a FIFO)"),
    "/dev/zero": (lambda _: Path("/dev/zero"), "not a regular file (a character device)"),
    "/dev/null": (lambda _: Path("/dev/null"), "not a regular file (a character device)"),
    "a directory": (lambda folder: folder, "not a regular file (a directory)"),
    "a file past the bound": (_sparse, "bytes, more than the 67,108,864 accepted"),
}


def _judged_trec(folder: Path) -> Path:
    path = folder / "qrels.txt"
    path.write_text("OH-001 0 OH-S001 1\n", encoding="utf-8")
    return path


# Each command and option that reads a file, with the file put in place of ITS.
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "eval FILE": lambda its, _: [
        "eval", str(its), "--engine", "reference", "--corpora", str(ROOT / "eval" / "corpora"),
    ],
    "eval QRELS --questions FILE": lambda its, folder: [
        "eval", str(_judged_trec(folder)), "--questions", str(its), "--engine", "reference", "--corpora",
        str(ROOT / "eval" / "corpora"),
    ],
    "eval --against FILE": lambda its, _: [
        "eval", str(HANDBOOK), "--by", "words", "--against", str(its), "--engine", "reference", "--corpora",
        str(ROOT / "eval" / "corpora"),
    ],
    "ask --from FILE": lambda its, _: [
        "ask", "TX", "--from", str(its), "--engine", "reference", "--corpora", str(CORPORA),
    ],
    "verify --from FILE": lambda its, _: ["verify", "TX", "--from", str(its), "--url", NOWHERE],
}  # fmt: skip


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(SPECIAL))
def test_a_file_that_is_not_a_regular_one_or_too_large_is_refused_unread(
    tmp_path: Path, command: str, kind: str
) -> None:
    make, said = SPECIAL[kind]
    its = make(tmp_path)
    done = process(*COMMANDS[command](its, tmp_path))
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2, lines
    assert lines[0].startswith(f"error: {its}: ") and said in lines[0], lines


def test_eval_of_dev_zero_is_refused_within_a_small_memory() -> None:
    # 1 GiB of address space: the interpreter and its libraries fit; the 22 GB of the unbounded read do not.
    done = process("eval", "/dev/zero", "--engine", "reference", "--corpora", str(CORPORA), memory=1 << 30)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "error: /dev/zero: cannot be read: not a regular file (a character device)"
    ]


@pytest.mark.parametrize("command", [name for name in COMMANDS if "--against" not in name])
def test_a_line_past_its_bound_is_refused_naming_the_file_and_the_line(tmp_path: Path, command: str) -> None:
    its = tmp_path / "lines.txt"
    its.write_bytes(b'{"id": "x"}\n' + b"x" * (1 << 20 | 1 << 16) + b"\n")
    done = process(*COMMANDS[command](its, tmp_path))
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2, lines
    assert lines[0].startswith(f"error: {its}:2: "), lines
    assert "more than" in lines[0] and "bytes" in lines[0], lines


def test_read_file_reads_no_more_than_the_size_it_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc\n")
    asked: list[int] = []
    real = os.read

    def counted(descriptor: int, size: int) -> bytes:
        asked.append(size)
        return real(descriptor, size)

    monkeypatch.setattr(files.os, "read", counted)
    assert files.read_file(path, 10) == b"abc\n"
    assert sum(asked) <= 4 + 1 + 1  # the size and one byte, and the last empty read's ask of what is left
    with pytest.raises(CorpusError, match="more than the 3 accepted"):
        files.read_file(path, 3)


def test_text_lines_take_off_a_bom_and_split_on_line_feeds_only(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(files.BOM + b"one\r\n\ntwo \xe2\x80\xa8 still two\nthree")
    assert files.text_lines(path, 100, 100) == [(1, "one"), (2, ""), (3, "two \u2028 still two"), (4, "three")]
    path.write_bytes(b"one\nt\xffo\n")
    with pytest.raises(CorpusError, match=r":2: not UTF-8: byte 2 of the line is 0xff"):
        files.text_lines(path, 100, 100)


def test_judged_questions_and_qrels_with_a_bom_are_read(tmp_path: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    judged.write_bytes(files.BOM + HANDBOOK.read_bytes())
    assert evaluation.read_judged(judged) == evaluation.read_judged(HANDBOOK)
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes(files.BOM + b'{"id": "a", "state": "OH", "question": "how old til i can get my temps"}\n')
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(files.BOM + b"a 0 OH-S001 1\n")
    read = evaluation.read_judged(qrels, questions)
    assert [(one.id, one.relevant) for one in read] == [("a", ("OH-S001",))]
    # A questions file that starts with a BOM, given as the judged file: a JSON line, not taken for qrels.
    done = process("eval", str(judged), "--by", "words", "--engine", "reference", "--corpora",
                   str(ROOT / "eval" / "corpora"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout.splitlines()[0])["id"] == "OH-001"
