"""The full CLI's start-up: a command builds and imports only what it runs
(``hive/cli/main.py build``, ``hive/ops/commandindex.py``), and behaves as the whole app."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.domain.cells import create_cell, list_cells
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


def test_a_process_running_many_commands_builds_each_click_command_once(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer makes a click command anew from its functions' signatures on every call
    (0.3-4 ms a command): the full CLI keeps the one it made for a focused app, so a
    process that runs commands over and over (the tests' in-process CLI) makes it once,
    and the command it keeps still answers as it did."""
    from tests.inprocess import run_hive

    made: list[object] = []
    real = typer.main.get_command

    def counted(app: typer.Typer) -> object:
        made.append(app)
        return real(app)

    monkeypatch.setattr(typer.main, "get_command", counted)
    answers = [
        run_hive(["create", f"cell {n}", "--json"], cwd=repo, module="hive.cli.main")
        for n in range(3)
    ]
    assert [answer.returncode for answer in answers] == [0, 0, 0]
    assert len({answer.stdout for answer in answers}) == 3  # three cells made
    assert len(made) <= 1, made  # made once (or before this test, by another)
    titles = [cell.title for cell in list_cells(ws)]
    assert sorted(titles) == ["cell 0", "cell 1", "cell 2"]


OPERATION_MODULES = {f"hive.ops.{name}" for name in DECLARING}
LAZY = {  # what these commands need not import to print their plain answers to a pipe
    "rich",  # output.Piped writes text rich would print as it is
    "filelock",  # imported where a lock is taken, not by every importer of those modules
    "importlib.metadata",  # pydantic's plugin search (hive.models.base)
    "hive.models.identity",  # hive.models.principal: the workspace's Principal alone
    "hive.models.reservation",  # hive.models.cellresults: the cell commands' results
    "hive.models.views",  # the supervisor's mail views, made where they are used
    "hive.models.swarm",  # doctor checks verify: without swarm_complete's module
    "dulwich",  # hive's own readers; a ref not made yet (refs/hive/mail) is seen absent
    "socket",  # the CLI's session names the host with os.uname
    "hive.domain.memory",  # doctor reads a project memory, decision or outcome only
    "hive.domain.permissions",  # where there is one (their readers import the
    "hive.domain.outcomes",  # models of every seed tool: hive.models.seeds)
    "hive.models.seeds",
}
RESULTS = {"hive.models.identity", "hive.models.reservation"}  # other operations' results
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
        (["comment", "{cell}", "a comment"], {"cells"}),
        (["show", "--help"], {"cells"}),
        (  # the full CLI's form (the lean path answers a plain ``mail inbox``)
            ["mail", "inbox", "--agent", "alice"],
            {"coord", "repo", "hive.models.identity", "hive.models.reservation"},
        ),
        (
            ["log"],
            {"swarm", "hive.models.identity", "hive.models.reservation", "hive.models.swarm"},
        ),
        (["doctor"], {"repo", "hive.models.identity", "hive.models.reservation"}),
    ],
)
def test_a_command_imports_only_what_it_runs(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, argv: list[str], own: set[str]
) -> None:
    """The start-up cost of a full-CLI command is mostly imports: every operation module
    brings its parameter and result models (pydantic classes, ~0.5 ms each to create),
    the hand-written commands theirs, rich ~8% of a command and pydantic's plugin search
    (importlib.metadata) as much. A command imports its own (``own``: operation modules,
    and the models its domain code uses) and none of the rest."""
    cell = create_cell(ws, title="one")
    argv = [arg.format(cell=cell.id) for arg in argv]
    for name, value in agent_env(ws.root, "alice").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLUMNS", "80")  # then unset: the process environment, not only
    monkeypatch.delenv("COLUMNS")  # os.environ, may hold a COLUMNS the children inherit
    watched = sorted({*OPERATION_MODULES, *HEAVY, *LAZY, "hive.cli.main", "typer"})
    ran = console_probe(Path(ws.root), argv, watched)
    code, _, loaded = ran.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0", ran.stdout + ran.stderr
    needed = {name if name.startswith("hive.") else f"hive.ops.{name}" for name in own}
    assert loaded == repr(sorted({"hive.cli.main", "typer", *needed})), ran.stdout


