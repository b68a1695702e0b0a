"""Seed 000's shared context (``ctx_*``) and coordinator queue (``coord_*``) as tools.

Registered by ``hive.tools.catalog``; each handler calls one domain function."""

from __future__ import annotations

from hive.tools.registry import Tool

TOOLS: list[Tool] = []  # described in hive/ops/context.py now
