"""A person's hive commits carry the author and committer git would give their own
commit (git's order: the environment, then ``author.*``/``committer.*``, then
``user.*``, then ``EMAIL``, then git's guess; git asked only for its guesses); where git
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


def git_commit(
    repo: Path, env: dict[str, str], *, keep: bool = False
) -> subprocess.CompletedProcess[str]:
    """What git does with a commit of its own here (undone when it succeeds, unless
    ``keep``)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "probe"],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode == 0 and not keep:
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


# Each scene: the environment added, the settings of the (global) config file, and
# whether git refuses a commit there. hive's commit must carry what git's carries.
AUTHOR_ENV = {"GIT_AUTHOR_NAME": "Env Author", "GIT_AUTHOR_EMAIL": "author@env.example"}
COMMITTER_ENV = {"GIT_COMMITTER_NAME": "Env Committer", "GIT_COMMITTER_EMAIL": "c@env.example"}
USER_CONFIG = {"user.name": "Config Person", "user.email": "person@config.example"}
SCENES: dict[str, tuple[dict[str, str], dict[str, str], bool]] = {
    "env only": ({**AUTHOR_ENV, **COMMITTER_ENV}, {}, False),
    "config only": ({}, USER_CONFIG, False),
    "both: the environment first": ({**AUTHOR_ENV, **COMMITTER_ENV}, USER_CONFIG, False),
    "the author's name from the environment": (
        {"GIT_AUTHOR_NAME": "Env Author"},
        USER_CONFIG,
        False,
    ),
    "author.* and committer.*": (
        {},
        {**USER_CONFIG, "author.email": "a@role.example", "committer.name": "Role Committer"},
        False,
    ),
    "EMAIL": ({"EMAIL": "mail@env.example"}, {"user.name": "Config Person"}, False),
    "neither, with useConfigOnly": ({}, {"user.useConfigOnly": "true"}, True),
    "useConfigOnly by git -c without a value (true to git)": (
        {"GIT_CONFIG_PARAMETERS": "'user.useConfigOnly'"},
        {},
        True,
    ),
    "git -c by the environment": (
        {
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": "maintenance.auto",
            "GIT_CONFIG_VALUE_0": "false",
            "GIT_CONFIG_KEY_1": "user.name",
            "GIT_CONFIG_VALUE_1": "Counted Person",
        },
        USER_CONFIG,
        False,
    ),
    "values git trims": (
        {"GIT_COMMITTER_NAME": " Spaced Committer ", "GIT_COMMITTER_EMAIL": "<c@env.example>"},
        {**USER_CONFIG, "user.name": "Config Person,"},
        False,
    ),
}
WHO = "--format=%an <%ae> / %cn <%ce>"


@MODULES
def test_the_author_and_the_committer_are_git_s_in_every_scene(tmp_path: Path, module: str) -> None:
    """git takes the author from ``GIT_AUTHOR_*`` and the committer from
    ``GIT_COMMITTER_*``, each field falling back to ``author.*``/``committer.*``, then
    ``user.name``/``user.email``, then (the email) ``EMAIL``, then a guess; hive used
    ``user.name``/``user.email`` whenever both were set, for both. Each scene: a hive
    write and a plain ``git commit`` in the same environment and config name the same
    author and committer (or both refuse)."""
    repo = anonymous_repo(tmp_path)
    for scene, (added, settings, refused) in SCENES.items():
        config = tmp_path / f"{slug(scene)}.gitconfig"
        config.touch()
        for key, value in settings.items():
            git(repo, "config", "--file", str(config), key, value)
        env = {**nobody(tmp_path), "GIT_CONFIG_GLOBAL": str(config), **added}
        made = run_hive(["-C", str(repo), "create", scene], env=env, module=module)
        by_git = git_commit(repo, env, keep=True)
        if refused:
            assert (made.returncode, by_git.returncode != 0) == (8, True), (scene, made.stderr)
            continue
        assert made.returncode == 0 and by_git.returncode == 0, (scene, made.stderr)
        hive_said, git_said = git(repo, "log", "-2", WHO).splitlines()[::-1]
        assert hive_said == git_said, scene
        subprocess.run(["git", "-C", str(repo), "reset", "-q", "--soft", "HEAD~1"], check=True)
    assert git(repo, "log", "-1", WHO).strip() == (
        "Config Person <person@config.example> / Spaced Committer <c@env.example>"
    )  # the last scene's hive commit: the committer as git trims it


