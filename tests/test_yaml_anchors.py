"""An anchor defined twice in one YAML document is refused with a clear error naming
it and both lines, on every path that reads YAML (cell and config files, ``create
--from``), whichever loader ruamel has: libyaml's refused it with "found duplicate
anchor; first occurrence second occurrence", its pure-Python loader took the later one
and printed a ``ReusedAnchorWarning`` to stderr. Anchors used once stay welcome."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hive.domain.workspace import Workspace
from hive.store import yamlio
from hive.store.yamlio import YamlError, loads
from tests.conftest import git
from tests.inprocess import run_hive

TWICE = "title: &t one\nstatus: open\nnotes:\n  - &t two\n  - *t\n"
REFUSAL = "anchor &t is defined twice (lines 1 and 4); a hive file may define each anchor once"


def loader_chosen(pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """ruamel's pure-Python loader (with hive's composer) for ``yamlio`` if ``pure``,
    else the one installed (libyaml's when ruamel.yaml.clib is there)."""
    if pure:
        loader = YAML(typ="safe", pure=True)
        loader.Composer = yamlio._loader().Composer
        monkeypatch.setattr(yamlio, "_loader", lambda: loader)


@pytest.mark.parametrize("pure", [False, True], ids=["libyaml", "pure-python"])
def test_an_anchor_defined_twice_is_refused_by_either_loader(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader_chosen(pure, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a library warning fails the test
        with pytest.raises(YamlError) as refused:
            loads(TWICE)
        assert (str(refused.value), refused.value.line) == (REFUSAL, 4)
        with pytest.raises(YamlError, match=r"^anchor &x is defined twice \(lines 1 and 1\)"):
            loads("a: [&x 1, &x 2]\n")
        assert loads("a: &x [1]\nb: *x\nc: &y 2\n") == {"a": [1], "b": [1], "c": 2}


def _hive(repo: Path, *args: str) -> tuple[int, str]:
    done = run_hive(["-C", str(repo), *args])
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def test_every_yaml_read_path_names_the_anchor_defined_twice(ws: Workspace, repo: Path) -> None:
    cell_file = repo / ".hive" / "cells" / "a" / "hv-anchor.yaml"
    cell_file.parent.mkdir(parents=True, exist_ok=True)
    cell_file.write_text(
        "id: hv-anchor\ntitle: &t by hand\ntype: task\nstatus: open\npriority: 2\n"
        "notes: &t x\ncreated_at: 2026-11-01T10:00:00Z\nupdated_at: 2026-11-01T10:00:00Z\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a cell by hand", "--no-verify")
    code, said = _hive(repo, "list")
    assert code == 0 and "hv-anchor.yaml:6: malformed YAML: anchor &t is defined twice" in said
    code, said = _hive(repo, "show", "hv-anchor")
    assert code != 0 and "(lines 2 and 6)" in said

    plan = repo / "cells.yaml"
    plan.write_text("- title: &t one\n- title: &t two\n")
    code, said = _hive(repo, "create", "--from", str(plan))
    assert code == 2 and "cells.yaml:2: malformed YAML: anchor &t is defined twice" in said
    assert "nothing was created" in said

    config = repo / ".hive" / "config.yaml"
    text = config.read_text()
    assert text.startswith("prefix: hv\n"), text
    config.write_text(text.replace("prefix: hv", "prefix: &c hv", 1) + "extra: &c x\n")
    git(repo, "commit", "-qam", "config by hand", "--no-verify")
    code, said = _hive(repo, "create", "another")
    assert code != 0 and "config.yaml" in said and "anchor &c is defined twice" in said
