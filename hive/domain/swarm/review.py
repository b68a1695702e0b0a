"""Review by diff: an agent's work on a cell (or a whole epic) as the commits that
carry its ``Hive-Cell`` trailer, with scope checked against what was planned."""

from __future__ import annotations

import re

from hive.domain.cells import get_cell
from hive.domain.commitmsg import COMMITTER_TRAILER
from hive.domain.globs import path_matches
from hive.domain.outcomes import load_outcomes
from hive.domain.reservations import list_reservations
from hive.domain.reservecore import folds_case
from hive.domain.workspace import Workspace
from hive.git.repo import CommitInfo
from hive.models import Cell
from hive.models.outcome import Outcome
from hive.models.swarm import CellReview, Review, ReviewCommit, ReviewFile

HIVE_PREFIX = ".hive/"
CELLS_PREFIX = ".hive/cells/"
OUTCOMES_PREFIX = ".hive/outcomes/"


def review(ws: Workspace, *, target: str, with_patch: bool = True) -> Review:
    """The commits, files and outcome of ``target`` and, for an epic, of its subtasks."""
    index = ws.cells()
    cell = get_cell(index, target, allow_deleted=True)
    members = [cell]
    if cell.type == "epic":
        members += [index.cells[c] for c in index.children_of(cell.id)]
    wanted = {member.id for member in members}
    history = _oldest_first(list(ws.git.iter_commits()))
    infos = [info for info in history if wanted.intersection(_cells_of(info))]
    commits = [_review_commit(ws, info, wanted, with_patch) for info in infos]
    outcomes = _latest_outcomes(load_outcomes(ws), wanted)
    parents = {info.sha: info.parents[0] if info.parents else None for info in infos}
    ends = _Ends(history, [info.sha for info in infos])
    cells = []
    for member in members:
        found = _cell_review(ws, member, commits, outcomes.get(member.id))
        cells.append(_with_cell_diff(ws, found, commits, parents, ends, with_patch))
    return Review(
        target=cell.id,
        title=cell.title,
        is_epic=cell.type == "epic",
        cells=cells,
        commits=commits,
    )


def _with_cell_diff(
    ws: Workspace,
    found: CellReview,
    commits: list[ReviewCommit],
    parents: dict[str, str | None],
    ends: _Ends,
    with_patch: bool,
) -> CellReview:
    """The cell's work as one diff: the files its commits changed (hive's own and the
    agent's code commits alike), from before its first commit to the first commit of
    the branch that holds them all (its last, unless some were made on a branch merged
    since: a worktree of ``hive swarm run``); of hive's cell and outcome files, the
    cell's own (an epic's creation commit carries every subtask's trailer and makes all
    their files)."""
    own = [commit for commit in commits if found.cell_id in commit.cells]
    if not own:
        return found
    paths = {
        changed.path
        for commit in own
        for changed in commit.files
        if _is_shown(changed.path, {found.cell_id})
    }
    tip = ends.holding_all([commit.sha for commit in own])
    diff = ws.git.range_diff(parents[own[0].sha], tip, paths.__contains__)
    files = [
        ReviewFile(path=f.path, status=f.status, additions=f.additions, deletions=f.deletions)
        for f in diff.files
        if f.path in paths
    ]
    return found.model_copy(
        update={
            "commits": [commit.sha for commit in own],
            "files": files,
            "patch": _only_files(diff.patch, paths) if with_patch else "",
        }
    )


def _cells_of(info: CommitInfo) -> list[str]:
    return info.trailers().get("Hive-Cell", [])


def _oldest_first(newest_first: list[CommitInfo]) -> list[CommitInfo]:
    """HEAD's history in the order the work happened: every commit after its parents,
    the oldest by date first where the graph leaves a choice (``git log --date-order
    --reverse``). Dates alone put a commit before its parent when they are equal (a
    swarm's commits within one second) or skewed (a clone with a slow clock);
    ``newest_first`` (``GitRepo.iter_commits``) has the first right but not the second,
    so it is no reversed list: this sort is the reversed list where the dates are not
    skewed (``tests/test_review.py``)."""
    import heapq

    position = {info.sha: number for number, info in enumerate(newest_first)}
    waiting = {info.sha: sum(p in position for p in set(info.parents)) for info in newest_first}
    children: dict[str, list[CommitInfo]] = {}
    for info in newest_first:
        for parent in set(info.parents):
            children.setdefault(parent, []).append(info)

    def key(info: CommitInfo) -> tuple[int, int, str]:
        return (info.time, -position[info.sha], info.sha)

    free = [key(info) for info in newest_first if waiting[info.sha] == 0]
    heapq.heapify(free)
    by_sha = {info.sha: info for info in newest_first}
    ordered: list[CommitInfo] = []
    while free:
        info = by_sha[heapq.heappop(free)[2]]
        ordered.append(info)
        for child in children.get(info.sha, []):
            waiting[child.sha] -= 1
            if waiting[child.sha] == 0:
                heapq.heappush(free, key(child))
    return ordered


