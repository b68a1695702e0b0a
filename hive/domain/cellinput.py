"""Parsing the values a person or agent gives for a cell's fields (standard library
only: the lean write path of a fresh process uses it too, ``hive/cli/lean_write.py``)."""

from __future__ import annotations

from hive.domain.limits import MAX_GLOB, MAX_LABELS, MAX_SHORT, check_count, check_name, check_short
from hive.errors import InvalidInput
from hive.store.celldoc import CELL_TYPES, DEPENDENCY_TYPES, STATUSES

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterable


PRIORITIES_TAKEN = "use 0-4 (0 is most urgent) or P0-P4"  # the command line's and the tools'


def parse_priority(value: int | str | None, default: int | None = None) -> int | None:
    """0-4, also written ``P0``-``P4`` (in any case, spaces around it); anything else
    (a word such as ``high``, a bool, a fraction) is a clear error saying what is taken."""
    if value is None:
        return default
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        text = str(value).strip().upper().removeprefix("P")
        if text.isdecimal() and 0 <= int(text) <= 4:  # (isdigit() takes "²", int() does not)
            return int(text)
    raise InvalidInput(f"invalid priority {value!r}: {PRIORITIES_TAKEN}")


def parse_status(value: str | None, *, also: tuple[str, ...] = ()) -> str | None:
    """A status as typed (``In-Progress``); ``also``: other words the caller takes, as
    written (``all``)."""
    if value is None or value in also:
        return value
    normal = value.strip().lower().replace("-", "_")
    if normal not in STATUSES:
        choices = ", ".join([*STATUSES, *also])
        raise InvalidInput(f"invalid status {value!r}: use one of {choices}")
    return normal


def parse_type(value: str | None) -> str | None:
    if value is None:
        return None
    normal = value.strip().lower()
    if normal not in CELL_TYPES:
        raise InvalidInput(f"invalid type {value!r}: use one of {', '.join(CELL_TYPES)}")
    return normal


def parse_dep_spec(spec: str) -> tuple[str, str]:
    """``TYPE:ID`` or just ``ID`` (meaning ``blocks``) -> (type, id)."""
    dep_type, sep, target = spec.partition(":")
    if not sep:
        dep_type, target = "blocks", spec
    dep_type = dep_type.strip().lower()
    if dep_type not in DEPENDENCY_TYPES:
        raise InvalidInput(
            f"invalid dependency {spec!r}: type must be one of {', '.join(DEPENDENCY_TYPES)}"
        )
    if not target.strip():
        raise InvalidInput(f"invalid dependency {spec!r}: missing the target id")
    return dep_type, target.strip()


def parse_dep_specs(specs: Iterable[str]) -> list[tuple[str, str]]:
    """Each spec as :func:`parse_dep_spec` reads it, ``a,b`` being two (``bd create
    --deps blocks:bd-1,related:bd-2``: no id holds a comma)."""
    parsed = []
    for spec in specs:
        parts = [part for part in spec.split(",") if part.strip()] or [spec]
        parsed += [parse_dep_spec(part) for part in parts]
    return parsed


def clean_list(values: Iterable[str], what: str, *, stored: bool = False) -> list[str]:
    """``values`` stripped, without repeats; each a name (``limits.check_name``), or with
    ``stored`` (values naming what is already stored: a label to remove) one line only,
    so a label holding an invisible character that reached a cell by a hand edit or a
    merge can still be removed."""
    check = check_short if stored else check_name
    cleaned: list[str] = []
    for value in values:
        item = check(value, what, MAX_GLOB if what == "file pattern" else MAX_SHORT).strip()
        if not item:
            raise InvalidInput(f"empty {what} given")
        if item not in cleaned:
            cleaned.append(item)
    return cleaned


def clean_labels(values: Iterable[str], *, stored: bool = False) -> list[str]:
    """Labels as :func:`clean_list` cleans them, ``a,b`` being two labels (``bd create
    -l a,b`` too), counted once split; with ``stored`` (labels to remove) a value is
    also matched whole, so a label that holds a comma (an import, a hand edit) can
    still be removed."""
    cleaned = clean_list(_comma_separated(values, stored=stored), "label", stored=stored)
    if not stored:
        check_count(cleaned, "labels", MAX_LABELS)
    return cleaned


def _comma_separated(values: Iterable[str], *, stored: bool) -> list[str]:
    """Each value split at its commas (:func:`clean_labels`)."""
    split: list[str] = []
    for value in values:
        if not isinstance(value, str) or "," not in value:
            split.append(value)
            continue
        parts = [part for part in value.split(",") if part.strip()]
        split += [value, *parts] if stored else parts or [""]  # "," alone: an empty label
    return split


def normalize_files(files: Iterable[str]) -> list[str]:
    """File globs in canonical form (errors for escapes, bad syntax)."""
    from hive.domain.globs import normalize_pattern

    return list(dict.fromkeys(normalize_pattern(p) for p in clean_list(files, "file pattern")))
