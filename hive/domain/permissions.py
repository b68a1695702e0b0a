"""Permission grants for protected resources (seed 003's ``request_permission``).

A policy in the committed ``.hive/config.yaml`` (``permission_policy:``, see
``hive.models.policy``) decides each request: the first rule matching the agent,
the resource and the scope grants (for ``ttl_seconds``) or denies; with no match
the ``default`` decides, and a justification shorter than ``min_justification``
is denied. Every decision, grant or denial, is committed as
``.hive/permissions/<id>.yaml`` with who asked, for what, why, when and until
when: reviewers see them in the history like any other hive record.

A grant is *live* until it expires. ``delegate_task(requiresAuth=true)`` and the
tools listed under ``protected_tools`` are refused without a live grant.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from fnmatch import fnmatchcase
from typing import Any

from pydantic import ValidationError

from hive.domain.config_sections import parsed_section
from hive.domain.limits import check_short, check_text
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile, InvalidInput, PermissionDenied
from hive.git.repo import Change, Snapshot, format_message
from hive.models.cell import Cell, utc_now
from hive.models.policy import RESOURCES, PermissionPolicy, PolicyRule, parse_policy
from hive.models.seeds import PermissionAnswer, PermissionDecision
from hive.store import layout
from hive.store.yamlio import dumps, load_mapping
from hive.times import to_milliseconds

PERMISSIONS_DIR = layout.PERMISSIONS_DIR
MAX_JUSTIFICATION = 2000
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_BLOB_CACHE = "permission_blobs"


class AuthRequired(PermissionDenied):
    """A protected tool or task needs a live grant the agent does not hold."""

    code = "auth_required"


def decision_path(decision_id: str) -> str:
    return f"{PERMISSIONS_DIR}/{decision_id}.yaml"


def policy(ws: Workspace, snap: Snapshot | None = None) -> PermissionPolicy:
    return parsed_section(ws, "permission_policy", parse_policy, snap)


def encode_decision(decision: PermissionDecision) -> bytes:
    from hive.store.cells import format_time

    document: dict[str, Any] = decision.model_dump(mode="json", exclude_none=True)
    document["decided_at"] = format_time(decision.decided_at)
    if decision.expires_at is not None:
        document["expires_at"] = format_time(decision.expires_at)
    return dumps(document).encode("utf-8")


def decode_decision(content: bytes, path: str) -> PermissionDecision:
    mapping = load_mapping(content.decode("utf-8", errors="replace"), path)
    try:
        decision = PermissionDecision.model_validate(mapping)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise CorruptFile(f"{path}: invalid field {where!r}: {error['msg']}", path=path) from None
    if decision_path(decision.id) != path:
        raise CorruptFile(f"{path}: holds decision {decision.id!r}", path=path)
    return decision


def _rule_matches(rule: PolicyRule, agent: str, resource: str, scope: str | None) -> bool:
    if not fnmatchcase(agent, rule.agent) or rule.resource not in ("*", resource):
        return False
    if rule.scopes is None:
        return True
    return scope is not None and any(fnmatchcase(scope, pattern) for pattern in rule.scopes)


def decide(
    rules: PermissionPolicy, agent: str, resource: str, scope: str | None, justification: str
) -> tuple[bool, str, str, float | None]:
    """(granted, reason, which rule, ttl seconds) for one request."""
    if len(justification.strip()) < rules.min_justification:
        return (
            False,
            f"justification is too short (at least {rules.min_justification}"
            " characters, specific to the task)",
            "min_justification",
            None,
        )
    for number, rule in enumerate(rules.rules):
        if _rule_matches(rule, agent, resource, scope):
            granted = rule.decision == "grant"
            reason = rule.reason or f"{'granted' if granted else 'denied'} by rule {number}"
            return granted, reason, f"rules.{number}", rule.ttl_seconds or rules.ttl_seconds
    granted = rules.default == "grant"
    return granted, f"{'granted' if granted else 'denied'} by default", "default", rules.ttl_seconds


def request_permission(
    ws: Workspace, *, resource_type: str, justification: str, scope: str | None = None
) -> PermissionAnswer:
    """Decide by the policy and commit the decision (one commit)."""
    _check_request(resource_type, justification, scope)
    agent = ws.actor
    decision_id = "pm-" + "".join(secrets.choice(_ALPHABET) for _ in range(10))

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        rules = policy(ws, snap)
        decision = _decision(decision_id, rules, agent, resource_type, scope, justification)
        message = _decision_message(ws, decision)
        change = Change(decision_path(decision_id), encode_decision(decision))
        return [change], message, decision

    decision: PermissionDecision = ws.write_files(plan).result
    return PermissionAnswer(
        granted=decision.granted,
        grant_token=decision.id if decision.granted else None,
        resource_type=resource_type,
        scope=scope,
        reason=decision.reason,
        expires_at=decision.expires_at,
        decision_id=decision.id,
    )


def _decision(
    decision_id: str,
    rules: PermissionPolicy,
    agent: str,
    resource_type: str,
    scope: str | None,
    justification: str,
) -> PermissionDecision:
    """The policy's decision on the request, granted for the rule's time (if any) from now."""
    granted, reason, rule, ttl = decide(rules, agent, resource_type, scope, justification)
    now = utc_now()
    return PermissionDecision(
        id=decision_id,
        agent=agent,
        resource_type=resource_type,
        scope=scope,
        justification=justification,
        granted=granted,
        reason=reason,
        rule=rule,
        decided_at=now,
        expires_at=to_milliseconds(now + timedelta(seconds=ttl)) if granted and ttl else None,
    )


def _check_request(resource_type: str, justification: str, scope: str | None) -> None:
    """A known resource type, a justification of 1 to MAX_JUSTIFICATION characters, and
    texts a person may read (``hive permissions list``; the scope is in the commit
    subject too)."""
    if resource_type not in RESOURCES:
        raise InvalidInput(
            f"resourceType must be one of {', '.join(RESOURCES)}, got {resource_type!r}",
            field="resourceType",
        )
    if not justification.strip() or len(justification) > MAX_JUSTIFICATION:
        raise InvalidInput(
            f"justification must be 1-{MAX_JUSTIFICATION} characters", field="justification"
        )
    check_text(justification, "justification", limit=MAX_JUSTIFICATION)
    if scope is not None:
        check_short(scope, "scope")


def _decision_message(ws: Workspace, decision: PermissionDecision) -> str:
    """The commit message of a grant or a denial."""
    verb = "grant" if decision.granted else "deny"
    scope = f" {decision.scope}" if decision.scope else ""
    return format_message(
        f"hive: {verb} {decision.resource_type}{scope} to {decision.agent}",
        [*ws.trailers(f"permission-{verb}"), ("Hive-Permission", decision.id)],
    )


def list_decisions(ws: Workspace, snap: Snapshot | None = None) -> list[PermissionDecision]:
    """Every readable decision, oldest first (parsed once per blob)."""
    snap = snap or ws.snapshot()
    cache: dict[str, PermissionDecision | None] = ws.state.setdefault(_BLOB_CACHE, {})
    found = []
    for path, sha in snap.listing(PERMISSIONS_DIR).items():
        if sha not in cache:
            try:
                cache[sha] = decode_decision(ws.git.read_blob(sha), path)
            except CorruptFile:
                cache[sha] = None
        if cache[sha] is not None:
            found.append(cache[sha])
    return sorted((d for d in found if d is not None), key=lambda d: (d.decided_at, d.id))


def live_grants(
    ws: Workspace, *, agent: str | None = None, resource: str | None = None
) -> list[PermissionDecision]:
    now = utc_now()
    return [
        d
        for d in list_decisions(ws)
        if d.live(now) and agent in (None, d.agent) and resource in (None, "*", d.resource_type)
    ]


def require_grant(ws: Workspace, *, agent: str, resource: str | None, what: str) -> None:
    """Refuse ``what`` unless ``agent`` holds a live grant (of ``resource``; any if None)."""
    if live_grants(ws, agent=agent, resource=resource):
        return
    needed = f"live {resource} grant" if resource and resource != "*" else "live grant"
    raise AuthRequired(
        f"{what} requires auth: {agent} holds no {needed}; call request_permission first",
        agent=agent,
        resource=resource,
    )


def require_task_grant(ws: Workspace, cell: Cell, actor: str) -> None:
    """A task delegated with ``requiresAuth`` starts only under a live grant (of its
    ``resourceType``, when it names one) held by the agent starting it or by the agent
    who delegated it: a grant that expired since the delegation no longer covers it."""
    if cell.metadata.get("requires_auth") is not True:
        return
    named = cell.metadata.get("resource_type")
    resource = named if isinstance(named, str) else None
    delegator = cell.metadata.get("delegated_by")
    holders = [actor] + ([delegator] if isinstance(delegator, str) else [])
    if any(live_grants(ws, agent=holder, resource=resource) for holder in holders):
        return
    require_grant(ws, agent=actor, resource=resource, what=f"starting {cell.id}")


def protected_resource(ws: Workspace, tool: str) -> str | None:
    """The resource a tool is protected by (``permission_policy.protected_tools``)."""
    return policy(ws).protected_tools.get(tool)
