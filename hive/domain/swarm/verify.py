"""swarm_complete's verification gate settings (``verify:`` of .hive/config.yaml), read
and checked apart from the gate itself so that ``hive doctor`` checks them without
importing the swarm's models."""

from __future__ import annotations

from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.models.config import VerifySettings

VERIFY_FORM = (
    "verify: takes commands: (a list of shell commands; {files} is replaced by the"
    " touched files) and timeout_seconds: (a number)"
)


def verify_settings(ws: Workspace) -> VerifySettings:
    """``verify:`` of .hive/config.yaml, checked: a malformed entry is an error naming
    its line (``.hive/config.yaml:7: invalid verify.commands.0: ...``)."""
    from pydantic import ValidationError

    from hive.domain.config_sections import config_line
    from hive.models.cell import first_error
    from hive.store.layout import CONFIG_PATH

    raw = ws.config().extra_settings().get("verify")
    try:
        return VerifySettings.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        _, why = first_error(exc)
        if not isinstance(raw, dict):  # not pydantic's "... or instance of VerifySettings"
            why = f"a mapping is expected, not {type(raw).__name__}"
        loc = ["verify", *(str(part) for part in exc.errors()[0]["loc"])]
        line = config_line(ws, loc)
        field = ".".join(loc)
        raise InvalidInput(
            f"{CONFIG_PATH}:{line}: invalid {field}: {why}; {VERIFY_FORM}",
            path=CONFIG_PATH,
            line=line,
        ) from None