class _Ends:
    """Where a cell's one diff ends: the oldest commit on HEAD's first-parent line
    whose history holds every one of the cell's commits."""

    def __init__(self, oldest_first: list[CommitInfo], marked: list[str]) -> None:
        bit = {sha: 1 << number for number, sha in enumerate(marked)}
        self._bit = bit
        reach: dict[str, int] = {}
        for info in oldest_first:  # parents first, so each reach is final when read
            found = bit.get(info.sha, 0)
            for parent in info.parents:
                found |= reach.get(parent, 0)
            reach[info.sha] = found
        by_sha = {info.sha: info for info in oldest_first}
        line: list[str] = []
        sha = oldest_first[-1].sha if oldest_first else None
        while sha is not None and sha in by_sha:  # HEAD, then its first parents
            line.append(sha)
            parents = by_sha[sha].parents
            sha = parents[0] if parents else None
        self._reach = reach
        self._line = line

    def holding_all(self, shas: list[str]) -> str:
        wanted = 0
        for sha in shas:
            wanted |= self._bit[sha]
        tip = shas[-1]
        for sha in self._line:
            if self._reach[sha] & wanted != wanted:
                break
            tip = sha
        return tip


def _review_commit(
    ws: Workspace, info: CommitInfo, wanted: set[str], with_patch: bool
) -> ReviewCommit:
    diff = ws.git.commit_diff(info.sha, lambda path: _is_shown(path, wanted))
    trailers = info.trailers()
    events = trailers.get("Hive-Event", [])
    shown = [f for f in diff.files if _is_shown(f.path, wanted)]
    committer = _last(trailers.get(COMMITTER_TRAILER))
    return ReviewCommit(
        sha=info.sha,
        subject=info.subject,
        author=info.author,
        time=info.time,
        cells=[c for c in trailers.get("Hive-Cell", []) if c in wanted],
        event=events[0] if events else None,
        made_by="hive" if events else "agent" if committer else "git",
        committer=committer,
        agent=_last(trailers.get("Hive-Agent")),
        files=[
            ReviewFile(path=f.path, status=f.status, additions=f.additions, deletions=f.deletions)
            for f in shown
        ],
        patch=_only_files(diff.patch, {f.path for f in shown}) if with_patch else "",
    )


def made_by(commit: ReviewCommit) -> str:
    """Who made a reviewed commit, as its message says, in words (``hive review`` and
    the board's cell page): ``by hive (complete, for bob); author bob
    <bob@hive.local>``, ``by agent bob with git (its Hive-Committer trailer); author Ada
    <ada@example.com>`` or ``by Ada <ada@example.com> with git (no Hive-Committer
    trailer names an agent)``."""
    if commit.made_by == "hive":
        acting = f", for {commit.agent}" if commit.agent else ""
        return f"by hive ({commit.event}{acting}); author {commit.author}"
    if commit.made_by == "agent":
        return (
            f"by agent {commit.committer} with git (its Hive-Committer trailer);"
            f" author {commit.author}"
        )
    return f"by {commit.author} with git (no Hive-Committer trailer names an agent)"


def _last(values: list[str] | None) -> str | None:
    """A trailer's value (the last, as ``git interpret-trailers`` adds one after any
    the message had), None when the commit has none."""
    return values[-1] if values else None


def _is_shown(path: str, wanted: set[str]) -> bool:
    """Cell and outcome files of cells outside ``wanted`` (siblings created in the same
    commit) are hidden."""
    name = path.rsplit("/", 1)[-1].removesuffix(".yaml")
    if path.startswith(CELLS_PREFIX):
        return name in wanted
    if path.startswith(OUTCOMES_PREFIX):
        return name.split("~", 1)[0] in wanted
    return True


def _only_files(patch: str, paths: set[str]) -> str:
    """The parts of a ``diff --git`` patch that change one of ``paths``."""
    blocks = re.split(r"(?m)^(?=diff --git )", patch)
    kept = [b for b in blocks if not b.startswith("diff --git ") or _block_path(b) in paths]
    return "".join(kept)


def _block_path(block: str) -> str:
    header = block.split("\n", 1)[0]
    match = re.match(r"diff --git a/(.*) b/(.*)$", header)
    return match.group(2) if match else ""


def _latest_outcomes(outcomes: list[Outcome], wanted: set[str]) -> dict[str, Outcome]:
    latest: dict[str, Outcome] = {}
    for outcome in outcomes:  # oldest first, so later records win
        if outcome.cell_id in wanted:
            latest[outcome.cell_id] = outcome
    return latest


def _cell_review(
    ws: Workspace, cell: Cell, commits: list[ReviewCommit], outcome: Outcome | None
) -> CellReview:
    touched: list[str] = []
    for commit in commits:
        if cell.id not in commit.cells:
            continue
        for changed in commit.files:
            if not changed.path.startswith(HIVE_PREFIX) and changed.path not in touched:
                touched.append(changed.path)
    reserved = [
        r.path_pattern
        for r in list_reservations(ws)
        if r.cell == cell.id or (cell.assignee and r.agent == cell.assignee and r.cell is None)
    ]
    if outcome is not None:
        reserved += [p for p in outcome.files_reserved if p not in reserved]
        touched += [p for p in outcome.files_touched if p not in touched]
    scope = [*cell.files_owned, *reserved]
    fold = folds_case(ws.git.paths)
    violations = [p for p in touched if scope and not any(path_matches(g, p, fold) for g in scope)]
    if outcome is not None:  # what was out of scope when it completed stays so
        violations += [p for p in outcome.scope_violations if p not in violations]
    return CellReview(
        cell_id=cell.id,
        title=cell.title,
        status=cell.status,
        assignee=cell.assignee,
        files_owned=list(cell.files_owned),
        files_reserved=reserved,
        files_touched=touched,
        scope_violations=violations,
        outcome=outcome,
    )
