#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff (lint and format), mypy,
# docs drift, pytest.
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
.venv/bin/python -m pytest "$@"
