"""A key set twice in one mapping of a hive YAML file is refused in plain words
naming the key and both lines (``.hive/config.yaml:7: 'tools' is set twice (first on
line 3): keep one``), on every path that reads YAML (cell and config files, lean and
full commands, ``doctor``, ``create --from``), whichever loader ruamel has: its own
words were 'while constructing a mapping found duplicate key "tools" with value "[]"
(original value: "[]")'."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.domain.workspace import Workspace
from hive.store.yamlio import YamlError, loads
from tests.conftest import git
from tests.inprocess import run_hive
from tests.test_yaml_anchors import loader_chosen


@pytest.mark.parametrize("pure", [False, True], ids=["libyaml", "pure-python"])
def test_a_key_set_twice_is_named_with_both_lines(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader_chosen(pure, monkeypatch)
    cases = [
        ("tools: []\nprefix: hv\ntools: []\n", "'tools' is set twice (first on line 1)", 3),
        ("a:\n  - b: 1\n    c: 2\n    b: 3\n", "'b' is set twice (first on line 2)", 4),
        ("x: 1\nm: {k: 1, j: 2,\n  k: 3}\n", "'k' is set twice (first on line 2)", 3),
    ]
    for text, said, line in cases:
        with pytest.raises(YamlError) as refused:
            loads(text)
        assert (str(refused.value), refused.value.line) == (f"{said}: keep one", line)
        assert refused.value.said() == f"{said}: keep one"  # no "malformed YAML" before it


def _hive(repo: Path, *args: str) -> tuple[int, str]:
    done = run_hive(["-C", str(repo), *args])
    assert "Traceback" not in done.stderr and "original value" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


CELL = (
    "id: hv-twice\ntitle: by hand\ntype: task\nstatus: open\npriority: 2\n"
    "title: again\ncreated_at: 2026-11-01T10:00:00Z\nupdated_at: 2026-11-01T10:00:00Z\n"
)
SAID = "hv-twice.yaml:6: 'title' is set twice (first on line 2): keep one"


def test_every_yaml_read_path_says_which_key_is_set_twice(ws: Workspace, repo: Path) -> None:
    cell_file = repo / ".hive" / "cells" / "a" / "hv-twice.yaml"
    cell_file.parent.mkdir(parents=True, exist_ok=True)
    cell_file.write_text(CELL)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a cell by hand", "--no-verify")
    for command in (["list"], ["ready"], ["list", "--json"], ["doctor"]):
        code, said = _hive(repo, *command)
        assert SAID in said, (command, said)
    code, said = _hive(repo, "show", "hv-twice")
    assert code != 0 and SAID in said

    (repo / "cells.yaml").write_text("- title: one\n  type: task\n  title: two\n")
    code, said = _hive(repo, "create", "--from", str(repo / "cells.yaml"))
    twice = "cells.yaml:3: 'title' is set twice (first on line 1): keep one; nothing was created"
    assert code == 2 and twice in said

    config = repo / ".hive" / "config.yaml"
    text = config.read_text()
    config.write_text(text + "prefix: hv\n")
    lines = len(text.splitlines()) + 1
    first = text.splitlines().index("prefix: hv") + 1
    code, said = _hive(repo, "doctor")
    assert f".hive/config.yaml:{lines}: 'prefix' is set twice (first on line {first})" in said
    git(repo, "commit", "-qam", "config by hand", "--no-verify")
    code, said = _hive(repo, "create", "another")
    assert code != 0
    assert (
        f".hive/config.yaml:{lines}: 'prefix' is set twice (first on line {first}): keep one"
        in said
    )


@pytest.mark.parametrize("pure", [False, True], ids=["libyaml", "pure-python"])
def test_a_key_set_twice_beside_a_self_referring_alias_is_named(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking for the key walked the document's nodes with no record of those seen, and
    an alias can make a node its own descendant (``&x [*x]``): the walk never ended, so
    every command reading such a file hung instead of refusing it."""
    import threading

    loader_chosen(pure, monkeypatch)
    said: list[str] = []

    def read() -> None:
        try:
            loads("c: {k: 1, k: 2}\nb: &x [*x]\n")
        except YamlError as refused:
            said.append(f"{refused.line}: {refused}")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "the read never ended"
    assert said == ["1: 'k' is set twice (first on line 1): keep one"]
