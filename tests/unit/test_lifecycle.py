"""What keeps lawindex from harming what it shares a cluster with, without a cluster: the seal of the statistics
(trust/sealing.py), the ownership marker (trust/ownership.py), the Stop that signals set (write/stop.py)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from indexer.errors import LoadInterrupted
from indexer.opensearch.trust import ownership, sealing
from indexer.opensearch.write.stop import stopping_on_signals

INDEX = "lawindex-tx-20260101000000000000"


def sealed() -> dict[str, object]:
    body = {
        "kind": "statistics",
        "state": "TX",
        "statistics": {"size": 3, "average": 7.333333333333333, "vocabulary": [["park", 2], ["fire", 1]]},
    }
    return sealing.seal(body, namespace="lawindex", index=INDEX, fingerprint="2:abc:def")


def through_json(document: dict[str, object]) -> dict[str, object]:
    """The document as it comes back from OpenSearch: written as JSON, read back, with keys reordered."""
    text = json.dumps(document, indent=2)
    back: dict[str, object] = json.loads(text)
    return dict(reversed(list(back.items())))


def test_a_sealed_document_read_back_is_whole() -> None:
    assert sealing.seal_problem(through_json(sealed()), INDEX, "TX", "lawindex") is None


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["statistics"].update(average=7.333333333333334), "checksum does not match"),  # one ulp
        (lambda d: d["statistics"]["vocabulary"].__setitem__(0, ["park", 3]), "checksum does not match"),
        (lambda d: d["statistics"]["vocabulary"].reverse(), "checksum does not match"),  # the Map order
        (lambda d: d.update(state="MD"), "checksum does not match"),
        (lambda d: d["seal"].update(index="lawindex-tx-20270101000000000000"), "checksum does not match"),
        (lambda d: d["seal"].pop("checksum"), "carry no checksum"),
        (lambda d: d.pop("seal"), "carry no checksum"),
        (lambda d: d.pop("statistics"), "malformed"),
        (lambda d: d.update(statistics="many"), "malformed"),
    ],
)
def test_any_change_breaks_the_seal(change: object, said: str) -> None:
    document = through_json(sealed())
    change(document)  # type: ignore[operator]
    problem = sealing.seal_problem(document, INDEX, "TX", "lawindex")
    assert problem is not None and said in problem


def test_a_whole_document_of_another_index_state_or_namespace_is_refused() -> None:
    document = sealed()
    other = "lawindex-tx-20270101000000000000"
    assert "belong to another index" in str(sealing.seal_problem(document, other, "TX", "lawindex"))
    assert "TX's, not MD's" in str(sealing.seal_problem(document, INDEX, "MD", "lawindex"))
    assert "namespace 'lawindex'" in str(sealing.seal_problem(document, INDEX, "TX", "staging"))


def test_ownership_needs_the_marker_namespace_state_and_the_index_itself() -> None:
    mine = ownership.marker("lawindex", "TX", INDEX)
    assert ownership.not_ours(mine, INDEX, "TX", "lawindex") is None
    assert "no lawindex marker" in str(ownership.not_ours({}, INDEX, "TX", "lawindex"))
    assert "no lawindex marker" in str(ownership.not_ours(None, INDEX, "TX", "lawindex"))
    assert "'someone'" in str(ownership.not_ours({**mine, "owner": "someone"}, INDEX, "TX", "lawindex"))
    assert "namespace 'lawindex', not 'staging'" in str(ownership.not_ours(mine, INDEX, "TX", "staging"))
    assert "TX's laws, not MD's" in str(ownership.not_ours(mine, INDEX, "MD", "lawindex"))
    copy = "lawindex-tx-20270101000000000000"
    assert "a copy of" in str(ownership.not_ours(mine, copy, "TX", "lawindex"))


def test_an_index_of_the_first_schema_is_ours_by_its_name_and_state() -> None:
    first_schema = {"state": "TX", "fingerprint": "1:abc:def"}
    assert ownership.not_ours(first_schema, INDEX, "TX", "lawindex") is None
    assert ownership.not_ours(first_schema, "lawindex-tx-notes", "TX", "lawindex") is not None
    assert ownership.not_ours(first_schema, INDEX, "MD", "lawindex") is not None
    assert ownership.not_ours(first_schema, INDEX, "TX", "staging") is not None


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_sets_the_stop_instead_of_ending_the_process(number: signal.Signals, code: int) -> None:
    before = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    with stopping_on_signals() as stop:
        assert not stop.is_set()
        os.kill(os.getpid(), number)
        os.kill(os.getpid(), signal.SIGINT)  # a second signal changes nothing
        assert stop.wait(5)
        assert stop.signal_number == number
        with pytest.raises(LoadInterrupted) as stopped:
            stop.check("TX")
        assert stopped.value.exit_code == code
        assert number.name in stopped.value.message
    # Stopped: the process is ending, and further signals are ignored, never Python's default.
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    os.kill(os.getpid(), signal.SIGINT)
    for n, handler in before.items():
        signal.signal(n, handler)


def test_without_a_signal_the_handlers_before_are_restored() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with stopping_on_signals() as stop:
        assert signal.getsignal(signal.SIGINT) is not before[0]
    assert not stop.is_set()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
