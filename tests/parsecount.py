"""Counting the YAML documents a piece of code parses (``hive doctor``'s audits decode
each version of a file once: the tests check it by the texts parsed)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import hive.store.yamlfast
import hive.store.yamlio


def yaml_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """From now on (for the test), each text ``yamlio.loads`` parses, and each the plain
    reader ``yamlfast.fast_loads`` parses when called directly, counted by text."""
    parsed: Counter[str] = Counter()
    for module, name in ((hive.store.yamlio, "loads"), (hive.store.yamlfast, "fast_loads")):
        real = getattr(module, name)

        def counted(text: str, real: Any = real) -> Any:
            parsed[text] += 1
            return real(text)

        monkeypatch.setattr(module, name, counted)
    return parsed
