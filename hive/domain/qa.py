"""The QA harness (seed 003's ``run_qa_harness``): score blackboard-style entries,
flag contradictions between agents, and compare with the previous run.

Scoring (each entry starts at 1.0; the score is clamped to 0..1):

- an empty value (null, "", [], {}) scores 0;
- a string: shorter than 3 characters -0.4; placeholder text (TODO, TBD, FIXME,
  lorem ipsum, placeholder, N/A, undefined) -0.4;
- an object: reports failure (``ok: false``, or a non-empty ``error``/``errors``)
  -0.5; ``confidence`` below 0.5 -0.3, outside 0..1 -0.2; each empty field -0.1
  (at most -0.3); under an ``Agent.task`` key, an object that breaks the findings
  convention -0.3;
- a list with null items -0.1;
- more than 100 KB of JSON -0.2.

An entry passes when its score reaches its ``minScore`` (else
``qualityThreshold``) and it contradicts nobody. A contradiction is two or more
agents writing different values for the same key: every entry involved is flagged
and fails. Each run is stored (in the local coordination store) and compared with
the previous one: which scenario ids regressed (passed, now fail), improved, are
new or missing, and how the pass rate moved.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any

from hive.domain.context import finding_problem, state_dir
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.models.seeds import QaHistoryEntry, QaRun, QaScenarioResult
from hive.store import coord_db

MAX_SCENARIOS = 1000
LARGE_BYTES = 100_000
_PLACEHOLDER = re.compile(
    r"\b(todo|tbd|fixme|lorem ipsum|placeholder|undefined)\b|(^|\s)n/a($|\s)", re.I
)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def score_entry(key: str, value: Any) -> tuple[float, list[str]]:
    """(score, issues) of one entry by the rules in the module docstring."""
    if _empty(value):
        return 0.0, ["empty value"]
    score = 1.0
    issues: list[str] = []

    def minus(points: float, issue: str) -> None:
        nonlocal score
        score -= points
        issues.append(issue)

    if isinstance(value, str):
        if len(value.strip()) < 3:
            minus(0.4, "too short")
        if _PLACEHOLDER.search(value):
            minus(0.4, "placeholder text")
    elif isinstance(value, dict):
        _score_object(key, value, minus)
    elif isinstance(value, list) and any(item is None for item in value):
        minus(0.1, "null items")
    if len(json.dumps(value, default=str)) > LARGE_BYTES:
        minus(0.2, "very large (over 100 KB)")
    return round(min(1.0, max(0.0, score)), 3), issues


def _score_object(key: str, value: dict[str, Any], minus: Any) -> None:
    if (
        value.get("ok") is False
        or not _empty(value.get("error"))
        or not _empty(value.get("errors"))
    ):
        minus(0.5, "reports a failure")
    confidence = value.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        if not 0 <= confidence <= 1:
            minus(0.2, "confidence outside 0..1")
        elif confidence < 0.5:
            minus(0.3, "low confidence")
    empty = [
        name for name, item in value.items() if _empty(item) and name not in ("error", "errors")
    ]
    if empty:
        minus(min(0.3, 0.1 * len(empty)), f"empty fields: {', '.join(sorted(empty))}")
    problem = finding_problem(key, value)
    if problem is not None:
        minus(0.3, f"not a valid finding: {problem}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def contradictions(scenarios: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keys for which different agents wrote different values."""
    by_key: dict[str, dict[str, Any]] = {}
    for scenario in scenarios:
        by_key.setdefault(scenario["key"], {}).setdefault(scenario["sourceAgent"], [])
        by_key[scenario["key"]][scenario["sourceAgent"]].append(scenario["value"])
    found = []
    for key, agents in sorted(by_key.items()):
        distinct = {_canonical(v) for values in agents.values() for v in values}
        if len(agents) > 1 and len(distinct) > 1:
            found.append(
                {
                    "key": key,
                    "agents": sorted(agents),
                    "values": {agent: values[-1] for agent, values in agents.items()},
                }
            )
    return found


def _check_scenario(number: int, scenario: Any) -> None:
    where = f"scenarios.{number}"
    if not isinstance(scenario, dict):
        raise InvalidInput(f"{where} must be an object", field=where)
    missing = [k for k in ("id", "key", "value", "sourceAgent") if k not in scenario]
    if missing:
        raise InvalidInput(f"{where} lacks {', '.join(missing)}", field=where)
    for name in ("id", "key", "sourceAgent"):
        if not isinstance(scenario[name], str) or not scenario[name]:
            raise InvalidInput(f"{where}.{name} must be a non-empty string", field=where)
    minimum = scenario.get("minScore")
    if minimum is not None and (
        isinstance(minimum, bool) or not isinstance(minimum, int | float) or not 0 <= minimum <= 1
    ):
        raise InvalidInput(f"{where}.minScore must be a number from 0 to 1", field=where)
    try:  # Python's JSON reader takes NaN and Infinity, which are no JSON values
        json.dumps(scenario["value"], allow_nan=False)
    except ValueError:
        raise InvalidInput(f"{where}.value is not JSON (NaN or Infinity)", field=where) from None


