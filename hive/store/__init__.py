"""The .hive/ layout, YAML encoding, ids and the parse cache. Pure: no git, no I/O on repos."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable

# Where the state index's notices go (an index rebuilt, kept in memory): the CLI sets
# this to write to stderr; below the CLI nothing prints, so without it notices only
# collect in ``StateIndex.notices``. Here, not in ``index``: a command that never
# opens the index (the pre-commit hook) does not import it (``sqlite3``) to set it.
NOTICE_SINK: Callable[[str], None] | None = None