# --------------------------------------------------------- piped output without rich

PIECES = ["[", "]", "/", "\\", "=", "@", "#", " ", "x", "é", "\t", "\x1b", "bold", "dim"]
PIECES += ["red", "none", "[dim]", "[/dim]", "[/]", "[bold]", "[red]", "[/red]", "[link=x]"]
MARKUP = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


def _rich_output(text: str, markup: bool | None) -> str:
    """What hive's rich console prints of ``text`` to a pipe (``output.console``)."""
    import io

    from hive.cli import output

    buffer = io.StringIO()
    shown = output._console_class()(
        file=buffer, highlight=False, soft_wrap=True, width=1000, emoji=False
    )
    try:
        shown.print(text, markup=markup)
    except Exception as exc:  # rich's MarkupError: the same from the piped console
        return f"raised {type(exc).__name__}"
    return buffer.getvalue()


@settings(max_examples=400, deadline=None)
@given(text=MARKUP, markup=st.sampled_from([None, True, False]), escaped=st.booleans())
def test_the_piped_console_prints_what_rich_prints(
    text: str, markup: bool | None, escaped: bool
) -> None:
    """``output.Piped`` writes text (markup and all) that rich would print as it is
    without rich, and hands anything else to rich: the output is rich's either way."""
    import contextlib
    import io

    from hive.cli import output

    if escaped:
        text = f"[dim]{output.escape(text)}[/dim] {output.escape(text)}"
    written = io.StringIO()
    with contextlib.redirect_stdout(written):
        try:
            output.Piped().print(text, markup=markup)
            got = written.getvalue()
        except Exception as exc:
            got = f"raised {type(exc).__name__}"
    assert got == _rich_output(text, markup)


@given(text=MARKUP)
def test_markup_escaping_is_richs(text: str) -> None:
    from rich.markup import escape

    from hive.cli.output import rich_escape

    assert rich_escape(text) == escape(text)


def test_pydantic_finds_plugins_where_a_distribution_declares_one(tmp_path: Path) -> None:
    """The stand-in for pydantic's plugin search (``hive.models.base``) answers "none"
    only where no distribution on ``sys.path`` declares a ``pydantic`` entry point: one
    that does is loaded as pydantic loads it."""
    import subprocess
    import sys

    info = tmp_path / "site" / "probe_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    (tmp_path / "site" / "probe_plugin.py").write_text(
        "class Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        print('plugin saw', args[2].name)\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n"
    )
    probe = (
        "import sys\n"
        "from hive.models.cell import Dependency\n"
        "Dependency(type='blocks', target='x')\n"
        "print(type(sys.modules['pydantic.plugin._loader']).__name__,"
        " 'importlib.metadata' in sys.modules)\n"
    )
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert plain.stdout.split() == ["module", "False"], plain.stdout + plain.stderr
    site = str(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": site}
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert found.stdout.split() == ["plugin", "saw", "Dependency", "module", "True"], (
        found.stdout + found.stderr
    )


def test_the_session_names_the_host_as_socket_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's session (``cli:HOST:PID:RANDOM``) names the host as
    ``socket.gethostname()`` does, without importing ``socket``."""
    import socket

    from hive.cli.leanlog import host_name
    from hive.cli.opening import default_session

    monkeypatch.delenv("HIVE_SESSION", raising=False)
    assert host_name() == socket.gethostname()
    kind, host, pid, random = default_session().split(":")
    assert (kind, host, pid) == ("cli", socket.gethostname(), str(os.getpid()))
    assert len(random) == 8 and int(random, 16) >= 0
