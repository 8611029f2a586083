"""`lawindex` run in process as the unit tests drive it, and a refusal checked as the bad-input catalogue
(docs/bad-input.md) describes it: one `error:` line, perhaps a `hint:`, its exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from indexer.cli import app

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
# Nothing listens on the discard port of loopback: a command that got this far would exit 3.
NOWHERE = "http://127.0.0.1:9"


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    """`lawindex ARGS` in process; fails the test on a traceback, whatever the exit code."""
    result = CliRunner().invoke(app, list(args), input=input, env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        raise AssertionError(
            "lawindex raised instead of reporting:\n" + "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
        )
    assert "Traceback" not in result.output
    return result


def refused(result: Result, code: int, *fragments: str) -> str:
    """The error line of a refused command, checked: its exit code, one `error:` line, its fragments."""
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = [text for text in result.stderr.splitlines() if text.strip()]
    errors = [text for text in lines if text.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert all(text.startswith(("error: ", "hint: ", "warning: ")) for text in lines), result.stderr
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]
