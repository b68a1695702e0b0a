"""Every agent tool: an argument model and a handler calling one library function.

Descriptions are deliberately terse: agents pay for schemas in context tokens.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from hive.tools.registry import Tool, operation_tool, register


class Args(BaseModel):
    """Unknown keys are refused; ints and bools are not coerced from other types."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ------------------------------------------------------------------ the registry


def _operation_tools() -> list[Tool]:
    """A tool for every operation described in ``hive/ops`` that agents are offered
    (same name, parameters and result as its CLI command)."""
    from hive.ops.spec import operations

    return [operation_tool(op) for op in operations() if op.is_tool]


def _seed_tools() -> list[Tool]:
    """The tools of the other seeds, defined in their own modules."""
    from hive.tools import agent_tools, coord_tools, network_tools

    return [*coord_tools.TOOLS, *network_tools.TOOLS, *agent_tools.TOOLS]


for _tool in [*_operation_tools(), *_seed_tools()]:
    register(_tool)
