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
from hive.ops.spec import DECLARED_IN, OPERATIONS, Operation

# The order operations are listed in (help, docs, the tool list): module by module, as
# a process that imports this catalogue first declares them (``agent`` imports
# ``context``), whatever another process happened to import before.
DECLARING = (context, agent, audit, cells, coord, files, identity, network, plan, repo, swarm)
_RANK = {module.__name__: rank for rank, module in enumerate(DECLARING)}


def operations() -> list[Operation]:
    """Every declared operation: module by module in ``DECLARING`` order, each module's
    in the order it declares them (the same whatever a process imported first)."""
    declared = list(OPERATIONS.values())
    order = {
        op.name: (_RANK.get(DECLARED_IN.get(op.name, ""), len(_RANK)), n)
        for n, op in enumerate(declared)
    }
    return sorted(declared, key=lambda op: order[op.name])


def tool_names() -> list[str]:
    """The name of every agent tool (the operations offered to agents)."""
    return [op.name for op in operations() if op.is_tool]


def operation(name: str) -> Operation:
    return OPERATIONS[name]