def run_qa_harness(
    ws: Workspace, *, scenarios: Sequence[dict[str, Any]], quality_threshold: float = 0.7
) -> QaRun:
    if not 0 <= quality_threshold <= 1:
        raise InvalidInput("qualityThreshold must be between 0 and 1", field="qualityThreshold")
    if not 1 <= len(scenarios) <= MAX_SCENARIOS:
        raise InvalidInput(f"give 1-{MAX_SCENARIOS} scenarios", field="scenarios")
    for number, scenario in enumerate(scenarios):
        _check_scenario(number, scenario)
    ids = [s["id"] for s in scenarios]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise InvalidInput(f"scenario id {duplicate!r} is given twice", field="scenarios")
    flagged = contradictions(scenarios)
    contested = {c["key"] for c in flagged}
    results = []
    for scenario in scenarios:
        score, issues = score_entry(scenario["key"], scenario["value"])
        minimum = scenario.get("minScore")
        threshold = quality_threshold if minimum is None else float(minimum)
        contradiction = scenario["key"] in contested
        if contradiction:
            issues.append("contradicts another agent's value for this key")
        results.append(
            QaScenarioResult(
                id=scenario["id"],
                key=scenario["key"],
                source_agent=scenario["sourceAgent"],
                score=score,
                threshold=threshold,
                passed=score >= threshold and not contradiction,
                issues=issues,
                contradiction=contradiction,
            )
        )
    passed = sum(1 for r in results if r.passed)
    rate = round(passed / len(results), 4)
    run_id, regression = _store_and_compare(ws, results, rate)
    return QaRun(
        total=len(results),
        passed=passed,
        failed=len(results) - passed,
        pass_rate=rate,
        quality_threshold=quality_threshold,
        results=results,
        contradictions=flagged,
        regression=regression,
        run_id=run_id,
    )


def _store_and_compare(
    ws: Workspace, results: list[QaScenarioResult], rate: float
) -> tuple[int, dict[str, Any]]:
    snapshot = {
        "passRate": rate,
        "scenarios": {r.id: {"score": r.score, "passed": r.passed} for r in results},
    }
    with coord_db.write(state_dir(ws)) as db:
        row = db.execute("SELECT seq, ran_at, snapshot FROM qa_runs ORDER BY seq DESC LIMIT 1")
        previous = row.fetchone()
        cursor = db.execute(
            "INSERT INTO qa_runs (ran_at, agent, snapshot) VALUES (?, ?, ?)",
            (time.time(), ws.actor, json.dumps(snapshot)),
        )
        run_id = int(cursor.lastrowid or 0)
    if previous is None:
        return run_id, {"previousRunId": None}
    seq, ran_at, stored = previous
    before = json.loads(stored)
    old = before["scenarios"]
    now = snapshot["scenarios"]
    assert isinstance(now, dict)
    both = [i for i in now if i in old]
    return run_id, {
        "previousRunId": seq,
        "previousRunAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ran_at)),
        "previousPassRate": before["passRate"],
        "passRateDelta": round(rate - before["passRate"], 4),
        "regressed": [i for i in both if old[i]["passed"] and not now[i]["passed"]],
        "improved": [i for i in both if not old[i]["passed"] and now[i]["passed"]],
        "scoreDeltas": {
            i: round(now[i]["score"] - old[i]["score"], 3)
            for i in both
            if now[i]["score"] != old[i]["score"]
        },
        "new": [i for i in now if i not in old],
        "missing": [i for i in old if i not in now],
    }


def qa_history(ws: Workspace, *, limit: int = 20) -> list[QaHistoryEntry]:
    """The last runs, newest first (for ``hive qa history``)."""
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute(
            "SELECT seq, ran_at, agent, snapshot FROM qa_runs ORDER BY seq DESC LIMIT ?", (limit,)
        ).fetchall()
    found = []
    for seq, ran_at, agent, snap in rows:
        stored = json.loads(snap)
        found.append(
            QaHistoryEntry(
                run_id=seq,
                ran_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ran_at)),
                agent=agent,
                pass_rate=stored["passRate"],
                scenarios=len(stored["scenarios"]),
            )
        )
    return found
