"""Helpers for the seed-tool tests: calling tools through the registry, running the
CLI in-process, and running many worker processes at once."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

from hive.tools.registry import CallContext, call_tool

ROOT = Path(__file__).resolve().parent.parent


def call(repo: Path, agent: str, name: str, args: Any = None, **extra: Any) -> dict[str, Any]:
    """One tool call through the registry, as ``agent``."""
    return call_tool(CallContext(root=str(repo), agent=agent, **extra), name, args or {})


def result(repo: Path, agent: str, name: str, args: Any = None) -> Any:
    """The result of a call that must succeed."""
    outcome = call(repo, agent, name, args)
    assert "result" in outcome, outcome
    return outcome["result"]


def error(repo: Path, agent: str, name: str, args: Any = None) -> dict[str, Any]:
    """The structured error of a call that must fail."""
    outcome = call(repo, agent, name, args)
    assert "error" in outcome and "result" not in outcome, outcome
    assert isinstance(outcome["code"], str | int)
    return outcome


def cli(repo: Path, *args: str, actor: str = "alice") -> tuple[int, str]:
    """Run ``hive`` in-process as agent ``actor`` (proven by its credential);
    (exit code, stdout)."""
    outcome = hive(repo, "--actor", actor, *args, actor=actor)
    return outcome.returncode, outcome.stdout


def hive(repo: Path, *args: str, actor: str = "alice", stdin: str | None = None) -> Any:
    """Run ``hive ARGS`` in-process as agent ``actor`` (proven by its credential),
    ``stdin`` on its standard input; the finished process (never a traceback)."""
    from tests.conftest import credential
    from tests.inprocess import run_hive

    env = {"HIVE_AGENT": actor, "HIVE_AGENT_TOKEN": credential(repo, actor)}
    outcome = run_hive(
        ["-C", str(repo), *args], env={**os.environ, **env}, input=stdin, module="hive.cli.main"
    )
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, outcome
    return outcome


def run_workers(repo: Path, body: str, count: int, timeout: float = 240) -> list[Any]:
    """Start ``count`` processes running ``body`` (with ``repo``, ``worker`` and
    ``call_tool``/``CallContext`` in scope) at once; each prints one JSON value."""
    from tests.inprocess import fork_call

    script = "import json, sys\nfrom hive.tools.registry import CallContext, call_tool\n"
    script += "repo, worker = sys.argv[1], int(sys.argv[2])\n" + textwrap.dedent(body)
    code = compile(script, "<worker>", "exec")
    procs = [  # forked: real processes at once, without an interpreter's start-up each
        fork_call(lambda: exec(code, {"__name__": "__main__"}), argv=[str(repo), str(n)])
        for n in range(count)
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    return outputs


def configure(repo: Path, **sections: Any) -> None:
    """Set top-level sections of .hive/config.yaml and commit it (tools read the
    committed config)."""
    from hive.store.yamlio import dumps, load_mapping
    from tests.conftest import git

    path = repo / ".hive" / "config.yaml"
    config = load_mapping(path.read_text(), str(path))
    config.update(sections)
    path.write_text(dumps(dict(config)))
    git(repo, "add", ".hive/config.yaml")
    git(repo, "commit", "-qm", "configure")


def call_beside_a_pipe(pipe: Path, repo: Path, name: str, args: Any) -> dict[str, Any] | None:
    """One tool call as agent A, in a thread given 20 s: its answer, or None when it
    was still waiting on the named pipe ``pipe`` (opened then for writing, so that the
    blocked call ends and the test can fail rather than hang)."""
    import threading

    answers: list[dict[str, Any]] = []
    caller = threading.Thread(
        target=lambda: answers.append(call(repo, "A", name, args)), daemon=True
    )
    caller.start()
    caller.join(timeout=120)  # a bound only a call that blocks waits out (a loaded machine)
    if caller.is_alive():
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        caller.join(timeout=5)
        return None
    return answers[0]
