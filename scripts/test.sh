#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff, mypy, docs drift, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e '.[dev]'
.venv/bin/ruff check hive tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
