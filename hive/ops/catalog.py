"""Every operation: imports each module that declares operations into
``hive.ops.spec.OPERATIONS`` (the surfaces' way to them). The declaring modules import
``hive.ops.spec``, never this module."""

from hive.ops import (
    agent,
    audit,
    cells,
    context,
    coord,
    files,
    identity,
    network,
    plan,
    repo,
    swarm,
)
from hive.ops.spec import OPERATIONS, Operation

DECLARING = (agent, audit, cells, context, coord, files, identity, network, plan, repo, swarm)


def operations() -> list[Operation]:
    """Every declared operation."""
    return list(OPERATIONS.values())


def tool_names() -> list[str]:
    """The name of every agent tool (the operations offered to agents)."""
    return [op.name for op in operations() if op.is_tool]


def operation(name: str) -> Operation:
    return OPERATIONS[name]
