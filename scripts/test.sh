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
# Compiled bytecode is kept (in .venv/pycache, outside the tree) even where the shell sets
# PYTHONDONTWRITEBYTECODE: else every test worker rewrites all test modules and every hive
# process a test starts (git hooks, MCP servers, swarm workers) compiles hive afresh.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/.venv/pycache"
.venv/bin/python -m pytest -n "${HIVE_TEST_WORKERS:-auto}" --dist worksteal "$@"
