"""indexer.opensearch.read.search_limits without a cluster: which refusal names which limit (the bodies as OpenSearch
sends them), how many clauses to send after one, and how terms are cut into groups. Reading past the
limits against a real node is tests/integration/test_limits.py."""

from __future__ import annotations

import pytest
from opensearchpy import TransportError

from indexer.opensearch.read.search_limits import Candidates, TooManyClauses, WindowTooLarge, groups, limit_refused

# The bodies OpenSearch answers with (3.x and 2.19), trimmed to what carries the reason.
NESTED = "Query contains too many nested clauses; maxClauseCount is set to 8"
CLAUSES_3X = {
    "error": {
        "root_cause": [{"type": "too_many_nested_clauses", "reason": NESTED}],
        "type": "search_phase_execution_exception",
        "reason": "all shards failed",
    },
    "status": 500,
}
CLAUSES_NO_NUMBER = {
    "error": {
        "type": "search_phase_execution_exception",
        "caused_by": {"type": "too_many_clauses", "reason": "too many"},
    }
}
WINDOW = {
    "error": {
        "root_cause": [
            {
                "type": "illegal_argument_exception",
                "reason": "Result window is too large, from + size must be less than or equal to: [20] but was [30]. "
                "See the scroll api for a more efficient way to request large data sets.",
            }
        ],
        "type": "search_phase_execution_exception",
    },
    "status": 400,
}
NOT_A_LIMIT = {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index [x]"}]}}


def refusal(status: int, body: object) -> TransportError:
    return TransportError(status, "refused", body)


def test_a_clause_refusal_says_the_limit_the_node_enforced() -> None:
    found = limit_refused(refusal(500, CLAUSES_3X), clauses=12, size=8)
    assert isinstance(found, TooManyClauses)
    assert (found.sent, found.limit) == (12, 8)
    assert found.smaller() == 8


def test_a_clause_refusal_without_a_number_halves_what_was_sent() -> None:
    found = limit_refused(refusal(500, CLAUSES_NO_NUMBER), clauses=12, size=8)
    assert isinstance(found, TooManyClauses)
    assert found.limit is None
    assert found.smaller() == 6


@pytest.mark.parametrize(("sent", "limit", "then"), [(12, 8, 8), (12, None, 6), (3, None, 1), (1, None, 1), (9, 20, 8)])
def test_fewer_clauses_are_sent_after_a_refusal_never_zero(sent: int, limit: int | None, then: int) -> None:
    # A limit the node says is at least what was sent cannot be right: one clause fewer, at the most.
    assert TooManyClauses(sent, limit).smaller() == then


def test_a_window_refusal_says_the_index_s_result_window() -> None:
    found = limit_refused(refusal(400, WINDOW), clauses=3, size=30)
    assert isinstance(found, WindowTooLarge)
    assert found.limit == 20


def test_any_other_failure_is_not_a_limit() -> None:
    assert limit_refused(refusal(404, NOT_A_LIMIT), clauses=3, size=8) is None
    assert limit_refused(refusal(502, "Bad Gateway"), clauses=3, size=8) is None


def test_terms_are_cut_into_groups_in_order() -> None:
    terms = [f"t{i}" for i in range(7)]
    assert groups(terms, None) == [terms]
    assert groups(terms, 7) == [terms]
    assert groups(terms, 3) == [["t0", "t1", "t2"], ["t3", "t4", "t5"], ["t6"]]
    assert groups(terms, 1) == [[term] for term in terms]
    assert groups([], 3) == [[]]


def test_a_window_s_lowest_score_bounds_what_it_left_out() -> None:
    hits = [{"_score": 3.5}, {"_score": 1.25}, {"_score": 2.0}]
    assert Candidates(["a"], hits, complete=False).lowest == 1.25
    assert Candidates(["a"], [], complete=True).lowest == 0.0
