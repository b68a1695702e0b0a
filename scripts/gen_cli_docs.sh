#!/usr/bin/env bash
# Regenerate docs/cli.md from the typer app (a test checks it is current).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m hive.cli.docs > docs/cli.md
.venv/bin/python -m hive.cli.docs commands > hive/cli/commands.py
