"""scripts/count-tests: the one line a CI phase prints, and the failed tests it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A pytest --junitxml file as pytest writes it: one passed, one failed, one error in setup, one skipped.
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="tests.integration.test_ask" name="test_passes" time="0.1"/>
<testcase classname="tests.integration.test_ask" name="test_fails[MD]" time="0.2">
<failure message="x">x</failure></testcase>
<testcase classname="tests.integration.test_load" name="test_setup_errs" time="0.0">
<error message="y">y</error></testcase>
<testcase classname="tests.integration.test_load" name="test_skips" time="0.0">
<skipped message="z">z</skipped></testcase>
</testsuite></testsuites>
"""


def count(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "count-tests"), "phase", str(junit)],
        capture_output=True,
        text=True,
        env={"CI": ci, "PATH": "/usr/bin:/bin"},
    )


def test_each_failed_test_is_named_before_the_count(tmp_path: Path) -> None:
    done = count(tmp_path, "false")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "tests: phase: failed: tests.integration.test_ask::test_fails[MD]",
        "tests: phase: failed: tests.integration.test_load::test_setup_errs",
        "tests: phase: 4 run, 2 failed, 1 skipped",
    ]


def test_a_skip_fails_the_phase_under_ci(tmp_path: Path) -> None:
    done = count(tmp_path, "true")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "tests: phase: 1 skipped under CI=true (nothing may skip in CI)"
