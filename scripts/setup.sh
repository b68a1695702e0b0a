#!/usr/bin/env bash
# Create .venv (if needed) and install hive into it; pip's output is shown only if it fails.
# Usage: bash scripts/setup.sh [EXTRAS]   (e.g. "dev" for the test tools)
# With "dev", also makes sure a Chromium is there for the browser tests of `hive serve`:
# Debian's chromium is installed with apt-get when missing and this runs as root
# (set HIVE_NO_BROWSER=1 to skip; without a browser those tests skip and say why).
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
if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target" --config-settings editable_mode=compat >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup failed: could not install hive into .venv (pip output above)" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"

have_chromium() {
  if [ -n "${HIVE_CHROMIUM:-}" ] && [ -x "${HIVE_CHROMIUM}" ]; then return 0; fi
  for candidate in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
    if [ -x "$candidate" ]; then return 0; fi
  done
  return 1
}

install_chromium() {
  if have_chromium || [ -n "${HIVE_NO_BROWSER:-}" ]; then return 0; fi
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: no Chromium, and apt-get as root is not available to install it:" \
      "the browser tests of hive serve will be skipped" >&2
    return 0
  fi
  local apt_log
  apt_log=$(mktemp)
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q chromium >"$apt_log" 2>&1; then
    apt-get update -q >"$apt_log" 2>&1 || true
    if ! apt-get install -y -q chromium >"$apt_log" 2>&1; then
      tail -5 "$apt_log" >&2
      echo "note: apt-get install chromium failed: the browser tests will be skipped" >&2
    fi
  fi
  rm -f "$apt_log"
}

case ",${1:-}," in
  *,dev,*) install_chromium ;;
esac
