#!/usr/bin/env bash
# Installs the spec oracle's one dependency (tsx, pinned by package-lock.json) into
# tests/spec_oracle/node_modules. Run by the CI before the tests; safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
