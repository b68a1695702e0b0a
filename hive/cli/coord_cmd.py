"""``hive hooks run``: the entry point git's pre-commit hook calls. Hand-written on
purpose (see docs/architecture.md): it is the hook's process boundary, with its own
exit codes and stderr lines for git, not an operation a person or agent asks for."""

from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, show, use_json, workspace


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
