"""Value classes without ``dataclasses``, and ``suppress`` without ``contextlib``, for
modules every fresh process imports.

``@dataclass`` writes each class's methods as source text and compiles it when
the module is imported (~0.2-0.3 ms a class, plus the ``dataclasses`` module
itself); the git layer and the state index hold ~20 such classes, a sizeable
share of a ~40 ms ``hive create``. A class here spells out its ``__init__`` and
lists its fields in ``_fields``; :class:`Record` gives equality and a repr from
them, :class:`Frozen` adds a hash (its instances are not changed after
``__init__``, by convention: nothing enforces it at run time).

``contextlib`` imports ``collections``, ``functools`` and their own imports (~1.5 ms
of a fresh process); the state index, the git layer and the console script need
only its ``suppress``, which :class:`suppress` is.
"""

from __future__ import annotations


class Record:
    """Equality and repr over ``_fields`` (as a dataclass's ``eq``/``repr``); unhashable
    (defining ``__eq__`` alone sets ``__hash__`` to None, as for a dataclass)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"


class Frozen(Record):
    """A :class:`Record` not changed after ``__init__``: hashable by its fields."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())


class suppress:
    """``contextlib.suppress``: the listed exceptions raised in the block are ignored."""

    __slots__ = ("_exceptions",)

    def __init__(self, *exceptions: type[BaseException]) -> None:
        self._exceptions = exceptions

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, value: object, trace: object) -> bool:
        return kind is not None and issubclass(kind, self._exceptions)
