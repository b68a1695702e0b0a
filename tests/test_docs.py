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


def test_cli_reference_names_every_environment_variable_hive_reads() -> None:
    """The CLI reference's Environment paragraph names each HIVE_ variable the hive
    command reads (those hive sets for worker programs and shell hooks, and the test
    hook, aside)."""
    import re

    read = set()
    for path in (ROOT / "hive").rglob("*.py"):
        read |= set(re.findall(r"[\"'](HIVE_[A-Z_]+)[\"']", path.read_text()))
    for_workers = {"HIVE_CELL", "HIVE_PROJECT", "HIVE_TOOL", "HIVE_TEST_KILL_AT"}
    text = render_cli_docs()
    environment = text[text.index("Environment:") :].split("\n\n", 1)[0]
    missing = sorted(name for name in read - for_workers if f"`{name}" not in environment)
    assert not missing, f"not in docs/cli.md's Environment paragraph: {missing}"
