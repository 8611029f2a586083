"""The integration tests' `lawindex` commands, forked from a zygote (tests/integration/forked.py), are the
commands a fresh interpreter runs: the same exit code and the same bytes on stdout and stderr, for help, bad
input, input on stdin, an unreachable node, and the environment the test gives; each in a process of its own;
a command past its time killed. None of these needs a node."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from tests.integration import forked

# Nothing listens on the discard port of loopback.
NOWHERE = "http://127.0.0.1:9"

COMMANDS: list[tuple[list[str], dict[str, str], bytes | None]] = [
    (["--help"], {}, None),
    (["ask", "--help"], {}, None),
    (["nosuch"], {}, None),
    (["ask", "ZZ", "how far from a hydrant"], {}, None),
    (["ask", "TX", "how far from a hydrant", "--url", NOWHERE], {}, None),
    (["ask", "TX", "--from", "-", "--url", NOWHERE, "--json"], {}, b"speed limit\nschool bus\n"),
    (["ask", "TX", "a question"], {"OPENSEARCH_URL": NOWHERE, "LAWINDEX_NAMESPACE": "Not A Namespace!"}, None),
    (["ask", "TX", "a question", "--timeout", "0"], {"OPENSEARCH_URL": NOWHERE}, None),
    (["history", "TX"], {"OPENSEARCH_URL": "not a url"}, None),
]


@pytest.mark.parametrize(("args", "extra", "stdin"), COMMANDS, ids=[" ".join(c[0]) for c in COMMANDS])
def test_a_forked_command_is_the_fresh_command(args: list[str], extra: dict[str, str], stdin: bytes | None) -> None:
    env = {**os.environ, **extra}
    fresh = subprocess.run([*forked.FRESH, *args], input=stdin, capture_output=True, env=env, timeout=120)
    code, out, err = forked.run(args, env, stdin)
    assert (code, out.decode(), err.decode()) == (fresh.returncode, fresh.stdout.decode(), fresh.stderr.decode())
    assert out or err  # each says something, so the comparison compares


def test_each_command_reads_the_environment_it_is_given() -> None:
    # Two commands in a row from the same zygote, each told of another node by OPENSEARCH_URL: each error
    # names its own (nothing listens on either port), as the fresh command's does.
    said = []
    for port in (19, 21):
        env = {**os.environ, "OPENSEARCH_URL": f"http://127.0.0.1:{port}"}
        code, out, err = forked.run(["ask", "TX", "a question"], env)
        fresh = subprocess.run([*forked.FRESH, "ask", "TX", "a question"], capture_output=True, env=env, timeout=120)
        assert (code, out, err) == (fresh.returncode, fresh.stdout, fresh.stderr)
        assert f"127.0.0.1:{port}" in err.decode()
        said.append(err)
    assert said[0] != said[1]


def test_a_command_past_its_time_is_killed() -> None:
    # A port that takes connections and never answers: the command waits out its own long timeout, unless killed.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        began = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            forked.run(["ask", "TX", "a question", "--url", url, "--timeout", "600"], dict(os.environ), None, timeout=2)
    assert time.monotonic() - began < 60


def test_what_an_interpreter_reads_at_its_start_runs_fresh() -> None:
    started_in = {"PATH": "/bin", "LANG": "C.UTF-8"}
    assert not forked.starts_fresh({"PATH": "/bin", "LANG": "C.UTF-8", "LAWINDEX_NAMESPACE": "x"}, started_in)
    assert forked.starts_fresh({"PATH": "/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "latin-1"}, started_in)
    assert forked.starts_fresh({"PATH": "/bin", "LANG": "C"}, started_in)
    assert forked.starts_fresh({"PATH": "/bin"}, started_in)
    assert forked.starts_fresh({**started_in, "COLUMNS": "40"}, started_in)
    assert forked.starts_fresh({**started_in, "LAWINDEX_FRESH_COMMANDS": "1"}, started_in)
