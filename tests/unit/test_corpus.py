"""Every bad corpus file is refused with its file, line and field named; good ones are read in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.errors import BadInput, CorpusError
from indexer.retrieval import corpus as corpus_module
from indexer.retrieval.corpus import MAX_LINE_BYTES, read_corpora, read_corpus, state_code
from tests.unit.laws import DROP, row


def write(tmp_path: Path, content: str | bytes, name: str = "TX.jsonl") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def refused(path: Path) -> CorpusError:
    with pytest.raises(CorpusError) as caught:
        read_corpus(path)
    assert str(path) in caught.value.message
    assert caught.value.exit_code == 2
    return caught.value


def test_a_good_file_is_read_in_line_order(tmp_path: Path) -> None:
    lines = [row(), row(id="TX-2", kind="process", question="", family="permit"), row(id="TX-3")]
    corpus = read_corpus(write(tmp_path, "\n".join(lines) + "\n"))
    assert corpus.state == "TX"
    assert [law.id for law in corpus.laws] == ["TX-1", "TX-2", "TX-3"]
    assert corpus.laws[1].question == ""  # an empty question is accepted
    assert len(corpus.sha256) == 64


def test_sha256_is_of_the_bytes_on_disk(tmp_path: Path) -> None:
    import hashlib

    content = (row() + "\n").encode()
    assert read_corpus(write(tmp_path, content)).sha256 == hashlib.sha256(content).hexdigest()
    # Without its fingerprint (the reference engine's reading): the same laws, no hash.
    unhashed = read_corpus(tmp_path / "TX.jsonl", fingerprint=False)
    assert unhashed.sha256 is None and unhashed.laws == read_corpus(tmp_path / "TX.jsonl").laws


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    error = refused(write(tmp_path, row() + "\n" + '{"id": "TX-2", "kind": \n'))
    assert error.line == 2
    assert f"{tmp_path / 'TX.jsonl'}:2" in error.message
    assert "not JSON" in error.message and "column" in error.message


@pytest.mark.parametrize("field", ["id", "kind", "law", "question", "concept"])
def test_a_missing_field_is_named(tmp_path: Path, field: str) -> None:
    error = refused(write(tmp_path, row() + "\n" + row(**{"id": "TX-2", field: DROP})))
    assert (error.line, error.field) == (2, field)
    assert f"field '{field}'" in error.message and "required" in error.message


@pytest.mark.parametrize("field", ["id", "kind", "law", "question", "concept", "family", "source"])
def test_a_mistyped_field_is_named(tmp_path: Path, field: str) -> None:
    error = refused(write(tmp_path, row(**{field: 5})))
    assert (error.line, error.field) == (1, field)
    assert "string" in error.message


@pytest.mark.parametrize("field", ["id", "kind", "law", "concept"])
@pytest.mark.parametrize("blank", ["", "   "])
def test_empty_fields_are_refused(tmp_path: Path, field: str, blank: str) -> None:
    error = refused(write(tmp_path, row(**{field: blank})))
    assert (error.line, error.field) == (1, field)
    assert "empty" in error.message or "kebab" in error.message


@pytest.mark.parametrize("concept", ["Parking", "parking_hydrant", "parking--hydrant", "-parking", "parking hydrant"])
def test_a_concept_that_is_not_kebab_case(tmp_path: Path, concept: str) -> None:
    error = refused(write(tmp_path, row(concept=concept)))
    assert (error.line, error.field) == (1, "concept")
    assert "kebab-case" in error.message


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    error = refused(write(tmp_path, "\n".join([row(), row(id="TX-2"), row(id="TX-1")])))
    assert (error.line, error.field) == (3, "id")
    assert "duplicate id 'TX-1'" in error.message and "line 1" in error.message


@pytest.mark.parametrize("name", ["XX.jsonl", "tx.jsonl", "TX.json", "Texas.jsonl", "TX.jsonl.bak"])
def test_a_file_name_that_is_not_a_state_code(tmp_path: Path, name: str) -> None:
    error = refused(write(tmp_path, row(), name=name))
    assert error.line == 0
    assert "state code" in error.message


@pytest.mark.parametrize("content", ["", "\n\n", "\r\n  \r\n"])
def test_an_empty_file(tmp_path: Path, content: str) -> None:
    assert "no laws" in refused(write(tmp_path, content)).message


def test_bytes_that_are_not_utf8_name_line_and_byte(tmp_path: Path) -> None:
    bad = row().encode().replace(b"hydrant.", b"hydr\xe9nt.")
    error = refused(write(tmp_path, (row() + "\n").encode() + bad))
    assert error.line == 2
    position = bad.index(b"\xe9") + 1
    assert f"byte {position} of the line is 0xe9" in error.message


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    corpus = read_corpus(write(tmp_path, b"\xef\xbb\xbf" + (row() + "\n").encode()))
    assert [law.id for law in corpus.laws] == ["TX-1"]


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    corpus = read_corpus(write(tmp_path, (row() + "\r\n" + row(id="TX-2") + "\r\n").encode()))
    assert [law.id for law in corpus.laws] == ["TX-1", "TX-2"]
    assert not corpus.laws[1].concept.endswith("\r")


def test_a_line_of_several_megabytes_is_refused_by_its_length_unparsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = row(law="park " * 1_000_000)  # 5 MB
    path = write(tmp_path, row() + "\n" + huge + "\n")
    parsed: list[int] = []
    loads = corpus_module._loads

    def recording(raw: bytes) -> object:
        parsed.append(len(raw))
        return loads(raw)

    # Refused by its length before it is parsed: never a hang on a broken export.
    monkeypatch.setattr("indexer.retrieval.corpus._loads", recording)
    error = refused(path)
    assert parsed, "the first line was parsed"
    assert max(parsed, default=0) < MAX_LINE_BYTES
    assert error.line == 2
    assert f"{MAX_LINE_BYTES:,}" in error.message


def test_a_long_line_under_the_maximum_is_accepted(tmp_path: Path) -> None:
    law = "park " * ((MAX_LINE_BYTES - 1000) // 5)
    corpus = read_corpus(write(tmp_path, row(law=law)))
    assert corpus.laws[0].law == law


@pytest.mark.parametrize("content", ["[1, 2]", '"a law"', "5", "null"])
def test_json_that_is_not_an_object(tmp_path: Path, content: str) -> None:
    error = refused(write(tmp_path, content))
    assert error.line == 1 and "one JSON object" in error.message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path: Path, constant: str) -> None:
    error = refused(write(tmp_path, row()[:-1] + f', "weight": {constant}}}'))
    assert error.line == 1 and constant in error.message


def test_a_lone_surrogate_escape_is_refused(tmp_path: Path) -> None:
    text = row().replace("fire hydrant.", "fire hydrant \\ud800.")
    error = refused(write(tmp_path, text))
    assert (error.line, error.field) == (1, "law")
    assert "surrogate" in error.message


@pytest.mark.parametrize("extra", ["123456789012345678901234567890", "1e400", "[[[[[[[[1]]]]]]]]"])
def test_json_that_orjson_refuses_or_reads_otherwise_is_read_by_the_json_module(tmp_path: Path, extra: str) -> None:
    # orjson reads a line first; an integer past 64 bits (orjson: a float) and 1e400 (orjson: refused)
    # are JSON all the same, and a line holding them is read as the json module reads it.
    laws = read_corpus(write(tmp_path, row()[:-1] + f', "weight": {extra}}}' + "\n" + row(id="TX-2"))).laws
    assert [law.id for law in laws] == ["TX-1", "TX-2"]


def test_a_surrogate_pair_escape_is_a_character(tmp_path: Path) -> None:
    text = row().replace("fire hydrant.", "fire hydrant \\ud83d\\ude92.")
    assert read_corpus(write(tmp_path, text)).laws[0].law.endswith("\U0001f692.")


def test_read_corpora_checks_every_file_and_sorts_by_state(tmp_path: Path) -> None:
    write(tmp_path, row(id="MD-1"), name="MD.jsonl")
    write(tmp_path, row(), name="AL.jsonl")
    assert [corpus.state for corpus in read_corpora(tmp_path)] == ["AL", "MD"]
    assert [corpus.state for corpus in read_corpora(tmp_path, ["md"])] == ["MD"]
    with pytest.raises(BadInput, match="no corpus file for TX"):
        read_corpora(tmp_path, ["TX"])
    write(tmp_path, "{", name="VT.jsonl")
    with pytest.raises(CorpusError, match=r"VT\.jsonl:1"):
        read_corpora(tmp_path)


def test_corpora_put_down_after_their_check_are_read_again_as_they_were(tmp_path: Path) -> None:
    write(tmp_path, "\n".join([row(id="AL-1"), row(id="AL-2", kind="process", question="", family="permit")]),
          name="AL.jsonl")  # fmt: skip
    write(tmp_path, row(id="MD-1"), name="MD.jsonl")
    down = read_corpora(tmp_path, kept=False)
    assert [(corpus.state, corpus.laws, corpus.size) for corpus in down] == [("AL", (), 2), ("MD", (), 1)]
    held = read_corpora(tmp_path)
    assert [corpus.with_laws() for corpus in down] == held
    assert held[0].with_laws() is held[0]
    # Refused where the file is no longer the one checked, even when it is still a good corpus.
    write(tmp_path, row(id="MD-2"), name="MD.jsonl")
    with pytest.raises(CorpusError, match=r"MD\.jsonl: changed after it was checked") as caught:
        down[1].with_laws()
    assert caught.value.exit_code == 2
    # A file broken after its check is refused as broken.
    write(tmp_path, "{", name="AL.jsonl")
    with pytest.raises(CorpusError, match=r"AL\.jsonl:1"):
        down[0].with_laws()
    # A bad file is refused by the check, before anything is put down.
    with pytest.raises(CorpusError, match=r"AL\.jsonl:1"):
        read_corpora(tmp_path, kept=False)


def test_read_corpora_of_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not a directory"):
        read_corpora(tmp_path / "nowhere")


@pytest.mark.parametrize("text", ["XX", " TX", "Texas", "", "T X"])
def test_state_code_refuses(text: str) -> None:
    with pytest.raises(BadInput, match="not a state code"):
        state_code(text)


def test_state_code_upper_cases() -> None:
    assert state_code("tx") == "TX"
