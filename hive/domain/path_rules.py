"""Path rules from the ``tools.permissions`` section of ``.hive/config.yaml``.

``permissions``: agent (or ``*``) -> tool (or ``*``) -> ``allowed_paths`` /
``denied_paths``. The deny lists of every matching scope apply (union); the
most specific allowlist (agent+tool, agent+*, *+tool, *+*) alone decides what
is allowed. The tool surfaces check every call's paths; the domain applies the
same rules where no tool is involved: the pre-commit hook (as the pseudo-tool
``git_commit``) and reservations (``swarmmail_reserve``, see
:func:`pattern_only_denied`).

Where the file system ignores case (git's ``core.ignorecase``: ``fold_case``), a rule
and a path are compared case folded as reservations are (``globs.path_matches``,
``foldcase.fold``): ``SECRETS/x`` is ``secrets/x`` there, so ``secrets/**`` denies it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hive.domain.globs import (
    case_folded,
    normalize_pattern,
    path_matches,
    patterns_meet,
    sample_paths,
)
from hive.errors import HiveError, InvalidInput, PermissionDenied

TYPE_CHECKING = False  # the models are imported only to parse a section (the quick hook)
if TYPE_CHECKING:
    from hive.models.tools_config import ToolsConfig

GLOB_CHARS = re.compile(r"[*?\[{]")
ANY = "*"
COMMIT_TOOL = "git_commit"  # whose tools.permissions rules apply to an agent's commits
Permissions = dict[str, dict[str, dict[str, list[str]]]]
Scope = tuple[str, dict[str, list[str]]]


class PathPermissionDenied(PermissionDenied):
    """A path the caller's ``tools.permissions`` rules do not let it touch."""


def parse_permissions(config: ToolsConfig) -> Permissions:
    parsed: Permissions = {}
    for agent, tools in config.permissions.items():
        for tool, rules in tools.items():
            entry = {
                key: _patterns(getattr(rules, key), f"tools.permissions.{agent}.{tool}.{key}")
                for key in ("allowed_paths", "denied_paths")
            }
            parsed.setdefault(agent, {})[tool] = entry
    return parsed


def permissions_from_config(tools_section: object) -> Permissions:
    """The parsed rules of a ``tools:`` section (InvalidInput naming a bad key)."""
    from hive.models.tools_config import parse_tools_config

    return parse_permissions(parse_tools_config(tools_section))


def _patterns(patterns: list[str], key: str) -> list[str]:
    try:
        return [normalize_pattern(pattern) for pattern in patterns]
    except HiveError as exc:
        raise InvalidInput(f".hive/config.yaml: {key}: {exc.message}", key=key) from None


def check_paths(
    permissions: Permissions, agent: str, tool: str, paths: list[str], *, fold_case: bool = False
) -> None:
    """Raise PathPermissionDenied for the first path ``agent`` may not touch with ``tool``
    (``fold_case``: compared case folded, see the module's doc)."""
    rules = scopes(permissions, agent, tool)
    denies, allows = _touching(fold_case), _within(fold_case)
    for path in paths if rules else []:
        _check(rules, path, path, TOOL_WORDING, denies=denies, allows=allows, tool=tool)


def check_directories(
    permissions: Permissions,
    agent: str,
    tool: str,
    directories: list[str],
    *,
    fold_case: bool = False,
) -> None:
    """A directory to list or search is refused only when a deny rule covers all of
    it, or no allowed pattern lies in or above it (a directory above an allowed
    pattern is fine: its listing shows only the allowed files)."""
    rules = scopes(permissions, agent, tool)
    for given in directories if rules else []:
        inside = _everything_in(given)
        shown = "./" if inside == "**" else inside[:-2]
        _check(
            rules,
            shown,
            inside,
            TOOL_WORDING,
            denies=_within(fold_case),
            allows=lambda rule, probe: patterns_meet(rule, probe, fold_case),
            tool=tool,
        )


