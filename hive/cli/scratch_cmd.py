"""CLI for seed 002's shared scratchpad and the agents' todo lists."""

import sys
from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, show, use_json, workspace
from hive.cli.ctx_cmd import parse_json_arg, when

scratchpad_app = typer.Typer(
    help="The swarm's shared scratchpad (1 MB per entry, 100 MB).", no_args_is_help=True
)
todo_app = typer.Typer(help="Agents' todo lists (todo_write / todo_read).", no_args_is_help=True)


@scratchpad_app.command("write")
def pad_write_cmd(
    file_path: Annotated[str, typer.Argument(metavar="PATH")],
    content: Annotated[str, typer.Argument(help="The content ('-' reads stdin).")],
    title: Annotated[str, typer.Option("--title")] = "",
    json_flag: JsonFlag = False,
) -> None:
    """Store content at a scratchpad path."""
    from hive.domain.scratchpad import scratchpad_write

    use_json(json_flag)
    text = sys.stdin.read() if content == "-" else content
    done = run_op(
        lambda: scratchpad_write(workspace(), file_path=file_path, content=text, title=title)
    )
    show(done, json_flag, lambda: output.say(done["message"]))


@scratchpad_app.command("read")
def pad_read_cmd(file_path: Annotated[str, typer.Argument(metavar="PATH")]) -> None:
    """Print an entry's content."""
    from hive.domain.scratchpad import scratchpad_read

    sys.stdout.write(run_op(lambda: scratchpad_read(workspace(), file_path=file_path)))


@scratchpad_app.command("list")
def pad_list_cmd(
    prefix: Annotated[str | None, typer.Argument()] = None, json_flag: JsonFlag = False
) -> None:
    """Entries with title, size and writer."""
    from hive.domain.scratchpad import human_size, scratchpad_list

    use_json(json_flag)
    found = run_op(lambda: scratchpad_list(workspace(), prefix=prefix))

    def render() -> None:
        output.say(f"Scratchpad contents ({found['count']} entries):")
        for e in found["entries"]:
            output.say(
                f"  {e['path']} - {e['title']!r} ({human_size(e['size'])}) "
                f"by {e['agent']} {when(e['updated_at'])}"
            )

    show(found, json_flag, render)


@scratchpad_app.command("clear")
def pad_clear_cmd(
    prefix: Annotated[str | None, typer.Argument(help="Only entries under PREFIX.")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Remove entries (all of them without PREFIX)."""
    from hive.domain.scratchpad import scratchpad_clear

    use_json(json_flag)
    removed = run_op(lambda: scratchpad_clear(workspace(), prefix=prefix))
    show({"removed": removed}, json_flag, lambda: output.say(f"removed {removed} entries"))


@todo_app.command("list")
def todo_list_cmd(
    agent: Annotated[str | None, typer.Option("--agent", help="One agent's list.")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Every agent's todo list (or one agent's)."""
    from hive.domain.scratchpad import todo_lists, todo_read

    use_json(json_flag)
    ws = workspace()
    lists = run_op(lambda: [todo_read(ws, agent=agent)] if agent else todo_lists(ws))
    marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}

    def render() -> None:
        if not lists:
            output.say("no todo lists")
        for entry in lists:
            output.say(f"{entry['agent']}: {entry['completed']}/{len(entry['todos'])} done")
            for todo in entry["todos"]:
                output.say(f"  {marks[todo['status']]} {todo['content']}")

    show(lists, json_flag, render)


@todo_app.command("set")
def todo_set_cmd(
    todos: Annotated[str, typer.Argument(help='JSON list of {"content", "status"}.')],
    json_flag: JsonFlag = False,
) -> None:
    """Replace your (--actor) todo list."""
    from hive.domain.scratchpad import todo_write

    use_json(json_flag)
    done = run_op(lambda: todo_write(workspace(), todos=parse_json_arg(todos)))
    show(done, json_flag, lambda: output.say(f"{len(done['todos'])} todos for {done['agent']}"))
