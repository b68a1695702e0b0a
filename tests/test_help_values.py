"""A person's ``--help`` names the values an option takes."""

from __future__ import annotations

import pytest

from tests.inprocess import run_hive


@pytest.mark.parametrize(
    ("command", "option", "values"),
    [
        ("update", "-s, --status", "open|in_progress|blocked|deferred|closed"),
        ("update", "-p, --priority", "0-4 or P0-P4"),
        ("list", "-t, --type", "bug|feature|task|epic|chore"),
        ("list", "-p, --priority", "0-4 or P0-P4"),
    ],
)
def test_help_names_the_values_of_status_priority_and_type(
    command: str, option: str, values: str
) -> None:
    """`hive update --help` showed `-s, --status TEXT` and `-p, --priority TEXT` with
    nothing after them (`hive list --help` the same for -t and -p): a new user could not
    learn the statuses or the priority's range without the docs."""
    shown = run_hive([command, "--help"], env={"COLUMNS": "100"})
    assert shown.returncode == 0
    (line,) = [text for text in shown.stdout.splitlines() if text.strip().startswith(option)]
    assert values in line, line
