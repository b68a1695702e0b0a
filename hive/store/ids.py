"""Cell ids: ``<prefix>-<hash>`` for roots, ``<parent>.<suffix>`` for children.

The hash part is random (``os.urandom``, as ``secrets`` draws), not a counter, so
clones that create cells offline rarely collide. The chance that two clones creating ``n`` ids each
between syncs produce the same one is about ``n*n / 32**length``:

* roots, 6 characters (2**30 values): 1,000 cells each, about 1 in 1,000;
* child suffixes, 4 characters (2**20 values) per parent: 20 subtasks of the
  same epic each, about 1 in 2,600; 50 each, about 1 in 420.

A collision between clones shows up as a git add/add conflict on merge, never
as a silent overwrite; a local collision is detected and retried before
anything is written. Child suffixes are random too (beads' per-parent counters
collided across clones). Raise ``id_length``/``child_id_length`` in
``.hive/config.yaml`` for more headroom.
"""

from __future__ import annotations

import os

from hive.errors import AmbiguousId, InvalidInput, NotFound

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection

# Crockford-style base32 without the confusable i, l, o, u.
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
# The characters of an id's words: ``[a-z0-9_]``.
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def random_part(length: int) -> str:
    # 32 letters: the low 5 bits of a random byte pick each uniformly
    return "".join(ALPHABET[byte & 31] for byte in os.urandom(length))


def new_root_id(prefix: str, length: int, exists: Callable[[str], bool]) -> str:
    """A fresh root id; grows by one character after repeated local collisions."""
    return _fresh(lambda n: f"{prefix}-{random_part(n)}", length, exists)


def new_child_id(parent_id: str, length: int, exists: Callable[[str], bool]) -> str:
    """A fresh child id that shows its parent: ``hv-x7k2q9.a3f8``."""
    return _fresh(lambda n: f"{parent_id}.{random_part(n)}", length, exists)


def _fresh(make: Callable[[int], str], length: int, exists: Callable[[str], bool]) -> str:
    for attempt in range(64):
        candidate = make(length + attempt // 8)
        if not exists(candidate):
            return candidate
    raise InvalidInput("could not generate a free id; increase id_length in .hive/config.yaml")


def is_valid_id(cell_id: str) -> bool:
    """``<word>-<word>[-<word>...][.<word>...]``, words of ``[a-z0-9_]``: hive makes
    ``<prefix>-<hash>``; ids kept from other trackers (beads) may carry more hyphenated
    words (``bd-wisp-0385z``, ``bd-beads-crew-dave``). As the regular expression
    ``^[a-z0-9_]+(?:-[a-z0-9_]+)+(\\.[a-z0-9_]+)*$`` matches (one trailing line feed
    allowed, as its ``$`` allows), without importing ``re`` in every process."""
    text = cell_id[:-1] if cell_id.endswith("\n") else cell_id
    root, *children = text.split(".")
    words = root.split("-")
    if len(words) < 2:
        return False
    return all(word and _WORD_CHARS.issuperset(word) for word in (*words, *children))


def check_id(cell_id: str) -> str:
    if not is_valid_id(cell_id):
        raise InvalidInput(f"invalid cell id {cell_id!r}: expected <prefix>-<hash>[.<child>...]")
    return cell_id


def root_of(cell_id: str) -> str:
    """The root (top-level) id of ``cell_id``: ``hv-ab12.x1.y2`` -> ``hv-ab12``."""
    return cell_id.split(".", 1)[0]


def hash_part(cell_id: str) -> str:
    """The hash of the root id: ``hv-ab12.x1`` -> ``ab12``."""
    root = root_of(cell_id)
    return root.split("-", 1)[1] if "-" in root else root


def parent_from_id(cell_id: str) -> str | None:
    """The parent id encoded in a child id, or None for a root id."""
    return cell_id.rsplit(".", 1)[0] if "." in cell_id else None


def id_matches(cell_id: str, wanted: str) -> bool:
    """Whether ``wanted`` (lower case) begins ``cell_id``, or its part after the first
    '-' (``x7k2`` and ``hv-x7`` both begin ``hv-x7k2``)."""
    return cell_id.startswith(wanted) or cell_id.partition("-")[2].startswith(wanted)


def resolve_among(given: str, known: Collection[str], deleted: Callable[[str], bool]) -> str:
    """The full id ``given`` names among the ids ``known``: exact, or an unambiguous
    prefix (with or without ``prefix-``); ``deleted``: whether a known id is a deleted
    cell. ``known`` need only hold the ids ``given`` could name (the exact one and the
    ones it begins): the answer does not depend on the others.

    Among several prefix matches, the id whose hash part is exactly ``given``
    wins (``x7k2`` is ``hv-x7k2``, not its child ``hv-x7k2.a3f8``); deleted cells
    only count when nothing else matches; and one cell plus its own
    descendants resolves to that cell.
    """
    wanted = given.strip().lower()
    if not wanted:
        raise InvalidInput("empty cell id")
    if wanted in known:
        return wanted
    matches = sorted(cid for cid in known if id_matches(cid, wanted))
    if not matches:
        raise NotFound(f"no cell matches id {given!r}{_subtask_hint(wanted, known)}", id=given)
    chosen = _preferred_match(wanted, matches, deleted)
    if chosen is not None:
        return chosen
    live = _live_ids(matches, deleted)
    shown = ", ".join(live[:5]) + (" ..." if len(live) > 5 else "")
    raise AmbiguousId(f"id {given!r} is ambiguous: {shown}", id=given, matches=live[:20])


def _subtask_hint(wanted: str, known: Collection[str]) -> str:
    """Where ``wanted`` (no '-' or '.' in it) begins the part of a subtask's id after a
    dot (``a3f8`` of ``hv-x7k2q9.a3f8``, typed as a root's hash is): which ids (the
    first three), since a subtask is named from its parent's id on; else nothing."""
    if "-" in wanted or "." in wanted:
        return ""
    found = sorted(
        cid for cid in known if any(part.startswith(wanted) for part in cid.split(".")[1:])
    )
    if not found:
        return ""
    if len(found) == 1:
        return f" (did you mean {found[0]}?)"
    return f" (did you mean one of {', '.join(found[:3])}{', ...' if len(found) > 3 else ''}?)"


def _preferred_match(wanted: str, matches: list[str], deleted: Callable[[str], bool]) -> str | None:
    """The one id ``matches`` (sorted) stands for, or None when it is really ambiguous."""
    if len(matches) == 1:
        return matches[0]
    exact = [cid for cid in matches if cid.partition("-")[2] == wanted]
    if len(exact) == 1:
        return exact[0]
    live = _live_ids(matches, deleted)
    ancestor = live[0]  # sorted: an ancestor comes before its descendants
    if all(cid == ancestor or cid.startswith(ancestor + ".") for cid in live):
        return ancestor
    return None


def _live_ids(ids: list[str], deleted: Callable[[str], bool]) -> list[str]:
    """``ids`` without deleted cells (all of them if every one is deleted)."""
    live = [cid for cid in ids if not deleted(cid)]
    return live or ids
