"""CLI for coordination: swarm mail, file reservations and the git hook."""

from typing import TYPE_CHECKING, Annotated

import typer

from hive.cli import output
from hive.cli.common import (
    JsonFlag,
    run_op,
    show,
    use_json,
    workspace,
)

if TYPE_CHECKING:
    pass

mail_app = typer.Typer(help="Swarm mail between agents.", no_args_is_help=True)
hooks_app = typer.Typer(help="The git pre-commit hook.", no_args_is_help=True)


@mail_app.command("sync")
def mail_sync_cmd(
    remote: Annotated[str, typer.Argument(help="Remote name or URL.")] = "origin",
    json_flag: JsonFlag = False,
) -> None:
    """Exchange mail with a remote: fetch, merge diverged logs, push."""
    from hive.domain.mail import sync_mail

    use_json(json_flag)
    result = run_op(lambda: sync_mail(workspace(), remote=remote))
    notes = [f"{result.received} new message(s)"]
    notes += ["merged"] * result.merged + ["pushed"] * result.pushed
    line = f"synced mail with {output.escape(result.remote)}: {', '.join(notes)}"
    show(result, json_flag, lambda: output.console().print(line))


@hooks_app.command("install")
def hooks_install_cmd(json_flag: JsonFlag = False) -> None:
    """Install the pre-commit hook (keeps and chains an existing one)."""
    from hive.domain.hooks import install_hook

    use_json(json_flag)
    result = run_op(lambda: install_hook(workspace()))
    show(
        result,
        json_flag,
        lambda: output.console().print(
            f"{result.action}: {result.path}"
            + (f" (chains {result.chained})" if result.chained else "")
        ),
    )


@hooks_app.command("uninstall")
def hooks_uninstall_cmd(json_flag: JsonFlag = False) -> None:
    """Remove hive's pre-commit hook (restores a chained one)."""
    from hive.domain.hooks import uninstall_hook

    use_json(json_flag)
    result = run_op(lambda: uninstall_hook(workspace()))
    show(result, json_flag, lambda: output.console().print(f"{result.action}: {result.path}"))


@hooks_app.command("run")
def hooks_run_cmd(
    hook: Annotated[str, typer.Argument(help="Only 'pre-commit'.")],
    json_flag: JsonFlag = False,
) -> None:
    """Run a hook now (what git runs on commit)."""
    from hive.domain.precommit import check_staged

    use_json(json_flag)
    if hook != "pre-commit":
        output.err(f"error: unknown hook {hook!r}: only 'pre-commit' exists")
        raise typer.Exit(2)
    report = run_op(lambda: check_staged(workspace(claim=False)))
    for line in report.recovered:
        output.err(f"hive: {line}")

    def render() -> None:
        if report.note and report.violations:
            output.err(f"hive: note: {report.note}")
        for violation in report.violations:
            output.err(f"hive: {violation.message}")
        if report.violations:
            output.err("hive: commit blocked (HIVE_BYPASS=1 or --no-verify to skip)")

    show(report, json_flag, render)
    if not report.ok:
        raise typer.Exit(1)
