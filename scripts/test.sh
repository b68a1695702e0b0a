#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff (lint and format), mypy,
# docs drift, pytest.
# pytest runs in parallel (pytest-xdist, one worker per CPU; HIVE_TEST_WORKERS=N to choose,
# 0 for one process); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check hive tests benchmarks
.venv/bin/ruff format --check hive tests benchmarks
if grep -rnE "fmt: *(skip|off)" hive tests benchmarks; then
    echo "ruff format escapes are not allowed (see above)" >&2
    exit 1
fi
.venv/bin/mypy
.venv/bin/python -m pytest -n "${HIVE_TEST_WORKERS:-auto}" --dist worksteal "$@"
