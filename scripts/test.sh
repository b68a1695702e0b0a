#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff, mypy, docs drift, pytest.
# pytest runs in parallel (pytest-xdist, one worker per CPU; HIVE_TEST_WORKERS=N to choose,
# 0 for one process); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check hive tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -n "${HIVE_TEST_WORKERS:-auto}" --dist worksteal "$@"
