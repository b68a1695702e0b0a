"""Text rules shared by every layer (standard library only, like ``hive.errors``)."""

from __future__ import annotations

import re

# C0 and C1 control characters (tab, escape, NUL, CR, ...) and Unicode line separators.
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
