"""``hive hooks run``: the entry point git's pre-commit hook calls. Hand-written on
purpose (see docs/architecture.md): it is the hook's process boundary, with its own
exit codes and stderr lines for git, not an operation a person or agent asks for."""

from typing import Annotated

import typer

from hive.cli.common import OPTIONS, JsonFlag, run_op, use_json


def hooks_run_cmd(
    hook: Annotated[str, typer.Argument(help="'pre-commit', or 'commit-msg' and its FILE.")],
    message_file: Annotated[
        str | None, typer.Argument(help="commit-msg: the file of the commit message.")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Run a hook now (what git runs on commit)."""
    from hive.cli import hookrun
    from hive.errors import InvalidInput

    use_json(json_flag)
    if hook == "commit-msg" and message_file is not None:
        run_op(lambda: hookrun.attribute(OPTIONS.directory, message_file))
        return
    if hook != "pre-commit" or message_file is not None:

        def unknown() -> None:
            raise InvalidInput(
                f"unknown hook {' '.join(filter(None, [hook, message_file]))!r}: the hooks are"
                " 'pre-commit' and 'commit-msg FILE'"
            )

        run_op(unknown)
    report = run_op(lambda: hookrun.check(OPTIONS.directory))
    code = hookrun.verdict(report, OPTIONS.json)
    if code:
        raise typer.Exit(code)
