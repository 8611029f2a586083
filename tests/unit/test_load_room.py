"""The laws a load has under way at once (indexer/opensearch/write/load.py, LawsAtOnce): states that fit load side
by side, a state larger than the room loads alone, and a stop or another state's failure ends the wait."""

from __future__ import annotations

import threading
import time

import pytest

from indexer.errors import LoadInterrupted
from indexer.opensearch.write.load import LawsAtOnce, NotStarted
from indexer.opensearch.write.stop import Stop


def _load_side_by_side(room: LawsAtOnce, sizes: list[int], together: int) -> list[int]:
    """Each size loaded on a thread of its own, holding its room until told to go: how many were under way
    once `together` were (or 5 s passed) and 0.3 s more, and the most laws under way seen."""
    seen: list[int] = []
    go = threading.Event()
    stop = Stop()

    def one(size: int) -> None:
        with room.held(size, stop, "TX", threading.Event()):
            seen.append(room.under_way)
            go.wait(5)

    threads = [threading.Thread(target=one, args=(size,)) for size in sizes]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(seen) < together:
        time.sleep(0.01)
    time.sleep(0.3)  # room for any other to (wrongly) enter
    entered_first = len(seen)
    go.set()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads)
    assert room.under_way == 0
    return [entered_first, max(seen)]


def test_states_that_fit_load_side_by_side() -> None:
    assert _load_side_by_side(LawsAtOnce(100), [30, 30, 40], 3) == [3, 100]


def test_a_state_past_the_room_waits_for_the_others_and_one_larger_than_it_loads_alone() -> None:
    entered_first, most = _load_side_by_side(LawsAtOnce(100), [70, 70], 1)
    assert entered_first == 1 and most == 70
    entered_first, most = _load_side_by_side(LawsAtOnce(100), [500, 10], 1)
    assert entered_first == 1 and most == 100  # the large one alone, charged the whole room


def test_a_stop_ends_the_wait_for_room() -> None:
    room, stop, failed = LawsAtOnce(100), Stop(), threading.Event()
    with room.held(100, stop, "AK", failed):
        stop.set()
        with pytest.raises(LoadInterrupted), room.held(1, stop, "AL", failed):
            pass
    assert room.under_way == 0


def test_a_failure_of_another_state_ends_the_wait_and_the_waiting_state_does_not_start() -> None:
    room, stop, failed = LawsAtOnce(100), Stop(), threading.Event()
    with room.held(100, stop, "AK", failed):
        failed.set()
        with pytest.raises(NotStarted), room.held(1, stop, "AL", failed):
            pytest.fail("AL started after AK failed")
    assert room.under_way == 0
    with pytest.raises(NotStarted), room.held(1, stop, "AZ", failed):  # nor one with room to spare
        pytest.fail("AZ started after AK failed")
