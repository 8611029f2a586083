"""Importing `indexer.cli` (as the tests and other programs do) changes nothing in the process; `main()`, the
console script's entry point, sets what a short `lawindex` process wants: one OpenBLAS thread, and a
collector that does not walk the command's objects again and again, and no aiohttp (opensearch-py's async client,
which lawindex never uses, imported with it where installed). Each in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, os, sys
before = [gc.get_threshold()[0], os.environ.get("OPENBLAS_NUM_THREADS")]
import indexer.cli
from indexer.cli import app
imported = [gc.get_threshold()[0], os.environ.get("OPENBLAS_NUM_THREADS")]
if sys.argv[1] == "main":
    sys.argv = ["lawindex", "--help"]
    try:
        indexer.cli.main()
    except SystemExit:
        pass
ran = [gc.get_threshold()[0], os.environ.get("OPENBLAS_NUM_THREADS")]
import opensearchpy
ran.append(sorted(name for name in ("aiohttp", "opensearchpy.connection.http_async") if sys.modules.get(name)))
print(json.dumps([before, imported, ran]), file=sys.stderr)
"""


def probe(mode: str) -> list[list[object]]:
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    found: list[list[object]] = json.loads(done.stderr.strip().splitlines()[-1])
    return found


def test_importing_the_cli_changes_nothing() -> None:
    before, imported, ran = probe("import")
    assert before == [700, None]  # CPython's default threshold, and no thread setting of ours
    assert imported == before
    # aiohttp is installed here (the test extra), and opensearch-py takes it up with its async client.
    assert ran[2] == ["aiohttp", "opensearchpy.connection.http_async"]


def test_main_sets_one_blas_thread_a_high_collection_threshold_and_no_aiohttp() -> None:
    before, imported, ran = probe("main")
    assert imported == before
    assert ran == [100_000, "1", []]
