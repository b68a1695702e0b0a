#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff (lint and format), mypy,
# docs drift, pytest.
# Extra arguments go to pytest.
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
# pytest: in parallel (pytest-xdist, `-n auto`: one worker per CPU and one more, as many
# tests wait on the processes they start; HIVE_TEST_WORKERS=N to choose, 0 for one
# process), compiled bytecode kept (in __pycache__, where the installed packages' is) and
# the temporary directories on a RAM file system when there is one (HIVE_TEST_TMPDIR=DIR
# to choose, empty to keep TMPDIR): tests/conftest.py sets these up, so that `pytest`
# alone runs the suite the same way. Bytecode is kept for this process's own imports too
# (the shell may set PYTHONDONTWRITEBYTECODE).
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m pytest -n auto --dist worksteal "$@"
