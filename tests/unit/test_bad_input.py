"""The bad-input catalogue (docs/bad-input.md) for everything that needs no server.

Each row is driven through the `lawindex` command as a user meets it: a clear one-line `error: ...`
(and perhaps a `hint: ...`), a documented exit code, and never a traceback. Commands that would talk to
OpenSearch are pointed at a port where nothing listens: bad input must be refused before any request,
so they exit 2, never 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import Result

from indexer.errors import BadInput, CorpusError
from indexer.retrieval import reference
from indexer.retrieval.corpus import read_corpus
from tests.unit.commands import CORPORA, NOWHERE, refused, run
from tests.unit.laws import DROP
from tests.unit.laws import row as line


def cli(
    *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`lawindex ARGS` as a process: for what only a real process shows (bytes on stdin, tracebacks)."""
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")
    return done


_MAIN = "import sys; from indexer.cli import main; sys.argv[0] = 'lawindex'; main()"


# ---- corpus files ---------------------------------------------------------------------------------


def corpus_dir(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    folder = tmp_path / "corpora"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return folder


BAD_FILES: dict[str, tuple[dict[str, str | bytes], tuple[str, ...]]] = {
    "malformed JSON": ({"TX.jsonl": line() + "\n" + '{"id": "TX-2", "kind": \n'}, ("TX.jsonl:2", "not JSON")),
    "a missing field": ({"TX.jsonl": line(law=DROP) + "\n"}, ("TX.jsonl:1", "field 'law'")),
    "a mistyped field": ({"TX.jsonl": line(id=7) + "\n"}, ("TX.jsonl:1", "field 'id'")),
    "an empty law": ({"TX.jsonl": line(law="   ") + "\n"}, ("TX.jsonl:1", "field 'law'", "empty")),
    "a duplicate id": ({"TX.jsonl": line() + "\n" + line() + "\n"}, ("TX.jsonl:2", "field 'id'", "duplicate")),
    "a file name that is not a state code": ({"texas.jsonl": line() + "\n"}, ("texas.jsonl", "state code")),
    "an unknown state's file": ({"XX.jsonl": line() + "\n"}, ("XX.jsonl", "state code")),
    "an empty file": ({"TX.jsonl": ""}, ("TX.jsonl", "no laws")),
    "a file of blank lines": ({"TX.jsonl": "\n \n\n"}, ("TX.jsonl", "no laws")),
    "bytes that are not UTF-8": (
        {"TX.jsonl": line().encode() + b"\n" + line(id="TX-2").encode().replace(b"fire", b"f\xffre") + b"\n"},
        ("TX.jsonl:2", "not UTF-8"),
    ),
    "a line of several megabytes": ({"TX.jsonl": line(law="park " * 800_000) + "\n"}, ("TX.jsonl:1", "bytes")),
    "a line that is not an object": ({"TX.jsonl": '["TX-1"]\n'}, ("TX.jsonl:1", "object")),
    "a directory with no corpus files": ({"README.md": "laws go here\n"}, ("no corpus files",)),
    "a word past Lucene's 32,766-byte term": (
        {"TX.jsonl": line() + "\n" + line(id="TX-2", law="park " + "a" * 40_000) + "\n"},
        ("TX.jsonl:2", "field 'law'", "40,000 letters and digits", "32,766"),
    ),
    "a word past the term limit in the question": (
        {"TX.jsonl": line(question="x" + "9" * 32_766) + "\n"},
        ("TX.jsonl:1", "field 'question'", "32,767"),
    ),
    "a keyword past the term limit": (
        {"TX.jsonl": line(family="f" * 32_767) + "\n"},
        ("TX.jsonl:1", "field 'family'", "32,767 bytes"),
    ),
    "an id past OpenSearch's 512-byte _id": (
        {"TX.jsonl": line(id="TX-" + "9" * 600) + "\n"},
        ("TX.jsonl:1", "field 'id'", "603 bytes", "512"),
    ),
    "a byte-order mark starting a later line (files concatenated)": (
        {"TX.jsonl": b"\xef\xbb\xbf" + line().encode() + b"\n\xef\xbb\xbf" + line(id="TX-2").encode() + b"\n"},
        ("TX.jsonl:2", "byte-order mark"),
    ),
    "a good file beside a bad one": (
        {"MD.jsonl": line(id="MD-1") + "\n", "TX.jsonl": line(kind=DROP) + "\n"},
        ("TX.jsonl:1", "field 'kind'"),
    ),
}


def test_the_limits_are_the_limits_exactly(tmp_path: Path) -> None:
    # At the limits, a law is taken: 32,766 bytes in a word (Lucene's MAX_TERM_LENGTH), 508 in an id
    # (512 for the `_id`, with its `law:` prefix); one byte more is refused (the cases above).
    path = tmp_path / "TX.jsonl"
    at = [line(id="TX-" + "9" * 505, law="park " + "a" * 32_766, family="f" * 32_766), line(id="TX-é" + "9" * 503)]
    path.write_text("\n".join(at) + "\n", encoding="utf-8")
    laws = read_corpus(path).laws
    assert [len(law.id.encode()) for law in laws] == [508, 508]
    path.write_text(line(id="TX-é" + "9" * 504) + "\n", encoding="utf-8")  # é is two bytes: 509
    with pytest.raises(CorpusError, match="509 bytes"):
        read_corpus(path)


@pytest.mark.parametrize("case", list(BAD_FILES), ids=list(BAD_FILES))
def test_a_bad_corpus_file_is_refused_before_anything_is_sent(tmp_path: Path, case: str) -> None:
    files, fragments = BAD_FILES[case]
    folder = corpus_dir(tmp_path, files)
    refused(run("load", str(folder), "--url", NOWHERE), 2, *fragments)


def test_a_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    refused(run("load", str(tmp_path / "nowhere"), "--url", NOWHERE), 2, "not a directory")


def test_a_symlink_loop_is_refused_not_followed_forever(tmp_path: Path) -> None:
    folder = corpus_dir(tmp_path, {"MD.jsonl": line(id="MD-1") + "\n"})
    (folder / "TX.jsonl").symlink_to(folder / "TX.jsonl")  # TX.jsonl → itself
    (folder / "loop").symlink_to(folder, target_is_directory=True)  # a directory loop beside it
    refused(run("load", str(folder), "--url", NOWHERE), 2, "TX.jsonl", "cannot be read")
    # A folder that is itself a loop.
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    refused(run("load", str(tmp_path / "a"), "--url", NOWHERE), 2, "not a directory")


def test_a_corpus_file_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    folder = corpus_dir(tmp_path, {})
    (folder / "TX.jsonl").mkdir()
    refused(run("load", str(folder), "--url", NOWHERE), 2, "TX.jsonl", "cannot be read")


def test_a_byte_order_mark_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "TX.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line().encode() + b"\r\n" + line(id="TX-2").encode() + b"\r\n")
    assert [law.id for law in read_corpus(path).laws] == ["TX-1", "TX-2"]


def test_a_file_that_changes_while_it_is_read_is_one_version_or_refused(tmp_path: Path) -> None:
    """A writer rewrites the file in place (truncate, then write in pieces) while it is read again and
    again: each read is all of one version, or a CorpusError; never part of one loaded as if whole."""
    path = tmp_path / "TX.jsonl"
    versions = {
        count: "".join(
            line(id=f"TX-{n}", law=f"Rule {n} about parking near a fire hydrant.") + "\n" for n in range(count)
        )
        for count in (3000, 2000)
    }
    path.write_text(versions[3000], encoding="utf-8")
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            for text in versions.values():
                with path.open("w", encoding="utf-8") as out:
                    for start in range(0, len(text), 65536):
                        out.write(text[start : start + 65536])
                        out.flush()

    thread = threading.Thread(target=writer)
    thread.start()
    outcomes = {"whole": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            try:
                corpus = read_corpus(path)
            except CorpusError as error:
                assert str(path) in error.message
                outcomes["refused"] += 1
                continue
            assert len(corpus.laws) in versions, f"{len(corpus.laws)} laws: part of a version read as a whole"
            outcomes["whole"] += 1
    finally:
        stop.set()
        thread.join()
    print(f"\nreads while rewritten: {outcomes}")


def test_a_file_whose_size_or_time_moved_during_the_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race above, made certain: the file's modification time moves between the fstat before the
    read and the one after it, as when a writer rewrites it in place to the same size."""
    path = tmp_path / "TX.jsonl"
    path.write_text(line() + "\n", encoding="utf-8")
    real_fstat = os.fstat
    calls = []

    def moving_fstat(fd: int) -> object:
        found = real_fstat(fd)
        calls.append(fd)
        if len(calls) % 2 == 0:  # the second look: a nanosecond later than the first, the same size
            return SimpleNamespace(st_size=found.st_size, st_mtime_ns=found.st_mtime_ns + 1)
        return found

    monkeypatch.setattr("indexer.retrieval.files.os.fstat", moving_fstat)
    with pytest.raises(CorpusError) as refused_read:
        read_corpus(path)
    assert "changed while it was read" in refused_read.value.message
    monkeypatch.undo()
    assert [law.id for law in read_corpus(path).laws] == ["TX-1"]  # the same file, unmoved: read


def test_a_state_of_50_000_laws_is_read_and_answered(tmp_path: Path) -> None:
    words = "park hydrant crosswalk signal lane school bus headlight speed yield curb permit".split()  # noqa: SIM905
    path = tmp_path / "corpora" / "TX.jsonl"
    path.parent.mkdir()
    with path.open("w", encoding="utf-8") as out:
        for n in range(50_000):
            law = f"Rule {n}: {words[n % 12]} {words[(n * 7) % 12]} and a word of its own, zq{n}x."
            out.write(line(id=f"TX-{n}", law=law, concept=f"rule-{n % 97}") + "\n")
    began = time.perf_counter()
    corpus = read_corpus(path)
    read_s = time.perf_counter() - began
    assert len(corpus.laws) == 50_000
    began = time.perf_counter()
    result = run(
        "ask", "TX", "where can i park by a hydrant zq4242x", "--engine", "reference", "--corpora", str(path.parent)
    )
    ask_s = time.perf_counter() - began
    print(f"\n50,000 laws: read in {read_s:.2f}s, one question through the command in {ask_s:.2f}s")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("TX-4242 ")


# ---- questions (reference engine) -----------------------------------------------------------------


def ask(question: str, *more: str) -> Result:
    return run("ask", "MD", question, "--engine", "reference", "--corpora", str(CORPORA), *more)


def answer_lines(result: Result) -> list[str]:
    """The law lines of a text answer: everything after the `words:` line."""
    assert result.exit_code == 0, result.output
    first, *laws = result.stdout.splitlines()
    assert first.startswith("words:")
    return laws


def test_an_empty_question_is_answered_with_no_law_and_a_note() -> None:
    for question in ("", "   ", "\t\n"):
        result = ask(question)
        assert answer_lines(result) == []
        assert result.stderr.startswith("note: ") and "no words" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "question",
    ["how can i do it", "what is the", "?!...,;:", "¿¡—…", "   ?   "],
    ids=["stopwords", "more stopwords", "punctuation", "unicode punctuation", "space and a mark"],
)
def test_a_question_with_no_meaningful_word_reaches_no_law(question: str) -> None:
    result = ask(question)
    assert answer_lines(result) == []
    assert result.stdout.splitlines()[0].rstrip() == "words:"
    assert json.loads(ask(question, "--json").stdout)["hits"] == []


def distinct_words(length: int) -> str:
    text = " ".join(f"w{n}" for n in range(1000))
    assert len(text) >= length
    text = text[:length]
    return text if not text.endswith(" ") else text[:-1] + "x"


def test_2000_characters_are_answered_and_2001_refused() -> None:
    longest = distinct_words(2000)
    assert len(longest) == 2000
    result = ask(longest, "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["words"]) == len(longest.split())
    refused(ask(distinct_words(2001)), 2, "2001", "2000")
    refused(ask("park " * 401), 2, "2000")


def test_control_characters_separate_words_and_are_never_echoed_raw() -> None:
    """NUL, BEL, ESC, backspace, CR, DEL: not [a-z0-9], so they separate words as a space does (the spec's
    `words`), and no answer writes them back to a terminal raw."""
    plain = json.loads(ask("how far from a fire hydrant can i park", "--json").stdout)
    hostile = "how far\x1b from a fire\x07hydrant\x08 can i\r park\x7f\x00"
    result = ask(hostile, "--json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["question"] == hostile  # kept whole, escaped by JSON
    assert [hit["id"] for hit in got["hits"]] == [hit["id"] for hit in plain["hits"]]
    assert got["words"] == plain["words"]
    # An escape sequence's letters are words like any other, as in the spec: "\x1b[31m" holds "31m".
    assert json.loads(ask("fire\x1b[31m hydrant", "--json").stdout)["words"] == ["fire", "31m", "hydrant"]
    # JSON escapes C0 controls (DEL, which terminals ignore, passes as itself); text output prints only
    # words and laws; the note on stderr quotes the question with repr().
    for text in (result.stdout, ask(hostile).stdout, ask("\x1b\x07").stderr):
        assert not any(ord(char) < 0x20 and char != "\n" for char in text), repr(text)


def test_right_to_left_text_is_answered_by_its_latin_words_only() -> None:
    hebrew = "כמה רחוק מברז כיבוי אש מותר לחנות"
    arabic = "كم يجب أن أبعد عن صنبور الحريق"
    assert answer_lines(ask(hebrew)) == []
    assert answer_lines(ask(arabic)) == []
    # Direction marks and overrides between Latin words only separate them.
    plain = answer_lines(ask("fire hydrant park"))
    assert plain
    assert answer_lines(ask("fire\u202ehydrant\u202c \u200fpark\u200e")) == plain
    assert answer_lines(ask(f"{hebrew} fire hydrant park")) == plain


def test_questions_on_standard_input_that_are_not_utf8_are_reported_by_line() -> None:
    """`--from -` with bytes that are not UTF-8 (a lone surrogate's encoding, a stray 0xff): named by line
    on stderr, the batch goes on, exit 2, no traceback."""
    for bad in (b"\xed\xa0\x80 hydrant", b"park \xff\xfe here"):
        done = cli(
            "ask", "MD", "--from", "-", "--engine", "reference", "--corpora", str(CORPORA),
            input=b"fire hydrant park\n" + bad + b"\nschool bus\n",
        )  # fmt: skip
        stderr = done.stderr.decode("utf-8", errors="replace")
        assert done.returncode == 2, (done.returncode, stderr)
        assert "error: stdin:2: not UTF-8" in stderr, stderr
        assert stderr.count("error: ") == 1, stderr
        # The batch went on: the first and third questions were answered.
        assert done.stdout.decode("utf-8").count("words: ") == 2


def test_a_question_file_too_is_refused_by_line(tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_bytes(b"fire hydrant park\n" + b"x" * 2001 + b"\n")
    result = run("ask", "MD", "--from", str(questions), "--engine", "reference", "--corpora", str(CORPORA))
    error = refused(result, 2)
    assert error == f"error: {questions}:2: question: 2001 characters, more than the 2000 accepted"
    assert result.stdout.startswith("words: fire hydrant park\n")  # the first line was answered


# ---- arguments ------------------------------------------------------------------------------------

NOT_STATES = ["ZZ", "../x", "*", "_all", "tx,md", "TX ", " TX", "", "TXX", "lawindex-tx", "T\u0130"]


@pytest.mark.parametrize("state", NOT_STATES, ids=[repr(state) for state in NOT_STATES])
def test_a_state_code_that_is_not_one_is_refused(state: str) -> None:
    refused(ask_state(state, "--engine", "reference", "--corpora", str(CORPORA)), 2, "not a state code")
    # With OpenSearch (the default engine): refused before any request is made.
    refused(ask_state(state, "--url", NOWHERE), 2, "not a state code")
    refused(run("load", str(CORPORA), "--state", state, "--url", NOWHERE), 2, "not a state code")


def ask_state(state: str, *more: str) -> Result:
    return run("ask", state, "fire hydrant", *more)


def test_a_state_without_a_corpus_file_is_refused_by_the_reference_engine() -> None:
    refused(ask_state("WY", "--engine", "reference", "--corpora", str(CORPORA)), 2, "WY")


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "localhost:9200",
        "ftp://127.0.0.1:9200",
        "http://",
        "http://127.0.0.1:port",
        "http://127.0.0.1:99999",
    ],
)
def test_a_bad_url_is_refused(url: str) -> None:
    refused(run("status", "--url", url), 2, "URL")
    refused(run("status", env={"OPENSEARCH_URL": url}), 2, "URL")


def test_a_url_carrying_credentials_is_refused_and_never_shown() -> None:
    result = run("status", "--url", "http://admin:S3cret-Hunter2@127.0.0.1:9200")
    message = refused(result, 2, "credentials")
    assert "S3cret-Hunter2" not in result.output and "S3cret-Hunter2" not in message


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"LAWINDEX_TIMEOUT": "soon"}, "LAWINDEX_TIMEOUT"),
        ({"LAWINDEX_TIMEOUT": "0"}, "LAWINDEX_TIMEOUT"),
        ({"LAWINDEX_TIMEOUT": "-1"}, "LAWINDEX_TIMEOUT"),
        ({"LAWINDEX_RETRIES": "many"}, "LAWINDEX_RETRIES"),
        ({"LAWINDEX_RETRIES": "-2"}, "LAWINDEX_RETRIES"),
        ({"LAWINDEX_NAMESPACE": "../etc"}, "namespace"),
    ],
)
def test_bad_settings_in_the_environment_are_refused(env: dict[str, str], fragment: str) -> None:
    refused(run("status", "--url", NOWHERE, env=env), 2, fragment)


@pytest.mark.parametrize("timeout", ["0", "-1"])
def test_a_timeout_that_is_not_positive_is_refused(timeout: str) -> None:
    refused(run("status", "--url", NOWHERE, "--timeout", timeout), 2, "timeout")


def test_an_option_that_does_not_exist_is_a_usage_error() -> None:
    result = run("ask", "MD", "fire", "--password", "x")
    assert result.exit_code == 2
    assert "No such option" in result.stderr


def test_the_reference_engine_answers_what_the_command_prints() -> None:
    """The catalogue's answered rows, held against the library: the command adds nothing of its own."""
    corpus = read_corpus(CORPORA / "MD.jsonl")
    for question in ("how far from a fire hydrant can i park", "fire\x07hydrant park"):
        got = json.loads(ask(question, "--json").stdout)
        assert [hit["id"] for hit in got["hits"]] == reference.ask(corpus, question).ids()


def test_several_urls_are_one_cluster_each_checked() -> None:
    from indexer.opensearch.cluster.connection import Connection

    found = Connection.from_env(" http://127.0.0.1:9480/, http://127.0.0.1:9481 ,http://127.0.0.1:9482")
    assert found.urls == ["http://127.0.0.1:9480", "http://127.0.0.1:9481", "http://127.0.0.1:9482"]
    assert Connection.from_env("http://127.0.0.1:9480").urls == ["http://127.0.0.1:9480"]


@pytest.mark.parametrize(
    ("urls", "said"),
    [
        ("http://127.0.0.1:9480,,http://127.0.0.1:9481", "an empty entry"),
        ("http://127.0.0.1:9480,", "an empty entry"),
        ("http://127.0.0.1:9480,https://127.0.0.1:9481", "mix http and https"),
        ("http://127.0.0.1:9480,ftp://127.0.0.1:9481", "not an OpenSearch URL"),
        ("http://127.0.0.1:9480,http://127.0.0.1:0", "bad port"),
    ],
)
def test_a_bad_url_in_a_list_is_refused(urls: str, said: str) -> None:
    from indexer.opensearch.cluster.connection import Connection

    with pytest.raises(BadInput, match=said):
        Connection.from_env(urls)


def test_credentials_in_one_url_of_a_list_are_refused_and_never_shown() -> None:
    from indexer.opensearch.cluster.connection import Connection

    with pytest.raises(BadInput) as refused:
        Connection.from_env("http://127.0.0.1:9480,http://u:s3cret@127.0.0.1:9481")
    assert "carries credentials" in refused.value.message
    assert "s3cret" not in f"{refused.value.message} {refused.value.hint}"
