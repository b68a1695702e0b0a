"""Generated references must match the code (regenerate with scripts/gen_cli_docs.sh)."""

from __future__ import annotations

from pathlib import Path

from hive.cli.docs import render_cli_docs

ROOT = Path(__file__).resolve().parent.parent


def test_cli_reference_is_current() -> None:
    current = (ROOT / "docs" / "cli.md").read_text()
    assert current == render_cli_docs(), "docs/cli.md is stale: run scripts/gen_cli_docs.sh"


def test_cli_reference_lists_every_command() -> None:
    text = render_cli_docs()
    for command in ("hive create", "hive ready", "hive mail send", "hive reserve", "hive hooks"):
        assert f"## `{command}`" in text or f"### `{command}`" in text, command
