#!/usr/bin/env bash
# Installs the spec oracle's one dependency (tsx, pinned by package-lock.json) with `npm ci` into lawindex's
# cache (tests/spec_oracle/oracle.py, install_dir: <cache>/spec-oracle/<lock digest>/node_modules), not into
# the source tree. Run by scripts/test before the tests; safe to run again (a second run does nothing).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m tests.spec_oracle.oracle install
