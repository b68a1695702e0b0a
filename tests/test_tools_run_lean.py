"""``hive tools run`` from the console script runs without the full CLI
(``hive/cli/tools_start.py``) and answers exactly as the full CLI's command does."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from tests.conftest import copy_repo
from tests.inprocess import console_probe, run_hive

CALLS = {
    "success": '{"tool_calls": [{"name": "hive_ready", "args": {}}]}',
    "tool error": '{"tool_calls": [{"name": "hive_close", "args": {"id": 7}}]}',
    "malformed": '{"tool_calls": [{"name": ',
    "unknown tool": '{"tool_calls": [{"name": "hive_nope", "args": {}}]}',
    "not found": '{"tool_calls": [{"name": "hive_ready", "args": {}},'
    ' {"name": "hive_query", "args": {"id": "hv-nope"}},'
    ' {"name": "hive_nope", "args": {}}]}',
}
FORMS = [
    ["tools", "run"],
    ["tools", "run", "--agent", "alice"],
    ["--json", "tools", "run", "--agent=alice", "--context", ".", "--allow-write"],
]


def _both(repo: Path, args: list[str], text: str) -> tuple[int, str, str]:
    """The lean and the full CLI's answer, each from the same repository as it was
    before (a call may register an agent), asserted equal; the answer."""
    before = repo.with_name(repo.name + ".before")
    copy_repo(repo, before)
    lean = run_hive(["-C", str(repo), *args], input=text)
    shutil.rmtree(repo)
    before.rename(repo)
    full = run_hive(["-C", str(repo), *args], input=text, module="hive.cli.main")
    assert (lean.returncode, _issued(lean.stdout), lean.stderr) == (
        full.returncode,
        _issued(full.stdout),
        full.stderr,
    )
    assert "Traceback" not in lean.stderr
    return lean.returncode, lean.stdout, lean.stderr


def _issued(out: str) -> str:
    """``out`` with the credential an envelope registering its agent was issued (random,
    so never the same twice) written as ``hive_TOKEN``."""
    return re.sub(r'"token": ?"hive_[A-Za-z0-9_-]{43}"', '"token":"hive_TOKEN"', out)


@pytest.mark.parametrize("form", FORMS, ids=["bare", "agent", "all-options"])
def test_lean_and_full_answer_alike(ws: Workspace, repo: Path, form: list[str]) -> None:
    create_cell(ws, title="one")
    code, out, _ = _both(repo, form, CALLS["success"])
    assert code == 0 and [c["title"] for c in json.loads(out)["results"][0]["result"]] == ["one"]
    # a call that failed: the exit code of its error (docs/cli.md), the transcript printed
    code, out, _ = _both(repo, form, CALLS["tool error"])
    assert code == 2 and json.loads(out)["results"][0]["code"] == "invalid_arguments"
    code, out, _ = _both(repo, form, CALLS["malformed"])
    assert code == 2 and json.loads(out)["code"] == "invalid_envelope"
    code, out, _ = _both(repo, form, CALLS["unknown tool"])
    assert code == 2 and json.loads(out)["results"][0]["code"] == "unknown_tool"
    code, out, _ = _both(repo, form, CALLS["not found"])  # the first failed call decides
    ran, missing, unknown = json.loads(out)["results"]
    assert code == 3 and "result" in ran and missing["code"] == "not_found"
    assert unknown["code"] == "unknown_tool"


def test_refusals_before_running_read_alike(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    code, out, err = _both(repo, ["--json", "tools", "run", "--context=nope"], CALLS["success"])
    assert code == 2 and err == "error: --context nope: not a directory\n"
    assert json.loads(out)["code"] == "invalid_input"
    code, out, err = _both(tmp_path, ["tools", "run"], CALLS["success"])
    assert code != 0 and out == "" and err.startswith("error: ")


def test_other_forms_go_to_the_full_cli(ws: Workspace, repo: Path) -> None:
    helped = run_hive(["-C", str(repo), "tools", "run", "--help"])
    assert helped.returncode == 0 and "Usage: hive tools run" in helped.stdout
    typo = run_hive(["-C", str(repo), "tools", "run", "--agnet", "x"], input=CALLS["success"])
    assert typo.returncode == 2 and "No such option: --agnet" in typo.stderr
    twice = ["tools", "run", "--agent", "a", "--agent", "alice"]
    code, out, _ = _both(repo, twice, CALLS["success"])  # click: the last one counts
    assert code == 0 and json.loads(out)["agent"] == "alice"
    listed = run_hive(["-C", str(repo), "--json", "tools", "list"])
    assert listed.returncode == 0 and "hive_ready" in {t["name"] for t in json.loads(listed.stdout)}


def test_the_lean_path_imports_neither_typer_click_rich_nor_every_operation(
    ws: Workspace, repo: Path
) -> None:
    loaded = ("hive.cli.main", "typer", "click", "rich", "hive.ops.catalog")
    ran = console_probe(repo, ["tools", "run", "--agent", "alice"], loaded, input=CALLS["success"])
    assert ran.stdout.strip().splitlines()[-1] == "0 []", ran.stdout + ran.stderr
    assert json.loads(ran.stdout[: ran.stdout.rindex("}") + 1])["agent"] == "alice"


def test_the_tool_index_names_each_tools_declaring_module() -> None:
    """``hive/ops/toolindex.py``: every agent tool, in the catalogue's order, each
    mapped to the module whose import alone declares it (a fresh process that has
    imported no operation module forks one child per module, which imports that
    module only; then the catalogue)."""
    from hive.ops.toolindex import TOOL_MODULES

    probe = (
        "import json, os, sys\n"
        "from hive.ops.spec import OPERATIONS\n"
        "assert not [m for m in sys.modules if m.startswith('hive.ops.')"
        " and m not in ('hive.ops.spec', 'hive.ops.toolindex')], sorted(sys.modules)\n"
        "declared = {}\n"
        "for module in sys.argv[1:]:\n"
        "    read, write = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:  # the child: this one module imported, what it declares\n"
        "        code = 1\n"
        "        try:\n"
        "            __import__('hive.ops.' + module)\n"
        "            names = (n for n, op in OPERATIONS.items() if op.is_tool)\n"
        "            os.write(write, ' '.join(names).encode())\n"
        "            code = 0\n"
        "        except BaseException:\n"
        "            import traceback; traceback.print_exc(); sys.stderr.flush()\n"
        "        finally:\n"
        "            os._exit(code)\n"
        "    os.close(write)\n"
        "    with os.fdopen(read) as pipe:\n"
        "        declared[module] = pipe.read().split()\n"
        "    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, module\n"
        "from hive.ops.catalog import tool_names\n"
        "print(json.dumps({'catalogue': tool_names(), 'declared': declared}))\n"
    )
    modules = sorted(set(TOOL_MODULES.values()))
    ran = subprocess.run(
        [sys.executable, "-c", probe, *modules], capture_output=True, text=True, check=True
    )
    found = json.loads(ran.stdout)
    assert list(TOOL_MODULES) == found["catalogue"]  # the registry lists in this order
    assert sorted(found["declared"]) == modules
    for module in modules:
        declared = set(found["declared"][module])
        assert {n for n, m in TOOL_MODULES.items() if m == module} <= declared, module


def test_a_tool_made_alone_is_the_registrys_and_the_order_stays() -> None:
    """A tool made before the registry (one module imported) is the one the registry
    then lists, and the registry lists in the catalogue's order all the same."""
    probe = (
        "from hive.tools.registry import get_tool, tools\n"
        "from hive.ops.toolindex import TOOL_MODULES\n"
        "alone = get_tool('swarm_status')\n"
        "import sys; assert 'hive.ops.catalog' not in sys.modules\n"
        "listed = tools()\n"
        "print([t.name for t in listed] == list(TOOL_MODULES), alone in listed)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.split() == ["True", "True"]


def test_a_rate_limited_call_exits_with_the_tables_code(ws: Workspace, repo: Path) -> None:
    """A call refused by ``tools.rate_limits`` is ``{"error": "rate_limited", "code":
    429, ...}`` (issue 5's shape); ``hive tools run`` then exits 10, the table's code
    for it (docs/cli.md), on the lean and the full path alike (was 1: 429 is no code)."""
    config = repo / ".hive" / "config.yaml"
    config.write_text(
        config.read_text()
        + "tools:\n  rate_limits:\n    hive_ready: {capacity: 1, per_seconds: 600}\n"
    )
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "limit", str(config)], check=True)
    twice = (
        '{"tool_calls": [{"name": "hive_ready", "args": {}}, {"name": "hive_ready", "args": {}}]}'
    )
    code, out, _ = _both(repo, ["tools", "run"], twice)
    ran, limited = json.loads(out)["results"]
    assert "result" in ran and (limited["error"], limited["code"]) == ("rate_limited", 429)
    assert code == 10
