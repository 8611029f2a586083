"""indexer/service/client_limits.py without a server: the CLI's defaults are Limits' own, the open-file check, and
the batch's lone surrogates (tests/integration/test_serve_limits.py holds the limits on a running service)."""

from __future__ import annotations

import inspect
import json
import resource
from collections.abc import Iterator

import pytest

from indexer.cli.serve import serve
from indexer.errors import BadInput
from indexer.service.client_limits import RESERVED_FILES, Limits, open_files_for
from indexer.service.output import BatchIn


def test_the_cli_defaults_are_the_limits_defaults() -> None:
    defaults = {name: parameter.default for name, parameter in inspect.signature(serve).parameters.items()}
    for name in ("header_timeout", "body_timeout", "max_connections", "max_in_flight"):
        assert defaults[name] == getattr(Limits(), name), name


@pytest.fixture
def files() -> Iterator[tuple[int, int]]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    yield soft, hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_connection_bound_the_open_files_cannot_hold_is_bad_input(files: tuple[int, int]) -> None:
    _, hard = files
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no hard open-file limit to exceed")
    with pytest.raises(BadInput, match=r"--max-connections .* needs .* open files"):
        open_files_for(Limits(max_connections=hard))
    # The default bound fits what the process may open beside the reserve.
    settled = open_files_for(Limits()).max_connections
    assert settled is not None and settled + RESERVED_FILES <= resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def test_a_lone_surrogate_in_a_batch_becomes_u_fffd_and_a_pair_stays() -> None:
    # As FastAPI reads a body: Python's json, which keeps a lone surrogate (pydantic's own parser refuses it).
    body = json.loads('{"questions": ["school\\ud800bus", "\\udc00a", "car \\ud83d\\ude97"]}')
    assert body["questions"][0] == "school\ud800bus"
    batch = BatchIn.model_validate(body)
    assert batch.questions == ["school\ufffdbus", "\ufffda", "car \U0001f697"]
    for question in batch.questions:
        question.encode("utf-8")  # what the answer's bytes need