# how a refusal reads: (denied by a rule, not in the allowlist in force); the fields
# are the scope's ``name``, the deny pattern ``hit``, the ``allowed`` patterns, ``shown``
# (what was asked for) and the caller's own
TOOL_WORDING = (
    "{tool} may not touch {shown}: denied by tools.permissions.{name}.denied_paths {hit!r}",
    "{tool} may not touch {shown}: not in tools.permissions.{name}.allowed_paths ({allowed})",
)
PATTERN_WORDING = (
    "{shown} names only files denied to {agent} by tools.permissions.{name}.denied_paths {hit!r}",
    "{shown} names no file {agent} may touch: tools.permissions.{name}.allowed_paths is {allowed}",
)


def _check(
    rules: list[Scope],
    shown: str,
    probe: str,
    wording: tuple[str, str],
    *,
    denies: Callable[[str, str], bool],
    allows: Callable[[str, str], bool],
    **fields: str,
) -> None:
    """Refuse ``probe`` (reported as ``shown``) when a deny rule ``denies`` it, or the
    most specific allowlist has no pattern that ``allows`` it."""
    for name, rule in rules:
        hit = next((p for p in rule["denied_paths"] if denies(p, probe)), None)
        if hit is not None:
            raise PathPermissionDenied(
                wording[0].format(name=name, hit=hit, shown=shown, **fields),
                path=shown,
                rule=f"{name}.denied_paths: {hit}",
            )
    allowlist = _allowlist(rules)
    if allowlist is not None and not any(allows(p, probe) for p in allowlist[1]):
        name, allowed = allowlist
        raise PathPermissionDenied(
            wording[1].format(name=name, allowed=", ".join(allowed), shown=shown, **fields),
            path=shown,
            rule=f"{name}.allowed_paths",
        )


def _everything_in(directory: str) -> str:
    if directory in ("", ".", "**") or directory.endswith("/**"):
        return directory if directory.endswith("**") else "**"
    return f"{directory.rstrip('/')}/**"


def pattern_only_denied(
    permissions: Permissions, agent: str, tool: str, pattern: str, *, fold_case: bool = False
) -> None:
    """Refuse a reservation ``pattern`` that names only files ``agent`` may not touch.

    A pattern that merely *could* contain denied files (``src/auth/**`` under a
    ``**/.env*`` rule) passes: the denied files inside it stay denied one by one
    (file tools, pre-commit hook). Refused: every sample path of the pattern is
    denied, or an allowlist is in force and no allowed pattern meets it.
    """
    rules = scopes(permissions, agent, tool)
    if not rules:
        return
    samples = sample_paths(pattern)

    def names_only(denied: str, _: str) -> bool:
        return bool(samples) and all(path_matches(denied, path, fold_case) for path in samples)

    _check(
        rules,
        pattern,
        pattern,
        PATTERN_WORDING,
        denies=names_only,
        allows=_touching(fold_case),
        agent=agent,
    )


def _allowlist(rules: list[Scope]) -> tuple[str, list[str]] | None:
    """The most specific scope with an ``allowed_paths`` list (it alone decides)."""
    return next(
        ((name, rule["allowed_paths"]) for name, rule in rules if rule["allowed_paths"]), None
    )


def has_rules(permissions: Permissions, agent: str, tool: str) -> bool:
    return bool(scopes(permissions, agent, tool))


def scopes(permissions: Permissions, agent: str, tool: str) -> list[Scope]:
    """The rule sets in force, most specific first."""
    order = [(agent, tool), (agent, ANY), (ANY, tool), (ANY, ANY)]
    found: list[Scope] = []
    for who, which in dict.fromkeys(order):
        rule = permissions.get(who, {}).get(which)
        if rule is not None:
            found.append((f"{who}.{which}", rule))
    return found


def _touching(fold_case: bool) -> Callable[[str, str], bool]:
    """Whether a requested path (or glob) touches a rule: some file matches both."""

    def touches(rule: str, path: str) -> bool:
        if GLOB_CHARS.search(path):
            return patterns_meet(rule, path, fold_case)
        return path_matches(rule, path, fold_case)

    return touches


def _within(fold_case: bool) -> Callable[[str, str], bool]:
    """Whether a requested path lies inside an allowed rule (a glob request must be
    contained)."""

    def inside(rule: str, path: str) -> bool:
        if not GLOB_CHARS.search(path):
            return path_matches(rule, path, fold_case)
        if fold_case:
            rule, path = case_folded(rule), case_folded(path)
        if rule == path:
            return True
        return rule.endswith("/**") and path.startswith(rule[:-2])

    return inside
