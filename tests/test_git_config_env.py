"""git's settings from the environment (``GIT_CONFIG_COUNT`` pairs, ``GIT_CONFIG_PARAMETERS``
as ``git -c`` hands it to hooks, ``GIT_CONFIG_NOSYSTEM``/``GIT_CONFIG_SYSTEM``) read by
hive's one config reader as ``git config --get`` reads them under the same environment."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hive.errors import GitError
from hive.git import configfile
from hive.git.repo import GitRepo
from hive.git.shared import PERM_GROUP, shared_perm
from tests.conftest import git, make_repo
from tests.inprocess import run_hive

KEYS = ("core.commentChar", "user.name", "gc.auto", "hive.mode", "core.filemode")


def git_get(repo: Path, key: str) -> str | None:
    found = subprocess.run(
        ["git", "-C", str(repo), "config", "--get", key], capture_output=True, text=True
    )
    assert found.returncode in (0, 1), found.stderr
    return found.stdout.rstrip("\n") if found.returncode == 0 else None


def parameters_of(repo: Path, *settings: str) -> str:
    """The ``GIT_CONFIG_PARAMETERS`` real git hands a child process for ``git -c``."""
    args = [arg for setting in settings for arg in ("-c", setting)]
    alias = 'alias.params=!printf %s "$GIT_CONFIG_PARAMETERS"'
    return git(repo, "-c", alias, *args, "params")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    made = make_repo(tmp_path / "repo", commit=False)
    git(made, "config", "core.commentChar", "%")
    git(made, "config", "gc.auto", "40")
    git(made, "config", "hive.mode", "file")
    return made


def answers(repo: Path) -> dict[str, str | None]:
    found = GitRepo.discover(str(repo))
    return {key: found.config_value(*key.split(".")) for key in KEYS}


def expected(repo: Path) -> dict[str, str | None]:
    return {key: git_get(repo, key) for key in KEYS}


def test_count_pairs_override_every_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "4")
    for number, (key, value) in enumerate(
        [
            ("CORE.COMMENTCHAR", ";"),
            ("User.Name", " Env Person"),
            ("core.sub.filemode", "x"),
            ("core.commentchar", "!"),
        ]
    ):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{number}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{number}", value)
    assert answers(repo) == expected(repo)
    assert answers(repo)["core.commentChar"] == "!"  # the last pair wins
    assert answers(repo)["user.name"] == " Env Person"  # verbatim, as git keeps it
    assert answers(repo)["gc.auto"] == "40"  # from the file: the pairs do not set it


def test_parameters_as_git_c_hands_them_to_hooks(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = parameters_of(
        repo, "user.name=it's me!", "hive.mode=a b = c", "core.commentChar=;", "x.y.gc.auto=1"
    )
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", params)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.commentChar")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "&")  # the parameters come after the pairs
    assert answers(repo) == expected(repo)
    assert answers(repo)["user.name"] == "it's me!"
    assert answers(repo)["core.commentChar"] == ";"


@pytest.mark.parametrize(
    "params",
    [
        "'hive.mode= spaced=out' 'user.name'",  # older style; a key without a value
        "'hive.mode'=  'gc.auto'='7'",  # 'key'= (no value), two spaces
        "'user.name'='a'\\''b'",
    ],
)
def test_parameters_in_every_form_git_reads(
    repo: Path, monkeypatch: pytest.MonkeyPatch, params: str
) -> None:
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", params)
    assert answers(repo) == expected(repo)


def test_a_key_given_no_value_is_a_true_flag(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = GitRepo.discover(str(repo)).paths
    assert not configfile.flag(paths, "core", "sparseCheckout")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", parameters_of(repo, "core.sparseCheckout"))
    assert configfile.flag(paths, "core", "sparseCheckout")


def test_shared_repository_from_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = GitRepo.discover(str(repo)).paths
    assert shared_perm(paths) == 0
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.sharedRepository")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "group")
    assert shared_perm(paths) == PERM_GROUP


@pytest.mark.parametrize(
    "env",
    [
        {"GIT_CONFIG_COUNT": "two"},
        {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "1"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "nodot", "GIT_CONFIG_VALUE_0": "1"},
        {"GIT_CONFIG_PARAMETERS": "'user.name'x"},
        {"GIT_CONFIG_NOSYSTEM": "perhaps"},
    ],
)
def test_settings_git_refuses_are_refused_naming_them(
    repo: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert (
        subprocess.run(
            ["git", "-C", str(repo), "config", "--get", "user.name"], capture_output=True
        ).returncode
        == 128
    )
    with pytest.raises(GitError, match="GIT_CONFIG_COUNT"):
        GitRepo.discover(str(repo)).config_value("user", "name")


def test_system_file_as_git_reads_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "system.config"
    system.write_text("[hive]\n\tsystemonly = yes\n")
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))
    for nosystem in ("1", "true", "0", "false", ""):
        monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", nosystem)
        found = GitRepo.discover(str(repo)).config_value("hive", "systemOnly")
        assert found == git_get(repo, "hive.systemOnly"), nosystem


def test_a_persons_name_from_git_c_on_the_lean_path(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_hive(["-C", str(repo), "init", "--prefix", "hv"]).returncode == 0
    params = parameters_of(repo, "user.name=Hook Person")
    env = {
        k: v for k, v in os.environ.items() if k not in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")
    }
    env["GIT_CONFIG_PARAMETERS"] = params
    made = run_hive(["-C", str(repo), "create", "Made in a hook"], env=env)
    assert made.returncode == 0, made.stderr
    assert git(repo, "log", "-1", "--format=%an|%cn").strip() == "Hook Person|Hook Person"
    assert "Hook Person" in git(repo, "log", "-1", "--format=%B")


def test_a_command_under_settings_git_refuses_says_so(repo: Path) -> None:
    assert run_hive(["-C", str(repo), "init", "--prefix", "hv"]).returncode == 0
    made = run_hive(
        ["-C", str(repo), "create", "x"], env={**os.environ, "GIT_CONFIG_COUNT": "many"}
    )
    assert made.returncode == 8, made.stderr  # a git error, as git refuses
    assert "GIT_CONFIG_COUNT" in made.stderr and "Traceback" not in made.stderr


BOOLEANS = (
    *("true", "TRUE", "yes", "On", "false", "No", "off", "", "1", "0", "-1", "+1", "2"),
    *("10", "007", "0x10", "0X0", "1k", "0K", "2m", "1g", "2147483647", "2097151k"),
    *("2147483648", "2097152k", "-2147483647", "08", "0x", "1kb", "k", "--1", "maybe"),
)


def git_bool(repo: Path, key: str) -> bool | None:
    """``git config --type=bool --get KEY``: None where git refuses the value."""
    found = subprocess.run(
        ["git", "-C", str(repo), "config", "--type=bool", "--get", key],
        capture_output=True,
        text=True,
    )
    assert found.returncode in (0, 1, 128), found.stderr
    return {0: found.stdout.strip() == "true", 1: False}.get(found.returncode)


def test_a_boolean_is_read_as_git_reads_it(repo: Path) -> None:
    """``is_true`` said false for ``1k``, ``0x10`` and ``+1`` (true to git) and raised
    ValueError for ``--1``; each value now reads as ``git config --type=bool`` says."""
    config = repo / ".git" / "config"
    base = config.read_text()
    paths = GitRepo.discover(str(repo)).paths
    for value in BOOLEANS:
        config.write_text(f"{base}[commit]\n\tgpgsign = {value}\n")
        truth = git_bool(repo, "commit.gpgsign")
        assert configfile.git_boolean(value) == truth, value
        assert configfile.is_true(value) is bool(truth), value
        assert configfile.flag(paths, "commit", "gpgsign") is bool(truth), value


@pytest.mark.parametrize("form", ["file", "file-empty", "parameters", "count-empty"])
def test_doctor_and_identity_read_a_flag_in_every_form_as_git(
    repo: Path, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git -c commit.gpgsign`` (no value: true) read as "" and so false: doctor said
    nothing of unsigned commits and a person's write ignored ``user.useConfigOnly``."""
    if form == "file":
        with (repo / ".git" / "config").open("a") as config:
            config.write("[commit]\n\tgpgsign\n[user]\n\tuseConfigOnly\n")
    elif form == "file-empty":
        with (repo / ".git" / "config").open("a") as config:
            config.write("[commit]\n\tgpgsign =\n[user]\n\tuseConfigOnly =\n")
    elif form == "parameters":
        params = parameters_of(repo, "commit.gpgsign", "user.useConfigOnly")
        monkeypatch.setenv("GIT_CONFIG_PARAMETERS", params)
    else:
        monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
        for number, key in enumerate(("commit.gpgsign", "user.useConfigOnly")):
            monkeypatch.setenv(f"GIT_CONFIG_KEY_{number}", key)
            monkeypatch.setenv(f"GIT_CONFIG_VALUE_{number}", "")
    signing = git_bool(repo, "commit.gpgsign")
    assert signing is (form in ("file", "parameters"))
    assert git_bool(repo, "user.useConfigOnly") is signing
    paths = GitRepo.discover(str(repo)).paths
    assert configfile.flag(paths, "user", "useConfigOnly") is signing
    assert run_hive(["-C", str(repo), "init", "--prefix", "hv"]).returncode == 0
    report = run_hive(["-C", str(repo), "--json", "doctor"])
    kinds = [w["kind"] for w in json.loads(report.stdout)["warnings"]]
    assert ("unsigned-commits" in kinds) is signing, report.stdout
