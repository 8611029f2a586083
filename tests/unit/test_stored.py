"""The reference engine's stored statistics (indexer.retrieval.stored): a later process answers from them
exactly as the engine that builds them does, ties, misspellings and the logarithm's last bit included;
what does not match its manifest is never used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.retrieval import reference, stored
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import read_corpus
from indexer.retrieval.request import Request
from indexer.service.engines import ReferenceEngine
from tests import synthetic


def _written(directory: Path, laws: list) -> Path:  # type: ignore[type-arg]
    directory.mkdir(parents=True, exist_ok=True)
    synthetic.write_corpus(directory / "TX.jsonl", laws)
    return directory


def _same(got: Answer, want: Answer) -> None:
    assert (got.words, got.terms) == (want.words, want.terms), want.question
    assert [h.law for h in got.hits] == [h.law for h in want.hits], want.question
    # Bit for bit: the scores as float64 bits, and what each was computed from.
    assert [np.float64(h.score).tobytes() for h in got.hits] == [np.float64(h.score).tobytes() for h in want.hits]
    made = [[(h.order, dict(h.counts), h.length) for h in answer.hits] for answer in (got, want)]
    assert made[0] == made[1], want.question


def _stored_engine(corpora: Path, store: Path) -> ReferenceEngine:
    """A new engine (a later process's), which must answer from what is stored."""
    engine = ReferenceEngine(corpora, stored=store, stored_from=0)
    assert engine._stored_state("TX") is not None, "nothing stored to answer from"
    return engine


def _questions(laws: list, extra: list[str]) -> list[str]:  # type: ignore[type-arg]
    asked = synthetic.generate_questions(laws, 150, seed=5) + extra
    # Misspelt and run-together words: the spelling path through the stored blocks.
    return asked + [q.replace("e", "a", 1) for q in asked[:40]] + ["firehydrant parking", "schoolbus", "zzzz", ""]


def test_a_stored_state_answers_as_the_built_one_to_the_last_bit(tmp_path: Path) -> None:
    laws = synthetic.generate_wide_corpus("TX", 600, 20000, seed=3)
    corpora = _written(tmp_path / "corpora", laws)
    store = tmp_path / "store"
    first = ReferenceEngine(corpora, stored=store, stored_from=0)
    built = reference.ask(read_corpus(corpora / "TX.jsonl"), "fire hydrant", 8)
    _same(
        first.ask(Request("TX", "fire hydrant")), built
    )  # the first engine builds, stores, answers from what it built
    (kept,) = [entry for entry in store.iterdir()]
    assert kept.name == stored.name_of((corpora / "TX.jsonl").read_bytes())
    later = _stored_engine(corpora, store)
    corpus = read_corpus(corpora / "TX.jsonl")
    for question in _questions(laws, []):
        for limit in (1, 8, 100):
            _same(later.ask(Request("TX", question, limit=limit)), reference.ask(corpus, question, limit))


@pytest.mark.parametrize("made", synthetic.last_bit_corpora(), ids=lambda made: made.name)
def test_ties_and_the_last_bit_come_out_as_the_spec_orders_them(tmp_path: Path, made: synthetic.LastBit) -> None:
    corpora = _written(tmp_path / "corpora", made.laws)
    ReferenceEngine(corpora, stored=tmp_path / "store", stored_from=0).ask(Request("TX", "anything"))
    later = _stored_engine(corpora, tmp_path / "store")
    corpus = read_corpus(corpora / "TX.jsonl")
    for question in made.questions:
        _same(later.ask(Request("TX", question)), reference.ask(corpus, question))


def _stored_once(tmp_path: Path) -> tuple[Path, Path, Path]:
    laws = synthetic.generate_corpus("TX", 400, seed=11)
    corpora = _written(tmp_path / "corpora", laws)
    store = tmp_path / "store"
    ReferenceEngine(corpora, stored=store, stored_from=0).ask(Request("TX", "fire hydrant"))
    (kept,) = list(store.iterdir())
    return corpora, store, kept


@pytest.mark.parametrize("part", ["post_scores.bin", "post_laws.bin", "offsets.bin", "manifest.json"])
def test_a_stored_state_that_does_not_match_its_manifest_is_built_again(tmp_path: Path, part: str) -> None:
    corpora, store, kept = _stored_once(tmp_path)
    damaged = bytearray((kept / part).read_bytes())
    damaged[len(damaged) // 2] ^= 0x01
    (kept / part).write_bytes(bytes(damaged))
    engine = ReferenceEngine(corpora, stored=store, stored_from=0)
    corpus = read_corpus(corpora / "TX.jsonl")
    for question in ("fire hydrant", "speed limit school zone", "seat belt"):
        _same(engine.ask(Request("TX", question)), reference.ask(corpus, question))
    assert engine._stored["TX"] is None  # built, not read from the damaged one
    _stored_engine(corpora, store)  # and stored again, whole


def test_a_damaged_block_met_by_a_question_is_never_used(tmp_path: Path) -> None:
    corpora, store, kept = _stored_once(tmp_path)
    engine = _stored_engine(corpora, store)
    for block in kept.glob("lexicon-*.bin"):  # read only when a question needs it: after the engine opened
        raw = bytearray(block.read_bytes())
        raw[0] ^= 0x01
        block.write_bytes(bytes(raw))
    corpus = read_corpus(corpora / "TX.jsonl")
    _same(engine.ask(Request("TX", "fire hydrabt")), reference.ask(corpus, "fire hydrabt"))
    assert engine._stored["TX"] is None
    _stored_engine(corpora, store)


def test_a_changed_file_is_never_answered_from_the_old_one(tmp_path: Path) -> None:
    corpora, store, _ = _stored_once(tmp_path)
    laws = synthetic.generate_corpus("TX", 400, seed=12)
    synthetic.write_corpus(corpora / "TX.jsonl", laws)
    engine = ReferenceEngine(corpora, stored=store, stored_from=0)
    assert engine._stored_state("TX") is None  # not stored yet: built (and stored now)
    corpus = read_corpus(corpora / "TX.jsonl")
    _same(engine.ask(Request("TX", "fire hydrant")), reference.ask(corpus, "fire hydrant"))
    assert len(list(store.iterdir())) == 2
    _same(_stored_engine(corpora, store).ask(Request("TX", "seat belt")), reference.ask(corpus, "seat belt"))


def test_small_files_are_not_stored_and_the_directory_keeps_the_last_used(tmp_path: Path) -> None:
    corpora = Path(__file__).resolve().parents[2] / "corpora"
    ReferenceEngine(corpora, stored=tmp_path / "store").ask(Request("TX", "fire hydrant"))
    assert not (tmp_path / "store").exists()  # 20 KB: built in milliseconds, never stored
    store = tmp_path / "many"
    (store / "not-ours").mkdir(parents=True)
    for seed in range(stored.KEPT + 2):
        directory = _written(tmp_path / f"c{seed}", synthetic.generate_corpus("TX", 30, seed=seed))
        ReferenceEngine(directory, stored=store, stored_from=0).ask(Request("TX", "fire hydrant"))
    names = {entry.name for entry in store.iterdir()}
    assert "not-ours" in names and len(names) == stored.KEPT + 1
    newest = stored.name_of((tmp_path / f"c{stored.KEPT + 1}" / "TX.jsonl").read_bytes())
    oldest = stored.name_of((tmp_path / "c0" / "TX.jsonl").read_bytes())
    assert newest in names and oldest not in names


def test_laws_are_read_back_from_their_lines_as_the_file_was_read(tmp_path: Path) -> None:
    # A BOM, blank lines, CRLF line ends and a line orjson refuses (1e400): each law's line is found where
    # parse_corpus found it, and read as it read it.
    laws = synthetic.generate_corpus("TX", 60, seed=4)
    lines = [law.model_dump_json(exclude_none=True) for law in laws]
    lines[7] = lines[7][:-1] + ', "weight": 1e400}'
    text = "\ufeff\r\n" + "\r\n\r\n".join(lines) + "\r\n\n"
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "TX.jsonl").write_text(text, encoding="utf-8", newline="")
    ReferenceEngine(corpora, stored=tmp_path / "store", stored_from=0).ask(Request("TX", "fire hydrant"))
    later = _stored_engine(corpora, tmp_path / "store")
    corpus = read_corpus(corpora / "TX.jsonl")
    assert len(corpus.laws) == 60
    for question in synthetic.generate_questions(laws, 40, seed=8):
        _same(later.ask(Request("TX", question, limit=60)), reference.ask(corpus, question, 60))
