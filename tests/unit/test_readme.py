"""The examples of README.md and docs/*.md that need no server, run as the pages show them (tests/readme.py
says how): ask and get on the reference engine, which prints exactly what the OpenSearch engine prints."""

from __future__ import annotations

import pytest

from tests.readme import CANNOT_RUN, NEEDS_NO_SERVER, Example, differences, every_example, examples, run

EXAMPLES = every_example()
RUNNABLE = [example for example in EXAMPLES if example.lawindex.startswith(NEEDS_NO_SERVER)]


def test_the_readme_has_its_examples() -> None:
    commands = [example.lawindex for example in EXAMPLES]
    assert any(command.startswith("lawindex ask TX") for command in commands)
    assert any(command.startswith("lawindex load") for command in commands)
    assert len(RUNNABLE) >= 5
    # README.md's tour and docs/cli.md both show commands that run.
    assert {"README.md", "docs/cli.md"} <= {example.page for example in RUNNABLE}
    assert examples()  # README.md's own
    # Every example runs somewhere: here, in tests/integration/test_readme.py, or is listed with a reason.
    for example in EXAMPLES:
        if example.skipped_because() is None:
            assert example.lawindex.split()[1] in ("ask", "get", "load", "status", "verify"), example


@pytest.mark.parametrize("example", RUNNABLE, ids=[e.where for e in RUNNABLE])
def test_a_readme_example_prints_what_the_readme_shows(example: Example) -> None:
    command = example.command
    if "--engine" not in command:
        command += " --engine reference --corpora corpora/"
    code, stdout, stderr = run(example, command)
    assert code == 0, (example.command, stderr)
    assert "Traceback" not in stderr
    problems = differences(example, stdout)
    assert not problems, f"{example.where}: {example.command}\n" + "\n".join(problems)


def test_a_changed_output_is_told() -> None:
    # The comparison itself can fail: a law the README shows that the command does not print, a line cut
    # for the page that no printed line begins with, a line too many.
    shown = Example(1, "lawindex ask TX x", ("words: far", "TX-S01  An operator may ...", "TX-S02  B"))
    assert differences(shown, "words: far\nTX-S01  An operator may not stop\nTX-S02  B\n") == []
    assert differences(shown, "words: far\nTX-S01  A driver may\nTX-S02  B\n")
    assert differences(shown, "words: far\nTX-S01  An operator may not\nTX-S03  B\n")
    assert differences(shown, "words: far\nTX-S01  An operator may not\nTX-S02  B\nTX-S03  C\n")
    # What varies is not a difference: seconds and index generations.
    timed = Example(1, "lawindex load x", ('{"seconds": 0.004, "index": "lawindex-tx-20261130080237142214"}',))
    assert differences(timed, '{"seconds": 1.25, "index": "lawindex_t1-tx-20270101000000000000"}') == []
    node = {f"lawindex opensearch {c}" for c in ("start", "status", "logs", "stop")}
    assert set(CANNOT_RUN) == node | {"lawindex serve"}
