#!/usr/bin/env bash
# Create .venv (if needed) and install hive into it, showing a line per package as pip
# collects it (pip's whole output only if it fails). A .venv already up to date for this
# pyproject.toml, Python and extras is left alone: a second run takes well under a second.
# Usage: bash scripts/setup.sh [EXTRAS]   (e.g. "dev" for the test tools)
# With "dev", also makes sure a Chromium is there for the browser tests of `hive serve`:
# Debian's chromium is installed with apt-get when missing and this runs as root
# (set HIVE_NO_BROWSER=1 to skip; without a browser those tests skip and say why).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
extras="${1:-}"

# An up-to-date .venv is not reinstalled: the stamp records a hash of what the install
# depends on (pyproject.toml, this script, the Python) and the extras installed. hive
# itself is installed editable, so changes to its code need no reinstall either.
stamp=.venv/.hive-setup
fingerprint() {
  { cat pyproject.toml scripts/setup.sh; "$1" -c 'import sys; print(sys.version)'; } \
    | "$1" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'
}
up_to_date() {
  [ -x .venv/bin/python ] && [ -x .venv/bin/hive ] && [ -f "$stamp" ] || return 1
  local want have
  want=$(fingerprint .venv/bin/python) || return 1
  have=$(head -n 1 "$stamp")
  [ "$want" = "$have" ] || return 1
  # the extras asked for must all be installed already
  local extra
  for extra in ${extras//,/ }; do
    grep -qx "extra $extra" "$stamp" || return 1
  done
}

if ! up_to_date; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $("$PY" --version 2>&1)" >&2
    "$PY" -m venv .venv
  fi
  target="."
  if [ -n "$extras" ]; then target=".[$extras]"; fi
  echo "setup: installing hive${extras:+ [$extras]} and its dependencies into .venv" \
    "(once; later runs reuse it)" >&2
  log=$(mktemp)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip \
    >/dev/null 2>&1 || true
  # Progress: one line per package pip collects; its whole output only if it fails.
  # editable_mode=compat: a plain path in site-packages, not an import hook that every
  # hive process would load at start-up (pathlib and a finder: ~10 ms per command).
  set +e
  .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
    -e "$target" --config-settings editable_mode=compat 2>&1 | tee "$log" | while IFS= read -r line; do
      case "$line" in
        Collecting*|Installing\ collected*|Successfully\ installed*)
          echo "  ${line:0:100}" >&2 ;;
      esac
    done
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" != "0" ]; then
    cat "$log" >&2
    echo "setup failed: could not install hive into .venv (pip output above)" >&2
    if grep -qE "No matching distribution found|Failed to establish a new connection" "$log"; then
      echo "pip found no package index: the first setup downloads hive's dependencies" \
        "from PyPI (or the index pip is configured for), so it needs the network;" \
        "run it again once pip can reach one" >&2
    fi
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  installed=""
  if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$(fingerprint .venv/bin/python)" ]; then
    installed=$(grep '^extra ' "$stamp" || true)  # keep the extras installed before
  fi
  {
    fingerprint .venv/bin/python
    printf '%s\n' "$installed"
    for extra in ${extras//,/ }; do echo "extra $extra"; done
  } | grep -v '^$' | awk '!seen[$0]++' > "$stamp"
  echo "setup: .venv is ready (.venv/bin/hive)" >&2
fi

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
