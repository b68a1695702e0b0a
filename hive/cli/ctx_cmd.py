"""How values of the shared context and the queue are written and read on the command
line (the ``hive ctx`` / ``hive queue`` commands are generated from hive/ops/context.py)."""

import json
import time
from typing import Any


def parse_json_arg(text: str) -> Any:
    """A command-line value: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def compact(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
