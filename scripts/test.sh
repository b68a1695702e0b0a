#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run every check CI runs: ruff (lint and format), mypy,
# docs drift, pytest.
# pytest runs in parallel (pytest-xdist, one worker per CPU and one more: many tests wait on
# processes they start, and a third worker on 2 cores took the suite from 117 s to 94 s;
# HIVE_TEST_WORKERS=N to choose, 0 for one process; HIVE_TEST_TMPDIR: see below); extra
# arguments go to pytest.
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
# The tests' temporary directories (every test repository, pytest's tmp_path, TMPDIR of
# the processes the tests start) go to a RAM file system when there is one: /dev/shm if
# it is a tmpfs with 4 GiB free where a script may be executed (git runs the hooks the
# tests install). On a disk the tests' many small files, fsyncs and deletions wait behind
# other disk traffic (the whole suite: 347 s wall there, 214 s on tmpfs, same CPU, two
# shared cores). A passed test's directory is removed as it ends (a failed one's is kept).
# HIVE_TEST_TMPDIR=DIR chooses the directory; HIVE_TEST_TMPDIR= (empty) keeps TMPDIR.
extra=()
if [ -z "${HIVE_TEST_TMPDIR+set}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] \
    && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 4194304 ]; then
    HIVE_TEST_TMPDIR="/dev/shm/hive-tests-$(id -u)"
    mkdir -p "$HIVE_TEST_TMPDIR"
    probe="$HIVE_TEST_TMPDIR/probe.$$.sh"  # one per run: runs at the same time share the folder
    { printf '#!/bin/sh\nexit 0\n' >"$probe" && chmod +x "$probe" && "$probe"; } 2>/dev/null \
        || HIVE_TEST_TMPDIR=""  # mounted noexec
    rm -f "$probe"
fi
if [ -n "${HIVE_TEST_TMPDIR:-}" ]; then
    mkdir -p "$HIVE_TEST_TMPDIR"
    export TMPDIR="$HIVE_TEST_TMPDIR"
    extra=(-o tmp_path_retention_policy=failed)
fi
workers="${HIVE_TEST_WORKERS:-$(( $(nproc 2>/dev/null || echo 1) + 1 ))}"
.venv/bin/python -m pytest -n "$workers" --dist worksteal ${extra[@]+"${extra[@]}"} "$@"
