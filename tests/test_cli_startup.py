"""The full CLI's start-up: a command builds and imports only what it runs
(``hive/cli/main.py build``, ``hive/ops/commandindex.py``), and behaves as the whole app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from hive.ops.catalog import DECLARING
from tests.conftest import agent_env
from tests.inprocess import console_probe


def _names_of(group: Any) -> dict[str, Any]:
    commands: dict[str, Any] = group.commands
    return commands


def _names(group: Any) -> list[str]:
    return list(_names_of(group))


def _described(command: Any, parent: Any, name: str) -> dict[str, Any]:
    """What a person and a program see of ``command``: its help page, its parameters
    and, for a group, each subcommand in order."""
    context = typer.Context(command, parent=parent, info_name=name)
    params = [
        (p.name, p.opts, p.secondary_opts, p.required, p.nargs, p.multiple, repr(p.default))
        for p in command.params
    ]
    subcommands = getattr(command, "commands", {})
    return {
        "help": command.get_help(context),
        "hidden": command.hidden,
        "params": params,
        "commands": [(sub, _described(subcommands[sub], context, sub)) for sub in subcommands],
    }


def test_the_command_index_names_each_commands_declaring_modules() -> None:
    """Each first word of a command generated from an operation maps to exactly the
    modules that declare its commands (a stale or missing entry would build a command
    without some of its subcommands, or import a module for nothing)."""
    from hive.ops.catalog import operations
    from hive.ops.commandindex import COMMAND_MODULES
    from hive.ops.spec import DECLARED_IN

    found: dict[str, set[str]] = {}
    for op in operations():
        for command in op.commands:
            module = DECLARED_IN[op.name].removeprefix("hive.ops.")
            found.setdefault(command.path[0], set()).add(module)
    assert {word: set(modules) for word, modules in COMMAND_MODULES.items()} == found


def test_every_first_word_is_known_and_builds_as_in_the_whole_app() -> None:
    """``WORDS`` is every command and group of ``hive --help`` (hidden ones too), and the
    app built for one of them has that command exactly as the whole app has it: the same
    parameters, help and subcommands in the same order."""
    from hive.cli.main import WORDS, app, build

    whole = typer.main.get_command(app)
    assert set(_names(whole)) == set(WORDS)
    context = typer.Context(whole, info_name="hive")
    for word in sorted(WORDS):
        focused = typer.main.get_command(build(word))
        assert _names(focused) == [word], word
        expected = _described(_names_of(whole)[word], context, word)
        assert _described(_names_of(focused)[word], context, word) == expected, word


OPERATION_MODULES = {f"hive.ops.{name}" for name in DECLARING}
HEAVY = {  # hand-written commands that only some commands need
    "hive.cli.swarm_cmd",
    "hive.cli.tools_cmd",
    "hive.cli.serve_cmd",
    "hive.cli.coord_cmd",
}


@pytest.mark.parametrize(
    ("argv", "own"),
    [
        (["stats"], {"cells"}),
        (["show", "--help"], {"cells"}),
        (["mail", "inbox"], {"coord", "repo"}),
        (["doctor"], {"repo"}),
    ],
)
def test_a_command_imports_only_the_operations_it_runs(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, argv: list[str], own: set[str]
) -> None:
    """The start-up cost of a full-CLI command is mostly imports: every operation module
    brings its parameter and result models (pydantic classes, ~0.5 ms each to create),
    and the hand-written commands bring their own. A command imports its own only."""
    create_cell(ws, title="one")
    for name, value in agent_env(ws.root, "alice").items():
        monkeypatch.setenv(name, value)
    watched = sorted({*OPERATION_MODULES, *HEAVY, "hive.cli.main", "typer"})
    ran = console_probe(Path(ws.root), argv, watched)
    code, _, loaded = ran.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0", ran.stdout + ran.stderr
    expected = sorted({"hive.cli.main", "typer", *(f"hive.ops.{name}" for name in own)})
    assert loaded == repr(expected), ran.stdout
