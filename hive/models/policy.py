"""``permission_policy:`` in ``.hive/config.yaml``: who may use which protected
resource (seed 003's ``request_permission``), parsed strictly.

    permission_policy:
      default: deny                 # grant|deny when no rule matches
      ttl_seconds: 3600             # lifetime of a grant unless the rule says otherwise
      min_justification: 10         # characters a justification needs
      rules:                        # first match decides
        - {agent: data_analyst, resource: DATABASE, scopes: ["read:*"], ttl_seconds: 600}
        - {agent: "*", resource: PAYMENTS, decision: deny}
      protected_tools:              # tool -> resource: refused without a live grant
        fs_write: FILE_EXPORT
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from hive.errors import InvalidInput
from hive.models.base import HiveModel

RESOURCES = ("DATABASE", "PAYMENTS", "EMAIL", "FILE_EXPORT")
Resource = Literal["DATABASE", "PAYMENTS", "EMAIL", "FILE_EXPORT"]


class _Strict(HiveModel):
    model_config = ConfigDict(extra="forbid")


class PolicyRule(_Strict):
    agent: str = "*"
    resource: Resource | Literal["*"] = "*"
    scopes: list[str] | None = None  # fnmatch patterns; None: any scope (or none)
    decision: Literal["grant", "deny"] = "grant"
    ttl_seconds: float | None = Field(default=None, gt=0)
    reason: str = ""


class PermissionPolicy(_Strict):
    default: Literal["grant", "deny"] = "deny"
    ttl_seconds: float = Field(default=3600, gt=0)
    min_justification: int = Field(default=10, ge=0, le=10_000)
    rules: list[PolicyRule] = Field(default_factory=list)
    protected_tools: dict[str, Resource | Literal["*"]] = Field(default_factory=dict)


def parse_policy(raw: Any) -> PermissionPolicy:
    """The parsed section; InvalidInput naming the key when anything is wrong."""
    if raw is None:
        return PermissionPolicy()
    if not isinstance(raw, dict):
        raise InvalidInput(
            ".hive/config.yaml: 'permission_policy' must be a mapping", key="permission_policy"
        )
    try:
        return PermissionPolicy.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(["permission_policy", *(str(part) for part in error["loc"])])
        raise InvalidInput(f".hive/config.yaml: {key}: {error['msg']}", key=key) from None
