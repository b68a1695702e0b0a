"""SHA-1 for git object ids without loading OpenSSL on every start-up.

``hashlib`` loads OpenSSL (``_hashlib``, ~2 ms of every fresh process); CPython's
built-in ``_sha1`` imports in a fraction of that and is fast enough for the
small objects a hive write hashes. Bulk work (packing) keeps ``hashlib``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any


def _load_sha1() -> Callable[..., Any]:
    try:
        return importlib.import_module("_sha1").sha1  # type: ignore[no-any-return]
    except ImportError:  # a Python built without it
        import hashlib

        return hashlib.sha1


if TYPE_CHECKING:
    from hashlib import sha1 as sha1
else:
    sha1 = _load_sha1()
