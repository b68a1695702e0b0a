"""Who is acting: the principal of a workspace (a plain dataclass, apart from the
identity models of ``hive.models.identity`` so that opening a workspace creates none of
them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PrincipalKind = Literal["agent", "person", "unregistered"]


@dataclass(frozen=True)
class Principal:
    """The acting identity of a Workspace.

    - ``agent``: a registered agent, proven by its credential at a surface (or
      named by trusted in-process code);
    - ``person``: someone at the CLI without a credential, acting as their git
      identity (``user.name``); people may override ownership with a reason;
    - ``unregistered``: a tool caller that has not registered yet; it may read and
      create, but not claim, reserve, use mail or override anything.
    """

    name: str
    kind: PrincipalKind = "agent"
