"""Every agent tool: one for each operation described in ``hive/ops`` that agents
are offered (same name, parameters and result as its CLI command).

Descriptions are deliberately terse: agents pay for schemas in context tokens.
"""

from __future__ import annotations

from hive.ops.spec import operations
from hive.tools.registry import operation_tool, register

for _op in operations():
    if _op.is_tool:
        register(operation_tool(_op))
