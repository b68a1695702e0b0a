"""The four decomposition strategies and the guidance hive gives for each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strategy:
    name: str
    summary: str
    keywords: tuple[str, ...]
    guidelines: tuple[str, ...]
    anti_patterns: tuple[str, ...]
    example: str


STRATEGIES: dict[str, Strategy] = {
    "file-based": Strategy(
        name="file-based",
        summary="Split along files or directories when the change is mechanical and wide.",
        keywords=tuple(
            (
                "refactor rename migrate migration upgrade lint format move replace "
                "deprecate cleanup clean typing types codemod "
            ).split()
        ),
        guidelines=(
            "Give each subtask a disjoint set of files or directories (files_owned).",
            "Group files that must change together (a module and its tests) in one subtask.",
            "Put shared foundations (new helpers, config) in a first subtask others depend on.",
        ),
        anti_patterns=(
            "Two subtasks owning overlapping globs (src/** and src/api/*.py).",
            "Splitting one function's callers and its definition across subtasks with no order.",
        ),
        example="Rename UserId to AccountId: one subtask per package, a first one for the type.",
    ),
    "feature-based": Strategy(
        name="feature-based",
        summary="Split into vertical slices a user could notice, each end to end.",
        keywords=tuple(
            (
                "feature add implement build create support endpoint page screen "
                "command api ui flow integration new "
            ).split()
        ),
        guidelines=(
            "Each subtask delivers one behaviour end to end (model, logic, interface, tests).",
            "Order slices by dependency: the data model before the screens that use it.",
            "Keep slices small enough for one agent session (complexity 1-3).",
        ),
        anti_patterns=(
            "Layer splits (all models, then all views) that leave nothing working until the end.",
            "A slice that silently edits another slice's files.",
        ),
        example="Password reset: request form, token storage + email, reset page, audit log.",
    ),
    "risk-based": Strategy(
        name="risk-based",
        summary="Tackle the riskiest unknowns first, behind tests, when failure is costly.",
        keywords=tuple(
            (
                "security auth payment billing data loss race concurrency crash bug fix "
                "incident production critical vulnerability performance regression "
                "corrupt "
            ).split()
        ),
        guidelines=(
            "Start with a subtask that reproduces the problem or pins behaviour with tests.",
            "Isolate the risky change in its own small subtask with its own verification.",
            "Leave rollback or feature-flag work explicit rather than implied.",
        ),
        anti_patterns=(
            "Fixing and refactoring in the same subtask.",
            "No subtask that proves the fix (a failing test first).",
        ),
        example="Fix double charge: reproduce with a test, make the charge idempotent, backfill.",
    ),
    "research-based": Strategy(
        name="research-based",
        summary="Investigate before building when the approach itself is unknown.",
        keywords=tuple(
            (
                "investigate research explore spike evaluate compare why understand "
                "analyse analyze prototype feasibility options unknown "
            ).split()
        ),
        guidelines=(
            "First subtasks produce findings (notes in the cell), not production code.",
            "Time-box exploration; later subtasks depend on the findings.",
            "End with a decision subtask that turns findings into a plan.",
        ),
        anti_patterns=(
            "Building on an unverified assumption in parallel with the research that tests it.",
            "Research subtasks with no written outcome.",
        ),
        example="Choose a search engine: benchmark two candidates, write up, then integrate one.",
    ),
}

DEFAULT_STRATEGY = "feature-based"
STRATEGY_NAMES: tuple[str, ...] = tuple(STRATEGIES)


def check_strategy(strategy: str) -> str:
    """``strategy`` when it names a strategy, else a clear error listing them."""
    from hive.errors import InvalidInput

    if strategy not in STRATEGIES:
        raise InvalidInput(f"unknown strategy {strategy!r}: use {', '.join(STRATEGY_NAMES)}")
    return strategy
