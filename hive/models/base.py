"""The base of hive's pydantic models.

A model's validator and serializer are built when it is first used, not when its module
is imported (``defer_build``): a command uses a few of the ~240 models the operations
declare, and building all of them cost every full-CLI process ~140 ms of start-up."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, get_args

from pydantic import BaseModel, ConfigDict, PlainSerializer

from hive.times import format_time

PLUGIN_LOADER = "pydantic.plugin._loader"


def _may_declare_pydantic_plugins() -> bool:
    """Whether a distribution on ``sys.path`` may declare a ``pydantic`` entry point (a
    pydantic plugin), read from the ``entry_points.txt`` files directly; anything this
    cannot read the way ``importlib.metadata`` would (a zip, an unreadable directory)
    counts as one."""
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return True  # a zip file: its distributions are not read here
        except OSError:
            continue  # a path that does not exist: importlib.metadata skips it too
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                found = os.path.join(folder, name, "entry_points.txt")
            elif name.endswith(".egg"):
                found = os.path.join(folder, name, "EGG-INFO", "entry_points.txt")
                if not os.path.isdir(os.path.join(folder, name)):
                    return True
            else:
                continue
            try:
                with open(found, encoding="utf-8") as handle:
                    if any(line.strip() == "[pydantic]" for line in handle):
                        return True
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError):
                return True
    return False


def _no_plugin_search() -> None:
    """pydantic looks for plugins (``pydantic`` entry points) when it builds its first
    validator: it imports ``importlib.metadata`` (with ``email``, ``zipfile``,
    ``tempfile``, ...) and reads every installed distribution's metadata, about a tenth
    of a command's start-up. When no distribution declares one (read here, ~1 ms), a
    stand-in for that loader answers what it would have: no plugins."""
    if PLUGIN_LOADER in sys.modules or _may_declare_pydantic_plugins():
        return
    import types

    stand_in = types.ModuleType(PLUGIN_LOADER)
    stand_in.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = stand_in


_no_plugin_search()


Time = Annotated[datetime, PlainSerializer(format_time, return_type=str, when_used="json")]
"""A time field: in JSON (``--json``, tool results, MCP, the API) as the files write it,
UTC with milliseconds and a ``Z`` (``hive.times.format_time``), not pydantic's
microseconds (``...48.755000Z``)."""


class HiveModel(BaseModel):
    """A pydantic model built on first use (its subclasses add their own config)."""

    model_config = ConfigDict(defer_build=True)


def without_none(shown: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``shown`` (a model's dump, for a wrap serializer) without the ``keys`` whose value
    is None: a key only where it says something."""
    for key in keys:
        if shown.get(key) is None:
            shown.pop(key, None)
    return shown


def build_models(models: Iterable[type[BaseModel]]) -> None:
    """Build now the validator and serializer of each of ``models`` not built yet. For a
    process about to fork workers that use them (``hive swarm run``): built once here,
    the workers inherit them, instead of each building its own on first use."""
    for model in models:
        if not model.__pydantic_complete__:
            model.model_rebuild(raise_errors=False)


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation names (``CellDetail | list[Cell]``: both)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in get_args(annotation) for model in models_in(argument)]
