"""Learning from outcomes: scores with a 90-day half-life, pattern maturity,
anti-patterns, and strategy selection that evidence can overturn.

Selection treats each strategy's chance of success as a Beta distribution. The
keyword prior contributes ``PRIOR_STRENGTH`` pseudo-observations with success
rate ``q`` (higher for strategies whose keywords the task mentions); each past
outcome of a *similar* task adds ``similarity x decay`` observations, split into
success and failure by its quality score. The strategy with the highest
posterior mean wins, so a few recent failures of the keyword favourite and
successes of another on similar tasks change the choice, not just the
confidence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from hive.domain.outcomes import load_outcomes
from hive.domain.swarm.strategies import DEFAULT_STRATEGY, STRATEGIES
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput
from hive.models import utc_now
from hive.models.outcome import Outcome
from hive.models.swarm import (
    Insights,
    PatternStat,
    Precedent,
    StrategyChoice,
    StrategyInsight,
    StrategyScore,
)

HALF_LIFE_DAYS = 90.0
PRIOR_STRENGTH = 3.0
MIN_SIMILARITY = 0.2
MAX_TASK = 10_000
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    (
        "the a an and or of to in on for with from by at is are be as it this "
        "that into we our use using should must can will make all any"
    ).split()
)
TASK_KINDS: dict[str, tuple[str, ...]] = {
    "bugfix": ("bug", "fix", "crash", "error", "regression", "broken", "incident"),
    "refactor": ("refactor", "rename", "cleanup", "migrate", "migration", "move", "types"),
    "feature": ("add", "feature", "implement", "support", "new", "endpoint", "page"),
    "docs": ("doc", "docs", "documentation", "readme", "guide"),
    "tests": ("test", "tests", "coverage", "flaky"),
    "performance": ("performance", "slow", "fast", "speed", "latency", "optimize", "cache"),
    "security": ("security", "auth", "permission", "vulnerability", "token", "password"),
    "research": ("investigate", "research", "spike", "explore", "evaluate", "compare"),
}


# ------------------------------------------------------------------ text


def tokens(text: str) -> set[str]:
    return set(ordered_tokens(text))


def ordered_tokens(text: str) -> list[str]:
    """Content words of ``text`` in order: lower-cased, stemmed, no stopwords."""
    words = _WORD.findall(text.lower())
    return [_stem(w) for w in words if len(w) > 2 and w not in STOPWORDS]


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def similarity(a: set[str], b: set[str]) -> float:
    """Cosine similarity of two token sets."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def task_kind(text: str) -> str:
    words = tokens(text)
    best, hits = "general", 0
    for kind, keywords in TASK_KINDS.items():
        count = len(words & {_stem(k) for k in keywords})
        if count > hits:
            best, hits = kind, count
    return best


# ------------------------------------------------------------------ scoring


def decay(recorded_at: datetime, now: datetime) -> float:
    """Weight of an observation: halves every 90 days."""
    age_days = max(0.0, (now - recorded_at).total_seconds() / 86_400)
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def outcome_quality(outcome: Outcome) -> float:
    """How well the work went, in [0, 1]: 0 for a failure; a success loses up to
    0.5 for errors, 0.3 for retries, 0.2 for taking long and 0.1 for scope violations."""
    if not outcome.success:
        return 0.0
    penalty = 0.1 * min(outcome.error_count, 5)
    penalty += 0.1 * min(outcome.retry_count, 3)
    penalty += min(0.2, outcome.duration_seconds / 3600 / 10)
    penalty += 0.1 if outcome.scope_violations else 0.0
    return max(0.2, 1.0 - penalty)


@dataclass
class Tally:
    """Decayed, similarity-weighted successes and failures."""

    successes: float = 0.0
    failures: float = 0.0

    def add(self, weight: float, quality: float) -> None:
        self.successes += weight * quality
        self.failures += weight * (1.0 - quality)

    @property
    def total(self) -> float:
        return self.successes + self.failures

    @property
    def rate(self) -> float:
        return self.successes / self.total if self.total else 0.0


def maturity(tally: Tally) -> str:
    """candidate -> established -> proven; deprecated when it keeps failing.

    The amount of evidence is counted as it is shown, to one decimal: three recent
    outcomes are 3.0 observations, not the 2.98 their decay leaves.
    """
    total = round(tally.total, 1)
    if total >= 3 and tally.rate < 0.3:
        return "deprecated"
    if total >= 8 and tally.rate >= 0.8:
        return "proven"
    if total >= 3 and tally.rate >= 0.6:
        return "established"
    return "candidate"


# ------------------------------------------------------------------ selection


