"""The docs agree with the code: generated references (regenerate with scripts/gen_cli_docs.sh),
command lines, paths, names and the examples a reader copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


GLOBAL_OPTIONS = {"-C", "--actor", "--json", "-h", "--help", "--version"}


def _doc_command_lines(text: str, *, fences: bool) -> list[tuple[int, str, bool]]:
    """``(line, command line, strict)`` for each ``hive ...`` a reader may type: lines of
    code blocks (``$ `` and ``VAR=1 `` prefixes and ``\\`` continuations allowed; in a block
    showing a session, only its ``$ `` lines, not what they print; strict:
    the whole line must parse) and inline code spans (loose: the command and each option
    named must exist; ``hive create TITLE [-t] ...`` is a synopsis, not a command line)."""
    import re

    found: list[tuple[int, str, bool]] = []
    lines = text.splitlines()
    in_fence = prompted = False
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if line.strip().startswith("```"):
            in_fence = not in_fence
            prompted = in_fence and _fence_has_prompts(lines[number:])
        elif in_fence and not (prompted and not line.startswith("$ ")):  # not shown output
            command = re.sub(r"^(\$ )?([A-Z_]+=\S+ )*", "", line.strip())
            if fences and command.startswith("hive ") and not re.match(r"hive \S+:", command):
                start = number
                while command.endswith("\\") and number < len(lines):
                    command = command[:-1] + " " + lines[number].strip()
                    number += 1
                found.append((start, command, " [" not in command))
        else:
            found += [(number, m, False) for m in re.findall(r"`(hive [^`]+)`", line)]
    return found


def _fence_has_prompts(rest: list[str]) -> bool:
    """Whether the code block starting at ``rest`` shows a session (``$ `` before each
    command, the lines it prints after it)."""
    for line in rest:
        if line.strip().startswith("```"):
            return False
        if line.startswith("$ "):
            return True
    return False


def _options_of(command: Any) -> set[str]:
    names: set[str] = set()
    for param in getattr(command, "params", []):
        names.update(getattr(param, "opts", []))
        names.update(getattr(param, "secondary_opts", []))
    return names


def _command_line_problem(top: Any, line: str, strict: bool) -> str | None:
    """What is wrong with the documented ``line`` (None: it parses), checked with the
    CLI's own parser: the command path (``a|b`` and ``a/b`` name alternatives), every
    option, and, when ``strict``, the arguments too (nothing is run)."""
    import re
    import shlex

    import typer

    from hive.cli import parse
    from hive.cli.common import UsageError

    invocation = parse(shlex.split(line, comments=True)[1:])
    if invocation.command is None or not re.match(r"[a-z]", invocation.command):
        unknown = [t for t in invocation.leading if t.startswith("-") and t not in GLOBAL_OPTIONS]
        return f"unknown global option {unknown}" if unknown else None
    command: Any = top
    path, rest = ["hive"], [invocation.command, *invocation.args]
    while hasattr(command, "list_commands") and rest and not rest[0].startswith("-"):
        names = re.split(r"[|/]", rest[0])
        subs = [command.get_command(typer.Context(command), name) for name in names]
        if None in subs:
            return f"no command '{' '.join(path)} {rest[0]}'"
        command, path, rest = subs[0], [*path, names[0]], rest[1:]
    if strict:
        try:
            command.make_context(" ".join(path), rest)
        except UsageError as exc:
            return f"{' '.join(path)}: {exc.format_message()}"
        except Exception as exc:  # click's Exit (--help): parsed
            if type(exc).__name__ != "Exit":
                raise
        return None
    known = _options_of(command) | GLOBAL_OPTIONS
    for token in rest:
        for option in re.findall(r"(?:^|[\[|])(--?[A-Za-z][\w-]*)", token):
            if option not in known:
                return f"{' '.join(path)} has no option {option}"
    return None


def test_every_documented_command_line_parses() -> None:
    """Each ``hive ...`` shown in README.md and docs/ (code blocks and inline code; in the
    generated references, the help texts' inline examples) names commands and options
    that exist, and each code-block line parses whole with the CLI's parser."""
    import typer

    from hive.cli.main import app

    top = typer.main.get_command(app)
    problems = []
    checked = 0
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        generated = path.name in ("cli.md", "tools.md")  # their code blocks are usage lines
        for number, line, strict in _doc_command_lines(path.read_text(), fences=not generated):
            checked += 1
            problem = _command_line_problem(top, line, strict)
            if problem:
                problems.append(f"{path.name}:{number}: {line}\n    {problem}")
    assert checked > 300, checked  # the scan itself still finds the examples
    assert not problems, "\n".join(problems)


def test_the_command_line_check_catches_drift() -> None:
    """The check above fails for what a renamed command or option would leave behind."""
    import typer

    from hive.cli.main import app

    top = typer.main.get_command(app)
    assert _command_line_problem(top, "hive create x --bogus", strict=True)
    assert _command_line_problem(top, "hive crate x", strict=False)
    assert _command_line_problem(top, "hive dep add A", strict=False) is None
    assert _command_line_problem(top, "hive dep add", strict=True)  # an id is missing
    assert _command_line_problem(top, "hive review [--pr N]", strict=False)
    assert _command_line_problem(top, "hive blackboard set/gett", strict=False)
    text = "```bash\n$ hive close A \\\n  --reasn x\n```\nsee `hive list --stauts open`\n"
    lines = _doc_command_lines(text, fences=True)
    assert [(n, s) for n, _, s in lines] == [(2, True), (5, False)]
    assert all(_command_line_problem(top, line, strict) for _, line, strict in lines)
    session = "```text\n$ hive init\nhive initialised in /app (prefix hv)\n```\n"
    assert _doc_command_lines(session, fences=True) == [(2, "hive init", True)]


def test_every_environment_variable_is_documented() -> None:
    """Each ``HIVE_*`` variable hive, its scripts, benchmarks or test set-up read or set
    (a quoted name, a ``HIVE_X=`` keyword, a shell ``$HIVE_X``) is named in README.md or
    docs/: those for worker programs and hooks, the tests' and the scripts' too."""
    import re

    names: set[str] = set()
    sources = [
        *(ROOT / "hive").rglob("*.py"),
        *(ROOT / "scripts").glob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
        ROOT / "tests" / "conftest.py",
    ]
    for path in sources:
        text = path.read_text()
        names |= set(re.findall(r"[\"'](HIVE_[A-Z_]+)[\"']", text))
        names |= set(re.findall(r"\b(HIVE_[A-Z_]+)=", text))
    for path in (ROOT / "scripts").glob("*.sh"):
        names |= set(re.findall(r"\$\{?(HIVE_[A-Z_]+)", path.read_text()))
    assert {"HIVE_AGENT_TOKEN", "HIVE_EPIC", "HIVE_NO_BROWSER"} <= names  # the scan works
    docs = (ROOT / "README.md").read_text()
    docs += "".join(path.read_text() for path in (ROOT / "docs").glob("*.md"))
    missing = sorted(name for name in names if not re.search(rf"\b{name}\b", docs))
    assert not missing, f"not named in README.md or docs/: {missing}"


def test_every_error_code_is_in_the_architecture_table() -> None:
    """docs/architecture.md's table of error classes names every ``HiveError`` code
    (what a tool error's ``code`` may be) with the exit code the CLI returns for it."""
    import re

    from tests.test_spec import _all_errors

    text = (ROOT / "docs" / "architecture.md").read_text()
    documented: dict[str, int] = {}
    for codes, exit_code in re.findall(r"^\| [A-Z][^|]* \| ([a-z_, ]+) \| (\d+) \|$", text, re.M):
        documented.update({code.strip(): int(exit_code) for code in codes.split(",")})
    actual = {cls.code: cls.exit_code for cls in _all_errors()}
    assert len(actual) > 20  # the walk found the classes outside hive/errors.py too
    wrong = {
        code: (exit_code, documented.get(code))
        for code, exit_code in actual.items()
        if documented.get(code) != exit_code
    }
    assert not wrong, f"code: (exit code, documented): {wrong}"


def _anchors(text: str) -> set[str]:
    """The link anchors of a Markdown file's headings, as GitHub makes them."""
    import re

    found: set[str] = set()
    in_fence = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (heading := re.match(r"#+ (.*)", line)):
            words = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            found.add(words.replace(" ", "-"))
    return found


def test_every_link_between_the_docs_resolves() -> None:
    """A relative link in README.md or docs/ names a file that exists and, with
    ``#anchor``, a heading of that file (a renamed section breaks no link silently)."""
    import re

    broken = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            name, _, anchor = target.partition("#")
            dest = path.parent / name if name else path
            if not dest.exists():
                broken.append(f"{path.name}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text()):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert not broken, broken
    assert "the-write-path-hivegitrepopy" in _anchors("## The write path (`hive/git/repo.py`)")


def test_the_quick_help_says_what_actor_is() -> None:
    """``hive --help`` (answered without typer) says what the full CLI and docs/cli.md
    say of ``--actor``: a name claimed, proven by the agent's credential (it said
    "who is acting", as if naming someone were enough); every line fits 80 columns."""
    from hive.cli.entry import usage

    text = usage()
    actor = text[text.index("  --actor NAME  ") : text.index("  --json  ")]
    assert "claim" in actor and "$HIVE_AGENT_TOKEN" in actor, actor
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_readme_links_every_doc() -> None:
    """Every page under docs/ is reachable from README.md's list (security.md and
    seeds.md were not)."""
    readme = (ROOT / "README.md").read_text()
    unlisted = [p.name for p in (ROOT / "docs").glob("*.md") if f"](docs/{p.name})" not in readme]
    assert not unlisted, unlisted


def test_every_tool_name_in_the_docs_exists() -> None:
    """A tool or operation named in README.md or docs/ (`hive_close`, `swarmmail_reserve`,
    `ctx_put`, ...) is one the registry has: a renamed tool leaves no stale name behind."""
    import re

    from hive.ops.catalog import operations
    from hive.tools.registry import tools

    known = {tool.name for tool in tools()} | {op.name for op in operations()}
    known.add("fs_raed")  # tools.md's example of a misspelt name hive doctor warns about
    known.add("hive_redy")  # and of a misspelt tool a call names (did you mean hive_ready?)
    pattern = re.compile(r"`((?:hive|swarm|swarmmail|ctx|coord|fs|scratchpad|todo)_[a-z_]+)")
    named: set[tuple[str, str]] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        named |= {(path.name, name) for name in pattern.findall(path.read_text())}
    assert len(named) > 100  # the scan still finds them
    unknown = sorted((page, name) for page, name in named if name not in known)
    assert not unknown, unknown


def test_the_architecture_picture_names_every_layer() -> None:
    """docs/architecture.md's picture of the layers names every package and leaf module
    the import check knows (tests/test_spec.py: `times` and `waits` were missing)."""
    import re

    from tests.test_spec import ALLOWED

    text = (ROOT / "docs" / "architecture.md").read_text()
    picture = text[text.index("```\nsurfaces") : text.index("```", text.index("```\n") + 3)]
    words = set(re.findall(r"\w+", picture))
    missing = sorted(name for name in ALLOWED if not name.startswith("__") and name not in words)
    assert not missing, f"not in docs/architecture.md's picture of the layers: {missing}"


def test_every_repository_path_in_the_docs_exists() -> None:
    """A path of this repository named in README.md or docs/ (`hive/git/repo.py`,
    `tests/test_serve.py`, `scripts/setup.sh`, `hive/tools/registry.operation_tool`:
    a module and a name in it) exists: a moved or renamed file leaves no stale name."""
    import re

    pattern = re.compile(r"(?<![\w./~<-])((?:hive|tests|scripts|benchmarks|hooks|docs)/[\w./-]*\w)")
    placeholders = {"hive/ID", "tests/FILE", "benchmarks/results/process"}  # a branch, made later
    named: set[tuple[str, str]] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        named |= {(path.name, found) for found in pattern.findall(path.read_text())}
    assert len(named) > 100  # the scan still finds them
    missing = sorted(
        (page, found)
        for page, found in named
        if found not in placeholders
        and not (ROOT / found).exists()
        and not (ROOT / (re.sub(r"\.\w+$", "", found) + ".py")).exists()
    )
    assert not missing, missing


def test_the_yaml_examples_of_the_docs_load(repo: Path) -> None:
    """The YAML a reader copies from the docs is what hive reads: file-format.md's
    config.yaml (with its verify: and swarm: sections), seeds.md's permission_policy:
    and tools.md's tools: in one committed config, file-format.md's cell and reservation
    file at their paths. ``hive doctor`` finds nothing malformed in them (only what the
    lone example cell is: its parent and blocker are not there, its conflict is
    recorded), and the cell and the reservation read back as written."""
    import hashlib
    import json
    import re

    from tests.conftest import git
    from tests.inprocess import run_hive

    def examples(page: str) -> list[str]:
        return re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)

    config, sections, cell, reservation = examples("file-format.md")
    (policy,) = examples("seeds.md")
    (tools,) = examples("tools.md")
    assert run_hive(["init"], cwd=repo).returncode == 0
    (repo / ".hive" / "config.yaml").write_text(config + sections + policy + tools)
    (repo / ".hive" / "cells" / "x").mkdir(parents=True)
    (repo / ".hive" / "cells" / "x" / "hv-x7k2q9.a3f8.yaml").write_text(cell)
    digest = hashlib.sha256(b"BlueLake").hexdigest()[:12]
    (repo / ".hive" / "reservations").mkdir()
    (repo / ".hive" / "reservations" / f"bluelake~{digest}.yaml").write_text(reservation)
    git(repo, "add", ".hive")
    git(repo, "commit", "-q", "-m", "the docs' examples")
    doctor = json.loads(run_hive(["--json", "doctor"], cwd=repo).stdout)
    kinds = {problem["kind"] for problem in doctor["problems"]}
    assert kinds == {"dangling-dependency", "dangling-parent", "merge-conflict"}, doctor
    unread = [w["message"] for w in doctor["warnings"] if w["kind"] == "unknown-setting"]
    assert not unread  # every setting the examples show is one hive reads
    shown = json.loads(run_hive(["--json", "show", "hv-x7k2q9.a3f8"], cwd=repo).stdout)
    assert (shown["title"], shown["assignee"], shown["labels"]) == (
        "Password hashing service",
        "BlueLake",
        ["auth"],
    )
    held = run_hive(["--json", "reservations", "--expired"], cwd=repo)
    assert [r["path_pattern"] for r in json.loads(held.stdout)] == ["src/auth/**"], held


def test_the_library_example_of_the_quickstart_runs(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """quickstart.md's Python example runs as written (on a repository of its own in
    place of ~/code/my-app): the cell is created as the actor named, and ready lists it."""
    import re

    from tests.conftest import git
    from tests.inprocess import run_hive

    text = (ROOT / "docs" / "quickstart.md").read_text()
    (snippet,) = re.findall(r"```python\n(.*?)```", text, re.S)
    assert '"~/code/my-app"' in snippet
    assert run_hive(["init"], cwd=repo).returncode == 0
    exec(snippet.replace('"~/code/my-app"', repr(str(repo))), {})
    printed = capsys.readouterr().out
    created = git(repo, "log", "-1", "--format=%an %s")
    match = re.fullmatch(r"BlueLake hive: create (\S+) Write the migration\n?", created)
    assert match and match.group(1) in printed, (created, printed)


def test_the_mcp_configurations_in_the_docs_start_hive_mcp() -> None:
    """Each MCP server entry a reader pastes into a runtime's configuration (Claude
    Code's mcpServers, opencode's mcp) is valid JSON that starts `hive mcp`."""
    import json
    import re

    commands = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for snippet in re.findall(r'`(\{"mcp(?:Servers)?": [^`]*\})`', path.read_text()):
            for entry in json.loads(snippet).values():
                server = entry["hive"]
                command = server["command"]
                words = [command, *server.get("args", [])] if isinstance(command, str) else command
                commands.append((path.name, words))
    assert len(commands) >= 3, commands  # quickstart's, and agents.md's two
    assert all(words == ["hive", "mcp"] for _, words in commands), commands


def test_dash_h_is_help_in_every_command_s_own_settings() -> None:
    """The quick help lists ``-h, --help`` among the options that may follow a command
    (tests/test_cli_ux.py runs a few). Each command and group names both in its own
    context settings: click keeps the first help option it makes for a command, and one
    made by a context without the root's settings (a subcommand's make_context, as the
    drift check above does) stayed --help alone for the rest of the process."""
    import typer

    from hive.cli.main import app

    def commands(command: Any, ctx: Any, path: str) -> list[tuple[str, Any]]:
        found = [(path, command)]
        for name in getattr(command, "list_commands", lambda _: [])(ctx):
            sub = command.get_command(ctx, name)
            found += commands(sub, typer.Context(sub, parent=ctx, info_name=name), f"{path} {name}")
        return found

    top = typer.main.get_command(app)
    every = commands(top, typer.Context(top, info_name="hive"), "hive")
    assert len(every) > 100
    names = ["-h", "--help"]
    wrong = [path for path, cmd in every if cmd.context_settings.get("help_option_names") != names]
    assert not wrong, wrong
    assert "* `-h, --help`: Show this message and exit." in render_cli_docs()


def test_the_readme_session_prints_what_it_shows(repo: Path) -> None:
    """README.md's first session (`$ hive init` ... `$ git log --oneline -3`) run as
    written in a clone with a remote: each command succeeds and prints the lines shown
    under it (the id, the path, the person's name and commit hashes aside). It showed
    nothing under init, start and close, which print what they did."""
    import re
    import shlex

    from tests.conftest import git
    from tests.inprocess import run_hive

    text = (ROOT / "README.md").read_text()
    block = text[text.index("```text\n$ hive init") + 8 :].split("```", 1)[0]
    session: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            session[-1][1].append(re.sub(r"^[0-9a-f]{7} ", "HASH ", line))
    assert [command.split()[1] for command, _ in session] == [
        *("init", "create", "start", "close", "log")
    ]
    git(repo, "remote", "add", "origin", str(repo.parent / "remote.git"))
    git(repo, "config", "user.name", "Ada")
    cell = "hv-x7k2q9"
    for command, shown in session:
        argv = shlex.split(command.replace("x7k2", cell[3:7]), comments=True)
        if argv[0] == "git":
            printed = git(repo, *argv[1:])
        else:
            outcome = run_hive(argv[1:], cwd=repo)
            assert outcome.returncode == 0, (command, outcome.stderr)
            printed = outcome.stdout
            cell = next(iter(re.findall(r"^created (\S+)", printed)), cell)
        printed = printed.replace(cell, "hv-x7k2q9").replace(str(repo), "/home/me/app")
        lines = [re.sub(r"^[0-9a-f]{7} ", "HASH ", line) for line in printed.splitlines()]
        assert lines == shown, command


# quickstart.md's command blocks, run in order: what a placeholder stands for, and the
# lines the text says are refused (with the exit code docs/cli.md gives the refusal)
QUICKSTART_REFUSED = {
    "hive start <later-id>": 4,  # "refused while a blocker is open (exit 4)"
    "hive resolve x7k2 --field title --use-other": 3,  # nothing a merge recorded to settle here
    "hive mail ack 629066050344": 3,  # no such message in this repository
    "hive close <epic-id>": 4,  # "refused while subtasks are open"
}


def _quickstart_lines(block: str) -> list[tuple[str, str]]:
    """(command, its comment) for each line of a code block, ``\\`` continued."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in block.splitlines():
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        command, _, comment = pending.partition("  #")
        found.append((" ".join(command.split()), comment.strip()))
        pending = ""
    return found


def _shown(comment: str) -> list[str]:
    """The output a comment quotes (``"blocked by   hv-... [open] ..."``), as patterns
    (``...`` stands for anything, ``a3f8`` for a subtask's random part)."""
    import re

    return [
        re.escape(quoted).replace(re.escape("..."), ".*").replace("a3f8", r"\w+")
        for quoted in re.findall(r'"([^"]*\.\.\.[^"]*)"', comment)
    ]


def test_the_quickstart_command_blocks_run_as_shown(repo: Path) -> None:
    """Each ``hive`` line of quickstart.md's blocks from "Track work" to "Swarm
    orchestration" run in order in one repository, as a reader types them (the
    placeholders filled in, the agent's credential exported where the page exports it):
    each exits 0, or with the code the page gives a refusal, and prints what its comment
    quotes (``"blocked by   hv-... [open] ..."``, ``BlueLake: agent``)."""
    import json
    import os
    import re
    import shlex

    from tests.conftest import git
    from tests.inprocess import run_hive

    text = (ROOT / "docs" / "quickstart.md").read_text()
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)
    first = next(i for i, block in enumerate(blocks) if block.startswith("cd ~/code/my-app"))
    last = next(i for i, block in enumerate(blocks) if "hive swarm select-strategy" in block)
    env = {k: v for k, v in os.environ.items() if k not in ("HIVE_AGENT", "HIVE_AGENT_TOKEN")}
    names: dict[str, str] = {}

    def hive(*argv: str, code: int = 0, **kwargs: Any) -> str:
        outcome = run_hive(argv, cwd=repo, env=env, **kwargs)
        assert outcome.returncode == code, (argv, outcome.stdout, outcome.stderr)
        return outcome.stdout

    def created(*argv: str) -> str:
        return str(json.loads(hive("--json", *argv))["id"])

    git(repo, "init", "-q", "--bare", str(repo.parent / "origin.git"))
    git(repo, "remote", "add", "origin", str(repo.parent / "origin.git"))
    (repo / "README.md").write_text("# project, edited\n")  # what `git diff |` pipes
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "session.py").write_text("SESSIONS = {}\n")
    plan = {
        "epic": {"title": "Add OAuth authentication", "description": "OAuth login"},
        "subtasks": [
            {"title": "Session store", "files": ["src/auth/**"], "estimated_complexity": 2},
            {"title": "Login form", "files": ["src/login/**"], "dependencies": [0]},
        ],
    }
    (repo / "plan.json").write_text(json.dumps(plan))
    ran = 0
    for number in range(first, last + 1):
        if number == first + 1:  # "What is stuck": cells of its own
            names["<later-id>"] = created("create", "Write the migration")
            names["<earlier-id>"] = created("create", "Agree on the schema")
            epic = json.loads(hive("--json", "epic", "create", "Schema", "--subtask", "One"))
            names["<epic-id>"] = epic[0]["id"]
            for letter in "ABC":
                names[letter] = created("create", f"Cell {letter}")
        if "hive agent register BlueLake" in blocks[number]:
            hive("agent", "register", "GreenRiver")  # "a registered agent" to write to
        for command, comment in _quickstart_lines(blocks[number]):
            words = [names.get(word, word) for word in shlex.split(command)]
            if words[:1] == ["export"]:
                env.update(word.partition("=")[::2] for word in words[1:])
                env["HIVE_AGENT_TOKEN"] = names["hive_..."]  # the one register printed
                continue
            if words[:1] != ["hive"] and "| hive" not in command:
                continue  # cd, git log, git commit ...: the reader's own git
            piped = None
            if "| hive" in command:
                piped = git(repo, *words[1 : words.index("|")])
                words = words[words.index("|") + 1 :]
            printed = hive(*words[1:], code=QUICKSTART_REFUSED.get(command, 0), input=piped)
            ran += 1
            for pattern in _shown(comment) + ([comment] if comment == "BlueLake: agent" else []):
                assert re.search(pattern, printed), (command, comment, printed)
            if words[1:2] == ["create"] and words[2] == "Login redirect loops":
                names["x7k2"] = re.findall(r"created \S+-(\w{4})", printed)[0]
            elif words[1:2] == ["create"] and words[2] == "Add rate limiting":
                names["<later-id>"] = re.findall(r"created (\S+)", printed)[0]
                names["<earlier-id>"] = "hv-" + names["x7k2"]
            elif words[1:3] == ["epic", "create"]:
                names["<epic-id>"] = re.findall(r"created epic (\S+)", printed)[0]
            elif words[1:3] == ["agent", "register"]:
                names["hive_..."] = re.findall(r"HIVE_AGENT_TOKEN=(\S+)", printed)[0]
                names["<cell-id>"] = names["<later-id>"]
            elif words[1:3] == ["mail", "send"]:
                names["629066050344"] = re.findall(r"sent #(\d+)", printed)[0]
            elif words[1:3] == ["swarm", "create-epic"] and words[3] == "plan.json":
                epic = re.findall(r"epic (\S+)", printed)[0]
                names["<epic>"] = names["<cell-or-epic>"] = epic
                names["<cell>"] = re.findall(rf"^({re.escape(epic)}\.\w+)", printed, re.M)[0]
    assert ran == 68, ran  # every block's lines ran
    assert "hive: complete" in git(repo, "log", "--format=%s"), git(repo, "log", "--format=%s")
