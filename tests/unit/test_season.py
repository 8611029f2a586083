"""benchmarks/season.py's judge: which generations were live while a question was asked, and what it calls an
answer of them (right), of none (wrong) or of two at once (mixed). The soak's zeros mean nothing unless a wrong
or mixed answer would be counted."""

from __future__ import annotations

from benchmarks.season import Asked, References, Timeline, judge

A = (("TX-1", 3.0), ("TX-2", 2.0))  # version 0's answer
B = (("TX-3", 5.0), ("TX-4", 1.0))  # version 1's


class Known(References):
    def __init__(self) -> None:
        super().__init__({})
        self.known = {("TX", 0, "words", "q"): A, ("TX", 1, "words", "q"): B}


def _timeline() -> Timeline:
    """Version 0 until a load (10 s to 12 s) put version 1 (index tx-b) behind the alias."""
    timeline = Timeline()
    timeline.first["TX"] = 0
    timeline.record("TX", 0.0, 0, 0, "tx-a")
    timeline.record("TX", 10.0, 0, 1, "tx-b")
    timeline.ops["TX"][0].ended = 12.0
    return timeline


def test_the_generations_live_over_a_question_are_those_serving_at_some_moment_of_it() -> None:
    timeline = _timeline()
    assert timeline.live("TX", 1.0, 2.0) == {0}
    assert timeline.live("TX", 9.0, 10.5) == {0, 1}  # the load under way: either side
    assert timeline.live("TX", 11.0, 11.5) == {0, 1}
    assert timeline.live("TX", 12.5, 13.0) == {1}


def _asked(path: str, sent: float, hits: tuple[tuple[str, float], ...], indices: tuple[str, ...] = ()) -> Asked:
    return Asked(path, "words", "TX", "q", sent, sent + 0.1, hits, indices)


def test_an_answer_is_right_wrong_or_mixed_by_the_generations_live_then() -> None:
    asked = [
        _asked("serve", 1.0, A),  # right
        _asked("serve", 13.0, A),  # version 0's, asked once only version 1 served: wrong
        _asked("lawindex", 11.0, B),  # right: version 1 was swapped in meanwhile
        _asked("lawindex", 11.0, (A[0], B[0])),  # a hit of each: mixed
        _asked("lawindex", 1.0, (("TX-9", 3.0),)),  # a law of neither: wrong
        _asked("lawindex", 1.0, (("TX-1", 3.5), A[1])),  # a score of neither: wrong
        _asked("raw", 1.0, A, ("tx-a", "tx-a")),  # right
        _asked("raw", 1.0, B, ("tx-a", "tx-a")),  # version 1's ids from version 0's index: wrong
        _asked("raw", 13.0, B, ("tx-b", "tx-a")),  # hits of two indices: mixed
        _asked("raw", 13.0, A, ("tx-a", "tx-a")),  # version 0's index answering after the swap: wrong
        _asked("raw", 1.0, A, ("tx-zz", "tx-zz")),  # an index of no generation: wrong
    ]
    failed = _asked("serve", 1.0, ())
    failed.error = "RuntimeError: serve 503"
    verdicts = judge([*asked, failed], _timeline(), Known())
    assert verdicts.counts == {"wrong": 6, "mixed": 2, "failed": 1}, verdicts.examples