def test_a_person_s_mail_log_commits_carry_their_git_identity(tmp_path: Path) -> None:
    """A person's writes to the mail log (retiring an agent, the override it records)
    were authored ``NAME <name@hive.local>``; they carry the person's git identity, as
    their commits on the branch do, and an agent's mail-log commits stay its own."""
    from tests.conftest import agent_env

    repo = anonymous_repo(tmp_path)
    git(repo, "config", "user.name", "Mail Person")
    git(repo, "config", "user.email", "mail.person@example.com")
    env = nobody(tmp_path)
    agent = agent_env(repo, "ag1", base=env)
    assert run_hive(["-C", str(repo), "mail", "inbox"], env=agent).returncode == 0
    retired = run_hive(["-C", str(repo), "agent", "retire", "ag1", "--reason", "done"], env=env)
    assert retired.returncode == 0, retired.stderr
    log = git(repo, "log", "refs/hive/mail", "--format=%s|%an <%ae>|%cn <%ce>").splitlines()
    by_person = [line for line in log if "ag1" in line and "register" not in line]
    assert len(by_person) >= 2, log  # the retirement and the override
    person = "Mail Person <mail.person@example.com>"
    assert all(line.endswith(f"|{person}|{person}") for line in by_person), log
    registered = [line for line in log if line.startswith("hive-mail: register ag1")]
    assert registered and registered[0].endswith("|ag1 <ag1@hive.local>|ag1 <ag1@hive.local>")


def test_git_is_asked_only_for_what_it_would_guess_and_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person with ``user.name`` but no ``user.email`` paid two ``git var`` processes
    (committer, author) on every write; now one for both roles (git's guess of the
    email is the same for both), once per process, and none when the environment and
    config say everything. Counted with the real git
    behind a wrapper on ``PATH`` that logs its arguments."""
    import shutil

    from hive.domain.cells import create_cell
    from hive.domain.workspace import Workspace

    repo = anonymous_repo(tmp_path)
    calls = tmp_path / "git-calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    for key, value in nobody(tmp_path).items():
        monkeypatch.setenv(key, value)
    for key in IDENTITY_VARIABLES:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")

    def asked(title: str, times: int = 2) -> list[str]:
        calls.write_text("")
        ws = Workspace(repo)
        for number in range(times):
            create_cell(ws, title=f"{title} {number}")
        return [line for line in calls.read_text().splitlines() if " var " in f" {line}"]

    git(repo, "config", "user.name", "Named Person")
    monkeypatch.setenv("EMAIL", "named@example.com")
    assert asked("name only") == [f"-C {repo} var GIT_AUTHOR_IDENT"]  # serves both roles
    assert git(repo, "log", "-1", WHO).strip() == (
        "Named Person <named@example.com> / Named Person <named@example.com>"
    )
    git(repo, "config", "user.email", "named@config.example")
    assert asked("both set") == []
    git(repo, "config", "--unset", "user.email")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Author")  # both still guess the email only
    assert asked("the author's name") == [f"-C {repo} var GIT_AUTHOR_IDENT"]
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@env.example")  # the author is known
    assert asked("the author's email") == [f"-C {repo} var GIT_COMMITTER_IDENT"]
    assert git(repo, "log", "-1", WHO).strip() == (
        "Env Author <author@env.example> / Named Person <named@example.com>"
    )


@MODULES
def test_an_identity_from_an_included_config_file_is_git_s(tmp_path: Path, module: str) -> None:
    """A global config that sets ``user.email`` for the repositories under a directory
    (``includeIf "gitdir:..."``, the usual work/personal split): git commits with the
    included email; hive committed with the global one (its config reader does not
    follow includes, so such a value is git's to answer)."""
    repo = anonymous_repo(tmp_path)
    included = tmp_path / "work.gitconfig"
    git(repo, "config", "--file", str(included), "user.email", "work@corp.example")
    config = tmp_path / "global.gitconfig"
    git(repo, "config", "--file", str(config), "user.name", "Split Person")
    git(repo, "config", "--file", str(config), "user.email", "home@example.com")
    condition = f"includeIf.gitdir:{repo.resolve()}/.path"
    git(repo, "config", "--file", str(config), condition, str(included))
    env = {**nobody(tmp_path), "GIT_CONFIG_GLOBAL": str(config)}
    made = run_hive(["-C", str(repo), "create", "included"], env=env, module=module)
    assert made.returncode == 0, made.stderr
    by_git = git_commit(repo, env, keep=True)
    assert by_git.returncode == 0, by_git.stderr
    hive_said, git_said = git(repo, "log", "-2", WHO).splitlines()[::-1]
    expected = "Split Person <work@corp.example> / Split Person <work@corp.example>"
    assert hive_said == git_said == expected
