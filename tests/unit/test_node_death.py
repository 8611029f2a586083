"""What `lawindex opensearch status` says of a node that died (indexer.node.state.died_of), from its console
log as the JVM and OpenSearch write it, and the JVM options that keep its heap dump under its logs."""

from __future__ import annotations

from pathlib import Path

from indexer.node.launch import jvm_options
from indexer.node.record import HEAP_DUMP, Member, NodeFolder
from indexer.node.state import START_MARK, died_of

OOM = (
    "[2026-12-02T17:39:05,112][ERROR][o.o.b.OpenSearchUncaughtExceptionHandler] [lawindex-9276] fatal error in "
    "thread [opensearch[lawindex-9276][search][T#1]], exiting\njava.lang.OutOfMemoryError: Java heap space\n"
    "\tat org.lawindex.Vocabulary.contained(Vocabulary.java:88)\n"
)


def _member(tmp_path: Path, console: str) -> Member:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "stdout.log").write_text(console, encoding="utf-8")
    return Member(port=9276, heap="512m", log=str(logs / "lawindex-9276.log"), name="lawindex-9276")


def test_a_node_that_died_of_out_of_memory_is_said_to(tmp_path: Path) -> None:
    member = _member(tmp_path, f"{START_MARK} 2026-12-02T17:38:00+0000\nstarting\n{OOM}")
    assert died_of(member) == "lawindex-9276 died of OutOfMemoryError: Java heap space (heap 512m)"
    (tmp_path / "logs" / HEAP_DUMP).write_bytes(b"\0" * (3 << 20))
    said = died_of(member)
    assert said is not None and f"heap dump {tmp_path / 'logs' / HEAP_DUMP} (3 MiB;" in said


def test_an_earlier_start_s_death_is_not_this_one_s(tmp_path: Path) -> None:
    member = _member(tmp_path, f"{START_MARK} one\n{OOM}{START_MARK} two\nstarted, then killed\n")
    assert died_of(member) is None


def test_a_node_without_a_console_log_says_nothing(tmp_path: Path) -> None:
    assert died_of(Member(port=9276, log=str(tmp_path / "nowhere" / "x.log"))) is None
    assert died_of(Member(port=9276)) is None


def test_the_heap_dump_goes_under_the_logs_as_one_file() -> None:
    folder = NodeFolder(Path("/cache/nodes/9276"), "3.6.0")
    options = jvm_options("512m", folder).splitlines()
    assert options == [
        "-Xms512m",
        "-Xmx512m",
        "-XX:-AlwaysPreTouch",
        "-XX:+HeapDumpOnOutOfMemoryError",
        f"-XX:HeapDumpPath=/cache/nodes/9276/logs/{HEAP_DUMP}",
        "-XX:ErrorFile=/cache/nodes/9276/logs/hs_err_pid%p.log",
    ]


def test_an_out_of_memory_error_that_was_caught_is_no_death(tmp_path: Path) -> None:
    # What the JVM prints when a painless script asks for an array past the heap: the node stays up.
    caught = "java.lang.OutOfMemoryError: Java heap space\nDumping heap to /x/logs/heap-dump.hprof ...\n"
    member = _member(tmp_path, f"{START_MARK} one\n{caught}then killed by a signal\n")
    assert died_of(member) is None


def test_an_uncaught_one_at_start_is(tmp_path: Path) -> None:
    console = (
        "java.lang.OutOfMemoryError: Java heap space\nDumping heap to /x/logs/heap-dump.hprof ...\n"
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n\tat java.base/x(X.java:1)\n'
    )
    member = _member(tmp_path, f"{START_MARK} one\n{console}")
    assert died_of(member) == "lawindex-9276 died of OutOfMemoryError: Java heap space (heap 512m)"
