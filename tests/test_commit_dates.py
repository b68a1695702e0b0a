"""``GIT_AUTHOR_DATE`` and ``GIT_COMMITTER_DATE`` honoured as ``git commit`` honours them,
on the lean and the full path, for a person's and an agent's commits; a value git
refuses is refused naming the variable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import agent_env, git, make_repo
from tests.inprocess import run_hive

DATES = [
    ("1112911993 +0200", "@1112911993 -0130"),
    ("@0 +0000", "@4102444800 +1400"),
    ("Thu, 07 Apr 2005 22:13:13 +0200", "2005-04-07T22:13:13"),
    ("2005-04-07 22:13:13 +05:45", "2005-04-07T22:13:13.019Z"),
]


def raw_dates(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%ad|%cd", "--date=raw").strip()


def dated(author: str, committer: str) -> dict[str, str]:
    return {**os.environ, "GIT_AUTHOR_DATE": author, "GIT_COMMITTER_DATE": committer}


def gits_dates(tmp_path: Path, author: str, committer: str) -> str:
    """What a real ``git commit`` writes under the same variables."""
    repo = tmp_path / "plain"
    if not repo.exists():
        make_repo(repo)
    env = dated(author, committer)
    import subprocess

    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], env=env, check=True
    )
    return raw_dates(repo)


@pytest.fixture
def hive_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    assert run_hive(["-C", str(repo), "init", "--prefix", "hv"]).returncode == 0
    return repo


@pytest.mark.parametrize(("author", "committer"), DATES)
def test_dates_as_git_commit_writes_them(
    hive_repo: Path, tmp_path: Path, author: str, committer: str
) -> None:
    expected = gits_dates(tmp_path, author, committer)
    env = dated(author, committer)
    made = run_hive(["-C", str(hive_repo), "--json", "create", "Dated"], env=env)  # lean
    assert made.returncode == 0, made.stderr
    assert raw_dates(hive_repo) == expected
    cell = json.loads(made.stdout)["id"]
    noted = run_hive(["-C", str(hive_repo), "comment", cell, "noted"], env=env)
    assert noted.returncode == 0, noted.stderr
    assert raw_dates(hive_repo) == expected
    stamp = expected.split("|")[1].split()[0]
    assert (
        git(hive_repo, "reflog", "-1", "--format=%gD", "--date=raw").split("{")[1].startswith(stamp)
    )


def test_an_agents_commit_takes_the_dates_too(hive_repo: Path, tmp_path: Path) -> None:
    expected = gits_dates(tmp_path, *DATES[2])
    env = agent_env(hive_repo, "Dater", base=dated(*DATES[2]))
    made = run_hive(["-C", str(hive_repo), "create", "By an agent"], env=env)
    assert made.returncode == 0, made.stderr
    assert git(hive_repo, "log", "-1", "--format=%an").strip() == "Dater"
    assert raw_dates(hive_repo) == expected


def test_an_empty_variable_is_unset_as_in_git(hive_repo: Path) -> None:
    made = run_hive(["-C", str(hive_repo), "create", "Now"], env=dated("", ""))
    assert made.returncode == 0, made.stderr
    author, committer = raw_dates(hive_repo).split("|")
    assert author == committer and int(author.split()[0]) > 1_700_000_000


@pytest.mark.parametrize(
    ("variable", "value"),
    [("GIT_AUTHOR_DATE", "yesterday-ish"), ("GIT_COMMITTER_DATE", "2005-04-07")],
)
def test_a_date_git_refuses_is_refused_naming_it(
    hive_repo: Path, tmp_path: Path, variable: str, value: str
) -> None:
    import subprocess

    plain = make_repo(tmp_path / "plain")
    refused = subprocess.run(
        ["git", "-C", str(plain), "commit", "--allow-empty", "-m", "x"],
        env={**os.environ, variable: value},
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 128 and "invalid date format" in refused.stderr
    cell = json.loads(run_hive(["-C", str(hive_repo), "--json", "create", "A"]).stdout)["id"]
    before = git(hive_repo, "rev-parse", "HEAD")
    env = {**os.environ, variable: value}
    for args in (
        ["create", "Never"],
        ["--json", "create", "Never"],
        ["comment", cell, "never"],  # the full path
    ):
        made = run_hive(["-C", str(hive_repo), *args], env=env)
        assert made.returncode == 2, made.stderr
        said = made.stdout if "--json" in args else made.stderr
        assert variable in said and "Traceback" not in said
        if "--json" in args:
            assert json.loads(made.stdout)["code"] == "invalid_input"
    assert git(hive_repo, "rev-parse", "HEAD") == before


def test_commits_of_one_second_are_listed_children_first(tmp_path: Path) -> None:
    """A history made within one second (a swarm's is, git's dates having no finer
    grain): ``iter_commits`` (``hive log``, ``hive review``, the board) lists no commit
    before one of its children, as ``git log --date-order``; before, ties went by sha,
    and a branch's base could come before the other branch's commits."""
    from hive.domain.swarm.review import _oldest_first
    from hive.git.repo import GitRepo

    repo = tmp_path / "repo"
    make_repo(repo)
    env = {"GIT_AUTHOR_DATE": "@4102444800 +0000", "GIT_COMMITTER_DATE": "@4102444800 +0000"}

    def commit(message: str) -> None:
        git_env(repo, env, "commit", "-q", "--allow-empty", "-m", message)

    commit("base")
    git(repo, "checkout", "-q", "-b", "side")
    for number in range(6):  # a long branch beside a short one: shas decide nothing
        commit(f"side {number}")
    git(repo, "checkout", "-q", "-")
    for number in range(3):
        commit(f"main {number}")
    git_env(repo, env, "merge", "-q", "--no-ff", "-m", "merge", "side")
    listed = [info.sha for info in GitRepo.discover(str(repo)).iter_commits()]
    assert sorted(listed) == sorted(git(repo, "rev-list", "HEAD").split())
    position = {sha: index for index, sha in enumerate(listed)}
    for line in git(repo, "rev-list", "--parents", "HEAD").splitlines():
        child, *parents = line.split()
        assert all(position[child] < position[parent] for parent in parents), line
    limited = [info.sha for info in GitRepo.discover(str(repo)).iter_commits(limit=4)]
    assert limited == listed[:4]
    # review's parents-first order is this one reversed (it sorts again for skewed dates)
    infos = list(GitRepo.discover(str(repo)).iter_commits())
    assert [info.sha for info in _oldest_first(infos)] == listed[::-1]


def git_env(repo: Path, env: dict[str, str], *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(repo), *args], env={**os.environ, **env}, check=True)
