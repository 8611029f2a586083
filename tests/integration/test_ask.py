"""`ask` on OpenSearch: the spec's stories, told against a real cluster, and the exact ranking every time.

Every answer of `OpenSearchEngine.ask` is held against the reference scorer on the same corpus file: the
same laws, in the same order, with the same scores to the last bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from indexer.errors import BadInput, ClusterRefused
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.verify import default_questions, verify, verify_state
from indexer.opensearch.write.load import load
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, Law, read_corpora
from indexer.retrieval.request import Request
from indexer.retrieval.words import ranked
from tests import synthetic
from tests.integration.support import fresh_connection
from tests.synthetic import corpus_of

pytestmark = pytest.mark.integration

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
HYDRANT = "how far from a fire hydrant can i park"
TYPO = "how far must i be behing a firehydrant"
FAMILY = "How long do I have to hold my permit before I can take the road test?"


@dataclass(frozen=True)
class Served:
    connection: Connection
    engine: OpenSearchEngine
    corpora: dict[str, Corpus]


@pytest.fixture(scope="module")
def samples(opensearch_url: str) -> Iterator[Served]:
    """Every sample corpus loaded into a namespace of its own."""
    with fresh_connection(opensearch_url) as connection:
        corpora = read_corpora(CORPORA)
        load(connection, corpora, plugin=False)
        yield Served(connection, OpenSearchEngine(connection), {corpus.state: corpus for corpus in corpora})


def same_as_reference(served: Served, state: str, question: str, limit: int = 8) -> list[str]:
    answer = served.engine.words.ask(state, question, limit)
    truth = reference.ask(served.corpora[state], question, limit)
    assert answer.ids() == truth.ids(), question
    assert [hit.score for hit in answer.hits] == [hit.score for hit in truth.hits], question
    assert answer.words == truth.words and answer.terms == truth.terms
    return answer.ids()


# The spec's stories.


def test_maryland_hydrant_question_puts_md_s01_first_and_the_references_eight(samples: Served) -> None:
    found = same_as_reference(samples, "MD", HYDRANT)
    assert found[0] == "MD-S01"
    assert len(found) == 8
    answer = samples.engine.ask(Request("MD", HYDRANT))
    assert answer.words == ["far", "fire", "hydrant", "park"]
    assert all(hit.law.concept.startswith("parking-") for hit in answer.hits)


def test_alabama_typo_reaches_alabamas_hydrant_law(samples: Served) -> None:
    found = same_as_reference(samples, "AL", TYPO)
    assert found[0] == "AL-S01"
    answer = samples.engine.ask(Request("AL", TYPO))
    assert {"behind", "fire", "hydrant"} <= set(answer.terms)
    assert answer.hits[0].law.concept == "parking-fire-hydrant"


@pytest.mark.parametrize(
    ("state", "concept", "question"),
    [
        ("PA", "permit-holding-period", "how long do i have to hold my permit before the road test"),
        ("WV", "permit-holding-period", "how long do i have to hold my permit before the road test"),
        ("SC", "conditional-license-curfew", "how long do i have to have my license before i can drive at night"),
        ("VT", "junior-passenger-limit", "how long before i can take passengers"),
    ],
)
def test_page_rows_never_crowd_the_law_out(samples: Served, state: str, concept: str, question: str) -> None:
    same_as_reference(samples, state, question)
    answer = samples.engine.ask(Request(state, question))
    assert concept in [hit.law.concept for hit in answer.hits]
    assert all(ranked(hit.law) for hit in answer.hits)


@pytest.mark.parametrize("state", ["PA", "WV", "MD"])
def test_no_question_returns_a_page_row(samples: Served, state: str) -> None:
    corpus = samples.corpora[state]
    pages = [law for law in corpus.laws if not ranked(law)]
    assert pages
    for question in [FAMILY, *(law.law for law in pages)]:
        answer = samples.engine.words.ask(state, question, len(corpus.laws))
        assert answer.hits, question
        assert all(ranked(hit.law) for hit in answer.hits), question
        assert answer.ids() == reference.ask(corpus, question, len(corpus.laws)).ids()


def test_a_question_of_stopwords_or_unknown_words_reaches_nothing(samples: Served) -> None:
    assert samples.engine.ask(Request("MD", "how can i do it if you would")).hits == []
    assert samples.engine.ask(Request("MD", "")).hits == []
    assert samples.engine.ask(Request("MD", "qxzjv zzkq")).hits == []


def test_verify_is_exact_on_every_sample_corpus(samples: Served) -> None:
    reports = verify(samples.engine, list(samples.corpora.values()))
    assert len(reports) == len(samples.corpora)
    for report in reports:
        assert report.questions >= 100
        assert report.exact_same == report.questions, report.disagreements[:3]
        assert report.lucene_error == 0.0  # the Lucene mode is bit for bit
    # OpenSearch's own ranking is not always the spec's: the sample laws over 40 words show it.
    assert sum(report.native_same for report in reports) < sum(report.questions for report in reports)


# Family, get, and a state with no index.


def test_family_returns_the_five_rows_in_corpus_order(samples: Served) -> None:
    corpus = samples.corpora["PA"]
    rows = samples.engine.family("PA", "permit-holding-period")
    expected = [law for law in corpus.laws if law.family == "permit-holding-period"]
    assert len(rows) == 5
    assert rows == expected
    assert samples.engine.family("PA", "no-such-family") == []


def test_get_returns_one_law(samples: Served) -> None:
    corpus = samples.corpora["MD"]
    assert samples.engine.get("MD", "MD-S01") == corpus.laws[0]
    with pytest.raises(BadInput):
        samples.engine.get("MD", "MD-NOPE")


def test_a_state_with_no_index_is_cluster_refused(samples: Served) -> None:
    assert "NV" not in samples.corpora
    with pytest.raises(ClusterRefused) as caught:
        samples.engine.ask(Request("NV", HYDRANT))
    assert caught.value.exit_code == 4
    assert "NV" in caught.value.message
    with pytest.raises(ClusterRefused):
        samples.engine.family("NV", "permit-holding-period")
    with pytest.raises(ClusterRefused):
        samples.engine.get("NV", "NV-S01")


# The alias moves: the same engine answers from the new corpus.


def test_an_alias_moved_between_two_asks_gives_the_new_corpus_answers(opensearch_url: str) -> None:
    with fresh_connection(opensearch_url) as connection:
        (first,) = read_corpora(CORPORA, ["MD"])
        load(connection, [first], plugin=False)
        engine = OpenSearchEngine(connection)
        before = engine.ask(Request("MD", HYDRANT))
        assert before.ids()[0] == "MD-S01"
        old_index = engine.statistics("MD").index

        # The hydrant law gone, and a new one with words the old vocabulary never had.
        laws: list[Law] = [law for law in first.laws if law.id != "MD-S01"]
        laws.append(
            Law(
                id="MD-S99",
                kind="statute",
                law="No vehicle may stand beside a firefighting standpipe or hydrant valve.",
                question="Where can I not stand near a standpipe?",
                concept="parking-standpipe",
            )
        )
        second = corpus_of("MD", laws)
        load(connection, [second], plugin=False)
        after = engine.ask(Request("MD", HYDRANT))
        assert engine.statistics("MD").index != old_index
        assert "MD-S01" not in after.ids()
        assert after.ids() == reference.ask(second, HYDRANT).ids()
        assert [hit.score for hit in after.hits] == [hit.score for hit in reference.ask(second, HYDRANT).hits]
        # A word only the new vocabulary has is expanded against it.
        assert engine.ask(Request("MD", "standpipes")).ids()[0] == "MD-S99"
        # And the old generation's statistics are let go: one vocabulary per state, however many reloads.
        assert engine.statistics_cache.kept() == [engine.statistics("MD").index]


# Texas-size.


def test_verify_is_exact_on_a_texas_size_generated_corpus(opensearch_url: str) -> None:
    laws = synthetic.generate_corpus("TX", 6000, 17)
    # Long laws, well over 40 words (and ones a byte stores exactly), and ties: exact duplicates.
    assert sum(reference.statistics(laws).lengths[i] > 40 for i in range(len(laws))) > 1000
    assert len({(law.law, law.question, law.concept) for law in laws if ranked(law)}) < sum(map(ranked, laws))
    corpus = corpus_of("TX", laws)
    with fresh_connection(opensearch_url) as connection:
        load(connection, [corpus], plugin=False)
        engine = OpenSearchEngine(connection)
        questions = synthetic.generate_questions(laws, 1200, 17)
        own = default_questions(corpus_of("TX", laws[:60]))
        report = verify_state(engine, corpus, [*questions, *own])
        assert report.exact_same == report.questions, report.disagreements[:3]
        assert report.lucene_error == 0.0
        assert report.native_same < report.questions  # length rounding moves OpenSearch's own top 8
        assert report.reasons["length rounding"] > 0
