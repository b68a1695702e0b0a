"""A person's hive commits carry the identity git would give their own commit; where git
knows none ("Author identity unknown") hive commits as the person at ``hive.local``, as
it always has, unless ``user.useConfigOnly`` asks for a configured identity only, where
hive refuses as git refuses: checked against the real ``git commit`` in the same
environment, with ``HOME`` an empty directory and no system config (agents commit as
themselves, ``NAME <name@hive.local>``, whatever git's config says)."""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.actors import slug
from tests.conftest import git
from tests.inprocess import run_hive

MODULES = pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["lean", "full"])
IDENTITY_VARIABLES = (
    *("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"),
    *("EMAIL", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "HIVE_AGENT", "HIVE_AGENT_TOKEN"),
)


def nobody(tmp_path: Path) -> dict[str, str]:
    """An environment in which git knows no identity but what the repository says."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in IDENTITY_VARIABLES}
    return {**env, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def anonymous_repo(tmp_path: Path) -> Path:
    """A repository with hive initialised and no identity in its config."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "initial")  # conftest's identity
    assert run_hive(["-C", str(repo), "init", "--prefix", "hv"]).returncode == 0
    return repo


def git_commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What git does with a commit of its own here (undone when it succeeds)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "probe"],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode == 0:
        subprocess.run(["git", "-C", str(repo), "reset", "-q", "--soft", "HEAD~1"], check=True)
    return done


def author(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%an <%ae>").strip()


@MODULES
def test_with_no_identity_anywhere_hive_commits_as_git_or_as_the_person(
    tmp_path: Path, module: str
) -> None:
    """No ``user.name``/``user.email`` in any config, no ``GIT_AUTHOR_*``: git refuses
    ("Author identity unknown") unless it can make one up from the system. Where git
    makes one up hive commits under that one (it used the OS user at ``hive.local``);
    where git refuses hive still commits, as the OS user at ``hive.local`` (a repository
    set up by a script or a container without a git identity keeps working)."""
    repo = anonymous_repo(tmp_path)
    env = nobody(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    by_git = git_commit(repo, env)
    made = run_hive(["-C", str(repo), "create", "Who am I"], env=env, module=module)
    assert made.returncode == 0, made.stderr
    assert git(repo, "rev-parse", "HEAD~1") == head
    assert git(repo, "status", "--porcelain") == ""
    if by_git.returncode != 0:
        login = getpass.getuser()
        assert author(repo) == f"{login} <{slug(login)}@hive.local>"
    else:  # a machine whose host name has a domain: git's made-up identity
        ident = ["git", "-C", str(repo), "var", "GIT_AUTHOR_IDENT"]
        said = subprocess.run(ident, env=env, text=True, capture_output=True).stdout
        assert author(repo) == said.rsplit(" ", 2)[0]


@MODULES
def test_use_config_only_and_the_environment_are_git_s_rules(tmp_path: Path, module: str) -> None:
    """``user.name`` set, no ``user.email`` and ``user.useConfigOnly``: git refuses ("no
    email was given and auto-detection is disabled"), hive made ``name@hive.local`` up;
    it now refuses too (a made-up identity is what useConfigOnly forbids), also while
    only ``GIT_AUTHOR_EMAIL`` is set (git needs the committer's too); with
    ``GIT_COMMITTER_EMAIL`` as well git commits, and so does hive, under git's author."""
    repo = anonymous_repo(tmp_path)
    git(repo, "config", "user.name", "Config Person")
    git(repo, "config", "user.useConfigOnly", "true")
    env = nobody(tmp_path)
    assert git_commit(repo, env).returncode != 0
    refused = run_hive(["-C", str(repo), "create", "No address"], env=env, module=module)
    assert refused.returncode == 8, refused.stderr
    assert "auto-detection is disabled" in refused.stderr
    assert "git does not know who you are" in refused.stderr
    assert "git config --global user.email" in refused.stderr
    env["GIT_AUTHOR_EMAIL"] = "given@example.com"  # git commit needs a committer too
    assert git_commit(repo, env).returncode != 0
    refused = run_hive(["-C", str(repo), "create", "No committer"], env=env, module=module)
    assert refused.returncode == 8, refused.stderr
    env["GIT_COMMITTER_EMAIL"] = "given@example.com"
    assert git_commit(repo, env).returncode == 0
    made = run_hive(["-C", str(repo), "create", "With an address"], env=env, module=module)
    assert made.returncode == 0, made.stderr
    assert author(repo) == "Config Person <given@example.com>"


def test_an_agent_commits_as_itself_without_any_git_identity(tmp_path: Path) -> None:
    """An agent's identity is its own (``NAME <name@hive.local>``): no git identity is
    needed for it, as before."""
    from tests.conftest import agent_env

    repo = anonymous_repo(tmp_path)
    env = agent_env(repo, "Worker", base=nobody(tmp_path))
    made = run_hive(["-C", str(repo), "create", "By an agent"], env=env)
    assert made.returncode == 0, made.stderr
    assert author(repo) == "Worker <worker@hive.local>"
