#!/usr/bin/env bash
# Create .venv (if needed) and install hive into it; pip's output is shown only if it fails.
# Usage: bash scripts/setup.sh [EXTRAS]   (e.g. "dev" for the test tools)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
target="."
if [ -n "${1:-}" ]; then target=".[$1]"; fi
log=$(mktemp)
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target" >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup failed: could not install hive into .venv (pip output above)" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