def keyword_prior(task: str) -> dict[str, float]:
    """A prior success rate per strategy from the task's wording (0.35-0.75)."""
    words = tokens(task)
    hits = {
        name: len(words & {_stem(k) for k in strategy.keywords})
        for name, strategy in STRATEGIES.items()
    }
    top = max(hits.values())
    if top == 0:
        return {name: 0.5 if name == DEFAULT_STRATEGY else 0.45 for name in STRATEGIES}
    return {name: 0.35 + 0.4 * count / top for name, count in hits.items()}


def select_strategy(
    ws: Workspace,
    *,
    task: str,
    context: str | None = None,
    codebase_context: str | None = None,
    outcomes: list[Outcome] | None = None,
    now: datetime | None = None,
) -> StrategyChoice:
    """The strategy to decompose ``task`` with, from keywords and similar past outcomes.

    ``context`` and ``codebase_context`` (the seed's name) both add to the wording.
    """
    extra = " ".join(part for part in (context, codebase_context) if part)
    text = _check_task(task) + (" " + extra if extra else "")
    now = now or utc_now()
    history = outcomes if outcomes is not None else load_outcomes(ws)
    prior = keyword_prior(text)
    tallies, precedents = _evidence(text, history, now, _epic_texts(ws, history))
    scores = [_score(name, prior[name], tallies.get(name, Tally())) for name in STRATEGIES]
    scores.sort(key=lambda s: (-s.score, s.strategy != DEFAULT_STRATEGY, s.strategy))
    best = scores[0]
    keyword_best = max(STRATEGIES, key=lambda n: (prior[n], n == DEFAULT_STRATEGY))
    return StrategyChoice(
        strategy=best.strategy,
        confidence=_confidence(scores),
        reasoning=_reasoning(best, keyword_best, tallies, len(precedents)),
        score=best,
        alternatives=scores[1:],
        precedents=precedents[:10],
    )


def swarm_select_strategy(
    ws: Workspace, *, task: str, codebase_context: str | None = None
) -> StrategyChoice:
    """The seed's ``swarm_select_strategy(task, codebase_context?)``."""
    return select_strategy(ws, task=task, codebase_context=codebase_context)


def _epic_texts(ws: Workspace, history: list[Outcome]) -> dict[str, str]:
    """Title and description of the epics of outcomes that did not store their epic's title."""
    wanted = {o.epic_id for o in history if o.epic_id and o.epic_title is None}
    if not wanted:
        return {}
    try:
        index = ws.cells()
    except HiveError:
        return {}
    return {
        epic_id: f"{index.cells[epic_id].title} {index.cells[epic_id].description[:300]}"
        for epic_id in wanted
        if epic_id in index.cells
    }


def _check_task(task: str) -> str:
    cleaned = (task or "").strip()
    if not cleaned:
        raise InvalidInput("task must not be empty")
    if len(cleaned) > MAX_TASK:
        raise InvalidInput(f"task is too long ({len(cleaned)} > {MAX_TASK} characters)")
    return cleaned


def _evidence(
    text: str, history: Iterable[Outcome], now: datetime, epic_texts: dict[str, str] | None = None
) -> tuple[dict[str, Tally], list[Precedent]]:
    """Similar past outcomes, by strategy. A past outcome is similar when its subtask
    (title, summary) or its epic (the epic-level task) resembles ``text``."""
    wanted = tokens(text)
    epics = epic_texts or {}
    tallies: dict[str, Tally] = {}
    precedents: list[Precedent] = []
    for outcome in history:
        if outcome.strategy not in STRATEGIES:
            continue
        epic_text = outcome.epic_title or epics.get(outcome.epic_id or "", "")
        sim = max(
            similarity(wanted, tokens(outcome.title + " " + outcome.summary[:200])),
            similarity(wanted, tokens(epic_text)) if epic_text else 0.0,
        )
        if sim < MIN_SIMILARITY:
            continue
        weight = sim * decay(outcome.recorded_at, now)
        tallies.setdefault(outcome.strategy, Tally()).add(weight, outcome_quality(outcome))
        precedents.append(
            Precedent(
                cell_id=outcome.cell_id,
                title=outcome.title,
                strategy=outcome.strategy,
                success=outcome.success,
                similarity=round(sim, 3),
                age_days=round((now - outcome.recorded_at).total_seconds() / 86_400, 1),
            )
        )
    precedents.sort(key=lambda p: (-p.similarity, p.age_days))
    return tallies, precedents


