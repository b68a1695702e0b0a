"""``hive hooks run pre-commit``'s full check (``hive.domain.precommit``) and how its
verdict is shown: the typer command (``cli/coord_cmd.py``) and the hook's own process
(``cli/entry.py``, when the quick check of ``cli/leanhook.py`` cannot decide) both run it,
the latter without loading the full CLI (typer and every command: most of a hook
process's time)."""

from __future__ import annotations

from hive.cli import output

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.cli import Invocation
    from hive.domain.precommit import PrecommitReport


def hook(inv: Invocation) -> int | None:
    """``hive hooks run pre-commit`` or ``hive hooks run commit-msg FILE`` (no other
    option) in this process: the exit code, or None for the full CLI (anything else,
    or a state index it must rebuild)."""
    if inv.json or inv.leading:
        return None
    from hive.cli.lean_write import guarded

    if inv.args == ["run", "pre-commit"]:
        return guarded(inv, lambda: verdict(check(inv.directory), as_json=False))
    if len(inv.args) == 3 and inv.args[:2] == ["run", "commit-msg"]:
        return guarded(inv, lambda: attribute(inv.directory, inv.args[2]))
    return None


def attribute(directory: str, message_file: str) -> int:
    """The commit-msg hook: the ``Hive-Committer:`` and ``Hive-Cell:`` trailers for an
    agent's own commit (``hive.domain.commitmsg``); it never blocks the commit (exit 0)."""
    import os

    from hive.cli.opening import open_workspace
    from hive.domain.commitmsg import add_cell_trailer

    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    if token is None:  # a person's commit: nothing to add
        return 0
    ws = open_workspace(directory, None, claim=False)
    add_cell_trailer(ws, message_file, token=token, cell=os.environ.get("HIVE_CELL") or None)
    return 0


def check(directory: str) -> PrecommitReport:
    """What would block the commit being made in ``directory`` (HiveError when the
    repository cannot be read)."""
    from hive.cli.opening import open_workspace
    from hive.domain.precommit import check_staged

    return check_staged(open_workspace(directory, None, claim=False))


def verdict(report: PrecommitReport, as_json: bool) -> int:
    """Show ``report`` (on stderr for git, or as JSON); the hook's exit code."""
    for line in report.recovered:
        output.err(f"hive: {line}")
    if as_json:
        output.emit_json(report)
    else:
        if report.note and report.violations:
            output.err(f"hive: note: {report.note}")
        for violation in report.violations:
            output.err(f"hive: {violation.message}")
        if report.violations:
            output.err("hive: commit blocked (HIVE_BYPASS=1 or --no-verify to skip)")
    return 0 if report.ok else 1
