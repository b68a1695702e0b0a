#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff, mypy, docs drift, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check hive tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