def _score(name: str, prior: float, tally: Tally) -> StrategyScore:
    alpha = PRIOR_STRENGTH * prior + tally.successes
    beta = PRIOR_STRENGTH * (1 - prior) + tally.failures
    return StrategyScore(
        strategy=name,
        score=round(alpha / (alpha + beta), 4),
        prior=round(prior, 4),
        evidence=round(tally.rate, 4) if tally.total else 0.0,
        weight=round(tally.total, 3),
    )


def _confidence(scores: list[StrategyScore]) -> float:
    """Margin over the runner-up, capped by how much evidence there is: wording alone
    gives at most 0.6; about five weighted similar outcomes are needed for 0.95."""
    margin = scores[0].score - scores[1].score
    evidence = min(sum(s.weight for s in scores), 5.0) / 5.0
    cap = 0.6 + 0.35 * evidence
    return round(min(cap, 0.4 + margin * 1.5 + 0.25 * evidence), 2)


def _reasoning(
    best: StrategyScore, keyword_best: str, tallies: dict[str, Tally], precedent_count: int
) -> str:
    if not precedent_count:
        return (
            f"No similar past work in this repository; the task's wording suggests {best.strategy}."
        )
    tally = tallies.get(best.strategy, Tally())
    text = (
        f"{precedent_count} similar past subtask(s) found; {best.strategy} succeeded at a "
        f"weighted rate of {tally.rate:.0%} over {tally.total:.1f} decayed observations."
    )
    if keyword_best != best.strategy:
        other = tallies.get(keyword_best, Tally())
        text += (
            f" The wording suggests {keyword_best}, but its similar past work succeeded at only "
            f"{other.rate:.0%}, so evidence overrides the keywords."
        )
    return text


# ------------------------------------------------------------------ patterns & insights


def pattern_stats(outcomes: Iterable[Outcome], now: datetime | None = None) -> list[PatternStat]:
    """Maturity of each (strategy, task kind) pattern."""
    now = now or utc_now()
    tallies: dict[tuple[str, str], Tally] = {}
    for outcome in outcomes:
        if not outcome.strategy:
            continue
        key = (outcome.strategy, task_kind(outcome.title))
        tallies.setdefault(key, Tally()).add(
            decay(outcome.recorded_at, now), outcome_quality(outcome)
        )
    return [
        PatternStat(
            strategy=strategy,
            kind=kind,
            maturity=maturity(tally),
            successes=round(tally.successes, 3),
            failures=round(tally.failures, 3),
            score=round(tally.rate, 3),
        )
        for (strategy, kind), tally in sorted(tallies.items())
    ]


def anti_patterns(outcomes: list[Outcome], now: datetime | None = None) -> list[str]:
    """Lessons from repeated failures, phrased for the next decomposition prompt."""
    lessons = [
        f"Avoid {p.strategy} for {p.kind} tasks: {p.failures:.1f} of "
        f"{p.successes + p.failures:.1f} recent weighted attempts failed."
        for p in pattern_stats(outcomes, now)
        if p.maturity == "deprecated" or (p.failures >= 2 and p.score < 0.5)
    ]
    violators = [o for o in outcomes if o.scope_violations]
    if len(violators) >= 2:
        lessons.append(
            f"{len(violators)} past subtasks touched files outside their files_owned: "
            "list every file a subtask will edit."
        )
    return lessons


def insights(ws: Workspace, *, now: datetime | None = None) -> Insights:
    """Per-strategy success over time, pattern maturity and anti-patterns."""
    now = now or utc_now()
    outcomes = load_outcomes(ws)
    per_strategy: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        per_strategy.setdefault(outcome.strategy or "unknown", []).append(outcome)
    strategies = [
        _strategy_insight(name, items, now) for name, items in sorted(per_strategy.items())
    ]
    return Insights(
        strategies=strategies,
        patterns=pattern_stats(outcomes, now),
        anti_patterns=anti_patterns(outcomes, now),
    )


def _strategy_insight(name: str, items: list[Outcome], now: datetime) -> StrategyInsight:
    tally = Tally()
    months: dict[str, list[bool]] = {}
    for outcome in items:
        tally.add(decay(outcome.recorded_at, now), outcome_quality(outcome))
        months.setdefault(outcome.recorded_at.strftime("%Y-%m"), []).append(outcome.success)
    successes = sum(1 for o in items if o.success)
    return StrategyInsight(
        strategy=name,
        total=len(items),
        successes=successes,
        success_rate=round(successes / len(items), 3),
        decayed_score=round(tally.rate, 3),
        by_month={
            month: {"count": len(flags), "success_rate": round(sum(flags) / len(flags), 3)}
            for month, flags in sorted(months.items())
        },
    )
