"""Every operation: imports the modules that declare operations into
``hive.ops.spec.OPERATIONS`` (the surfaces' way to them), all of them or, for one
command (``hive/ops/commandindex.py``), only the few it needs. The declaring modules
import ``hive.ops.spec``, never this module."""

from __future__ import annotations

from collections.abc import Iterable

from hive.ops.spec import DECLARED_IN, OPERATIONS, Operation

# The order operations are listed in (help, docs, the tool list): module by module, as
# a process that imports this catalogue first declares them (``agent`` imports
# ``context``), whatever another process happened to import before.
DECLARING = (
    "context",
    "agent",
    "audit",
    "cells",
    "coord",
    "files",
    "identity",
    "network",
    "plan",
    "repo",
    "swarm",
)
_RANK = {f"hive.ops.{name}": rank for rank, name in enumerate(DECLARING)}


def declare(modules: Iterable[str] = DECLARING) -> None:
    """Import the operation modules ``modules`` (names in ``DECLARING``)."""
    for name in modules:
        __import__(f"hive.ops.{name}")


def operations(modules: Iterable[str] | None = None) -> list[Operation]:
    """Every declared operation (``modules``: only those these modules declare): module
    by module in ``DECLARING`` order, each module's in the order it declares them (the
    same whatever a process imported first)."""
    wanted = DECLARING if modules is None else tuple(modules)
    declare(wanted)
    qualified = {f"hive.ops.{name}" for name in wanted}
    declared = list(OPERATIONS.values())
    order = {
        op.name: (_RANK.get(DECLARED_IN.get(op.name, ""), len(_RANK)), n)
        for n, op in enumerate(declared)
    }
    if modules is not None:
        declared = [op for op in declared if DECLARED_IN.get(op.name) in qualified]
    return sorted(declared, key=lambda op: order[op.name])


def tool_names() -> list[str]:
    """The name of every agent tool (the operations offered to agents)."""
    return [op.name for op in operations() if op.is_tool]


def operation(name: str) -> Operation:
    declare()
    return OPERATIONS[name]
