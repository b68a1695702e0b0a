"""Bulk creation: many cells from one file, in one commit (``hive create --from FILE``).

The input is YAML (a list of cell mappings, or a mapping whose ``cells:`` is that
list) or JSON lines (one mapping per line). Each entry takes the fields of
``hive create``; an optional ``key`` names the entry so that others can refer to
it before it has an id::

    cells:
      - key: login
        title: Login page
        type: epic
      - key: form
        title: Login form
        parent: login            # a key of this file, or an existing cell id
      - title: Wire the form to the API
        parent: login
        blocks: [form]           # waits for 'form' (same as deps: [blocks:form])
        labels: [api]

Everything is checked before anything is written: every problem is reported
with the line it is on (and the record number for JSON lines), and a file with
any problem creates nothing. The work is proportional to the number of
entries: ids are allocated against the known id set once, and the commit
rewrites each changed tree once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from hive.domain.cellinput import clean_labels, parse_dep_spec, parse_priority, parse_type
from hive.domain.cellinput import normalize_files as _normalize_files
from hive.domain.cells import get_cell
from hive.domain.graph import cycles_through
from hive.domain.limits import (
    MAX_DEPS,
    MAX_ITEMS,
    MAX_LABELS,
    check_count,
    check_name,
    check_text,
)
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput
from hive.git.repo import Snapshot
from hive.jsontext import nesting_depth
from hive.models import Cell, Dependency, utc_now
from hive.models.cell import check_title, first_error
from hive.models.results import CreatedCells
from hive.store.cache import CellIndex, IdSet
from hive.store.ids import new_child_id, new_root_id
from hive.store.yamlfast import MAX_NESTING
from hive.text import counted, utf8_text

# Each field an entry may have, and what it means (also the documentation's list).
FIELDS: dict[str, str] = {
    "key": "a name for this entry, for parent/deps/blocks of other entries",
    "title": "one line (required)",
    "type": "bug|feature|task|epic|chore (default task)",
    "priority": "0-4 or P0-P4 (default 2)",
    "description": "text",
    "labels": "a list of labels (or one)",
    "assignee": "who works on it",
    "parent": "a key of this file or an existing cell id",
    "deps": "TYPE:REF or REF (blocks), as --dep; REF is a key or an id",
    "blocks": "REFs this cell waits for (deps of type blocks)",
    "files": "owned file globs (alias files_owned)",
    "notes": "text",
    "design": "text",
    "acceptance_criteria": "text (alias acceptance)",
    "metadata": "a mapping",
}
ALIASES = {
    "files_owned": "files",
    "dependencies": "deps",
    "label": "labels",
    "acceptance": "acceptance_criteria",
}
JSONL_SUFFIXES = (".jsonl", ".ndjson")
_LINE_END = re.compile(r"\r\n|\r|\n")  # what ends a JSON line (see json_lines)
YAML_SUFFIXES = (".yaml", ".yml")
Progress = Callable[[str, int, int], None]


# ------------------------------------------------------------------ reading input


@dataclass
class Entry:
    """One record of the input: its number, the line it starts on, its data."""

    number: int
    data: Any
    line: int | None = None


@dataclass
class CellFile:
    """Parsed input: the entries and a way to find the line of any part of them."""

    source: str
    entries: list[Entry]
    jsonl: bool = False
    text: str | None = None
    _nodes: list[Any] | None = None

    def line_of(self, entry: Entry, key: str | None = None, item: int | None = None) -> int | None:
        """The line of ``entry`` (of its field ``key``, of item ``item`` of that field)."""
        if self.jsonl or self.text is None:
            return entry.line
        nodes = self._entry_nodes()
        if entry.number - 1 >= len(nodes):
            return entry.line
        return _node_line(nodes[entry.number - 1], key, item)

    def _entry_nodes(self) -> list[Any]:
        """The composed YAML node of each entry (composed once, only when a line is asked)."""
        if self._nodes is None:
            from ruamel.yaml.nodes import MappingNode, SequenceNode

            from hive.store.yamlio import _loader

            root = _loader().compose(self.text or "")
            if isinstance(root, MappingNode):
                root = next((v for k, v in root.value if k.value == "cells"), None)
            self._nodes = list(root.value) if isinstance(root, SequenceNode) else []
        return self._nodes

    def where(self, entry: Entry, key: str | None = None, item: int | None = None) -> str:
        line = self.line_of(entry, key, item)
        if self.jsonl:
            return f"{self.source}:{line}: record {entry.number}"
        if line is None:
            return f"{self.source}: entry {entry.number}"
        return f"{self.source}:{line}"


def _node_line(node: Any, key: str | None, item: int | None) -> int:
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    line = int(node.start_mark.line) + 1
    if key is None or not isinstance(node, MappingNode):
        return line
    for key_node, value in node.value:
        if ALIASES.get(str(key_node.value), str(key_node.value)) == key:
            line = int(key_node.start_mark.line) + 1
            if item is not None and isinstance(value, SequenceNode) and item < len(value.value):
                line = int(value.value[item].start_mark.line) + 1
            return line
    return line


def read_cell_file(path: str, *, stdin: Callable[[], bytes] | None = None) -> CellFile:
    """Read and parse ``path`` (``-``: standard input, via ``stdin``; ``~``: the home
    directory, which the shell leaves alone in ``--from=~/cells.yaml``)."""
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            raw = stdin() if stdin is not None else b""
        else:
            with open(os.path.expanduser(path), "rb") as handle:
                raw = handle.read()
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror or exc}") from None
    try:
        text = utf8_text(raw)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not UTF-8 text (byte {exc.start + 1})") from None
    return parse_cell_file(text, source=source)


def parse_cell_file(text: str, *, source: str = "<input>", fmt: str | None = None) -> CellFile:
    """Entries of a YAML or JSON-lines document (``fmt``: ``yaml``, ``jsonl`` or guessed
    from the name and the first line)."""
    chosen = fmt or _guess_format(text, source)
    if chosen == "jsonl":
        return _parse_jsonl(text, source)
    if chosen != "yaml":
        raise InvalidInput(f"unknown format {fmt!r}: use yaml or jsonl")
    return _parse_yaml(text, source)


def _guess_format(text: str, source: str) -> str:
    lower = source.lower()
    if lower.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if lower.endswith(YAML_SUFFIXES):
        return "yaml"
    first = next((line for line in json_lines(text) if line.strip()), "")
    if first.lstrip().startswith("{"):
        try:
            return "jsonl" if isinstance(json.loads(first), dict) else "yaml"
        except (ValueError, RecursionError):
            return "yaml"
    return "yaml"


@dataclass(frozen=True)
class BadJson:
    """A JSON-lines record that does not parse (reported with the other problems)."""

    message: str


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: ended by LF, CRLF or CR only (``str.splitlines``
    also ends one at U+2028, U+2029, U+0085 and other characters JSON strings hold raw,
    as ``json.dumps(..., ensure_ascii=False)`` writes them)."""
    return _LINE_END.split(text)


def _parse_jsonl(text: str, source: str) -> CellFile:
    entries: list[Entry] = []
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        data: Any
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            data = BadJson(f"invalid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:
            data = BadJson("invalid JSON: nested too deeply")
        if nesting_depth(data, MAX_NESTING) > MAX_NESTING:  # as a YAML file (its cell file)
            data = BadJson(f"invalid JSON: nested more than {MAX_NESTING} levels deep")
        entries.append(Entry(number=len(entries) + 1, data=data, line=number))
    if len(entries) == 1 and isinstance(entries[0].data, dict) and "cells" in entries[0].data:
        return _from_document(entries[0].data, source, None, jsonl=True)  # one JSON document
    return CellFile(source=source, entries=entries, jsonl=True)


def _parse_yaml(text: str, source: str) -> CellFile:
    from hive.store.yamlio import YamlError, loads

    try:
        data = loads(text)
    except YamlError as exc:
        where = f"{source}:{exc.line}" if exc.line else source
        raise InvalidInput(
            f"{where}: {exc.said()}; nothing was created",
            problems=[{"line": exc.line, "record": None, "message": f"{where}: {exc}"}],
        ) from None
    return _from_document(data, source, text, jsonl=False)


def _from_document(data: Any, source: str, text: str | None, *, jsonl: bool) -> CellFile:
    if isinstance(data, dict):
        extra = sorted(str(key) for key in data if key != "cells")
        if extra or not isinstance(data.get("cells"), list):
            raise InvalidInput(
                f"{source}:1: expected a list of cells, or a mapping with just 'cells:'"
                + (f" (found {', '.join(extra)})" if extra else "")
            )
        data = data["cells"]
    if data is None:
        data = []
    if not isinstance(data, list):
        raise InvalidInput(f"{source}:1: expected a list of cells, or a mapping with 'cells:'")
    entries = [
        Entry(number=n, data=item, line=1 if jsonl else None) for n, item in enumerate(data, 1)
    ]
    return CellFile(source=source, entries=entries, jsonl=jsonl, text=text)


def specs_file(specs: Sequence[Mapping[str, Any]], source: str = "specs") -> CellFile:
    """Entries given as data (no file, so problems name entry numbers)."""
    entries = [Entry(number=n, data=dict(spec)) for n, spec in enumerate(specs, 1)]
    return CellFile(source=source, entries=entries)


# ------------------------------------------------------------------ checking entries


@dataclass
class Ref:
    """A reference to a key of the file or an existing cell, and where it was written."""

    text: str
    field: str
    item: int | None = None
    dep_type: str = "blocks"


@dataclass
class Spec:
    """One entry after its fields are checked (references not yet resolved)."""

    entry: Entry
    key: str | None
    fields: dict[str, Any]
    parent: Ref | None = None
    deps: list[Ref] = field(default_factory=list)


class Problems:
    """Every problem found, each with its place in the input."""

    def __init__(self, cells: CellFile) -> None:
        self.file = cells
        self.found: list[dict[str, Any]] = []

    def add(
        self, entry: Entry, message: str, key: str | None = None, item: int | None = None
    ) -> None:
        line = self.file.line_of(entry, key, item)
        text = f"{self.file.where(entry, key, item)}: {message}"
        self.found.append({"line": line, "record": entry.number, "message": text})

    def raise_if_any(self, total: int) -> None:
        if self.found:
            ordered = sorted(self.found, key=lambda p: (p["record"] or 0, p["line"] or 0))
            raise _invalid(self.file.source, ordered, total)


def _invalid(source: str, problems: list[dict[str, Any]], total: int) -> InvalidInput:
    """One line naming the first problem; ``problems`` lists them all (file:line: ...)."""
    count = counted(len(problems), "problem")
    entries = "1 entry" if total == 1 else f"{total} entries"
    first = problems[0]["message"]
    lead = "" if len(problems) == 1 else "first: "
    return InvalidInput(
        f"{source}: {count} in {entries}, nothing was created; {lead}{first}",
        problems=problems,
    )


def _text(value: Any, name: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidInput(
            f"{name} must be text" + (" (quote it)" if isinstance(value, bool) else "")
        )
    return str(value)


def claimed_files(cells_file: CellFile) -> list[str]:
    """The owned file globs the entries claim (``files``, alias ``files_owned``), as
    given; what is not a list of text values is the entry's own problem
    (:func:`check_entry` reports it with its line)."""
    found: list[str] = []
    for entry in cells_file.entries:
        if not isinstance(entry.data, dict):
            continue
        for key, value in entry.data.items():
            if ALIASES.get(str(key), str(key)) == "files":
                with contextlib.suppress(InvalidInput):
                    found += _strings(value, "files")
    return found


def _strings(value: Any, name: str) -> list[str]:
    """A list of strings (one string is a list of one)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise InvalidInput(f"{name} must be a list of text values")
    return [str(item) for item in items]


def check_entry(entry: Entry, problems: Problems) -> Spec | None:
    """The entry's fields checked one by one (each problem at its own line)."""
    data = entry.data
    if isinstance(data, BadJson):
        problems.add(entry, data.message)
        return None
    if not isinstance(data, dict):
        problems.add(entry, "expected a mapping with at least a title")
        return None
    given: dict[str, Any] = {}
    for raw_key, value in data.items():
        name = ALIASES.get(str(raw_key), str(raw_key))
        if name not in FIELDS:
            problems.add(
                entry, f"unknown field {str(raw_key)!r} (fields: {', '.join(FIELDS)})", str(raw_key)
            )
            continue
        if name in given:
            problems.add(entry, f"field {name!r} is given twice", name)
            continue
        given[name] = value
    if "title" not in given:
        problems.add(entry, "title is required")
    spec = Spec(entry=entry, key=None, fields={})
    for name, value in given.items():
        try:
            _check_field(spec, name, value)
        except InvalidInput as exc:
            problems.add(entry, exc.message, name)
    return spec


def _check_field(spec: Spec, name: str, value: Any) -> None:
    fields = spec.fields
    if name == "key":
        key = _text(value, "key", required=True).strip()
        if not key or any(ch.isspace() for ch in key) or ":" in key:
            raise InvalidInput("key must be a word without spaces or ':'")
        spec.key = key
    elif name == "title":
        title = _text(value, "title", required=True)
        try:
            check_title(title.strip())
        except ValueError as exc:
            raise InvalidInput(f"invalid title: {exc}") from None
        if not title.strip():
            raise InvalidInput("invalid title: title must not be blank")
        fields["title"] = title
    elif name in ("description", "notes", "design", "acceptance_criteria"):
        fields[name] = check_text(_text(value, name), name.replace("_", " "))
    elif name == "type":
        fields["type"] = parse_type(_text(value, "type", required=True))
    elif name == "priority":
        fields["priority"] = parse_priority(value if isinstance(value, int | str) else repr(value))
    elif name == "labels":
        labels = _strings(value, "labels")
        check_count(labels, "labels", MAX_LABELS)
        fields["labels"] = clean_labels(labels)
    elif name == "files":
        files = _strings(value, "files")
        check_count(files, "file patterns", MAX_ITEMS)
        fields["files_owned"] = _normalize_files(files)
    elif name == "assignee":
        fields["assignee"] = check_name(_text(value, "assignee"), "assignee").strip() or None
    elif name == "metadata":
        if value is not None and not isinstance(value, dict):
            raise InvalidInput("metadata must be a mapping")
        fields["metadata"] = {str(k): v for k, v in (value or {}).items()}
    elif name == "parent":
        text = _text(value, "parent").strip()
        spec.parent = Ref(text, "parent") if text else None
    elif name in ("blocks", "deps"):
        if name == "blocks":
            blocks = _strings(value, "blocks")
            spec.deps += [Ref(ref.strip(), "blocks", n) for n, ref in enumerate(blocks)]
        else:
            spec.deps += _dep_refs(value)
        check_count(spec.deps, "dependencies", MAX_DEPS)


def _dep_refs(value: Any) -> list[Ref]:
    refs: list[Ref] = []
    items = value if isinstance(value, list) else [value]
    for number, item in enumerate(items):
        if isinstance(item, dict):
            dep_type, target = parse_dep_spec(
                f"{item.get('type', 'blocks')}:{item.get('target', '')}"
            )
        elif isinstance(item, str | int) and not isinstance(item, bool):
            dep_type, target = parse_dep_spec(str(item))
        else:
            raise InvalidInput("deps must be a list of TYPE:REF texts or {type, target} mappings")
        refs.append(Ref(target, "deps", number, dep_type))
    return refs


# ------------------------------------------------------------------ building cells


@dataclass
class _Build:
    """The state of one attempt at building the cells (re-run on a fresh HEAD)."""

    specs: list[Spec]
    by_key: dict[str, Spec]
    problems: Problems
    resolved: dict[str, str] = field(default_factory=dict)  # existing refs seen -> id


def create_cells(
    ws: Workspace,
    *,
    specs: Sequence[Mapping[str, Any]] | None = None,
    cells_file: CellFile | None = None,
    progress: Progress | None = None,
) -> CreatedCells:
    """Create every cell of ``cells_file`` (or of ``specs``, plain mappings) in one commit.

    References (``parent``, ``deps``, ``blocks``) name a ``key`` of another entry
    or an existing cell. Nothing is written unless every entry is valid.
    """
    parsed = cells_file if cells_file is not None else specs_file(specs or [])
    total = len(parsed.entries)
    if not total:
        raise InvalidInput(f"{parsed.source}: no cells to create")
    problems = Problems(parsed)
    checked: list[Spec] = []
    for done, entry in enumerate(parsed.entries, 1):
        spec = check_entry(entry, problems)
        if spec is not None:
            checked.append(spec)
        if progress is not None and (done % 500 == 0 or done == total):
            progress("checking", done, total)
    by_key = _keys(checked, problems)
    first_problems = list(problems.found)

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        problems.found = list(first_problems)
        build = _Build(checked, by_key, problems)
        cells = _build_cells(ws, snap, index, build, total, progress)
        if progress is not None:
            progress("writing", 0, total)
        ids = [cell.id for cell in cells]
        keys = {spec.key: cell.id for spec, cell in zip(checked, cells, strict=True) if spec.key}
        result = CreatedCells(count=len(cells), ids=ids, keys=keys)
        return cells, counted(len(cells), "cell"), f"from {os.path.basename(parsed.source)}", result

    outcome = ws.write(plan, event="create")
    created: CreatedCells = outcome.result
    created.commit = outcome.commit
    if progress is not None:
        progress("writing", total, total)
    return created


def _keys(specs: list[Spec], problems: Problems) -> dict[str, Spec]:
    by_key: dict[str, Spec] = {}
    for spec in specs:
        if spec.key is None:
            continue
        first = by_key.get(spec.key)
        if first is not None:
            where = problems.file.line_of(first.entry, "key")
            at = f"line {where}" if where is not None else f"entry {first.entry.number}"
            problems.add(spec.entry, f"key {spec.key!r} is already used ({at})", "key")
        else:
            by_key[spec.key] = spec
    return by_key


def _build_cells(
    ws: Workspace,
    snap: Snapshot,
    index: CellIndex,
    build: _Build,
    total: int,
    progress: Progress | None,
) -> list[Cell]:
    """Resolve references, allocate ids (parents first), build and check every cell."""
    problems = build.problems
    parents = {id(spec): _resolve_parent(index, build, spec) for spec in build.specs}
    targets = {id(spec): _resolve_deps(index, build, spec) for spec in build.specs}
    order = _parents_first(build, parents)
    problems.raise_if_any(total)
    ids = _allocate_ids(ws, snap, index, order, parents)
    start = utc_now() - timedelta(milliseconds=len(build.specs))
    cells: list[Cell] = []
    for number, spec in enumerate(build.specs):
        parent = parents[id(spec)]
        parent_id = ids[id(parent)] if isinstance(parent, Spec) else parent
        deps: list[Dependency] = []
        for dep_type, target in targets[id(spec)]:
            target_id = ids[id(target)] if isinstance(target, Spec) else target
            dep = Dependency.model_validate({"type": dep_type, "target": target_id})
            if dep not in deps:
                deps.append(dep)
        created = start + timedelta(milliseconds=number)  # the file's order is kept
        cell = _new_cell(ws, spec, ids[id(spec)], parent_id, deps, created, problems)
        if cell is not None:
            cells.append(cell)
        if progress is not None and ((number + 1) % 500 == 0 or number + 1 == len(build.specs)):
            progress("building", number + 1, len(build.specs))
    problems.raise_if_any(total)
    _refuse_cycles(index, build, cells)
    problems.raise_if_any(total)
    return cells


def _allocate_ids(
    ws: Workspace,
    snap: Snapshot,
    index: CellIndex,
    order: list[Spec],
    parents: dict[int, Spec | str | None],
) -> dict[int, str]:
    """A fresh id per entry, parents first (a child's id extends its parent's), checked
    against the ids known at this state (one set, extended as ids are taken)."""
    config = ws.config(snap)
    known: IdSet = index.known_ids()
    ids: dict[int, str] = {}
    for spec in order:
        parent = parents[id(spec)]
        parent_id = ids[id(parent)] if isinstance(parent, Spec) else parent
        if parent_id is None:
            cell_id = new_root_id(config.prefix, config.id_length, known.__contains__)
        else:
            cell_id = new_child_id(parent_id, config.child_id_length, known.__contains__)
        known.add(cell_id)
        ids[id(spec)] = cell_id
    return ids


def _resolve(index: CellIndex, build: _Build, spec: Spec, ref: Ref) -> Spec | str | None:
    """A local entry (by key) or an existing cell's id; None after reporting a problem."""
    local = build.by_key.get(ref.text)
    if local is not None:
        return local
    if ref.text in build.resolved:
        return build.resolved[ref.text]
    try:
        found = get_cell(index, ref.text).id
    except HiveError as exc:
        message = exc.message
        if exc.code == "not_found":
            message = f"{ref.field}: {ref.text!r} is neither a key of this file nor a cell"
        build.problems.add(spec.entry, message, ref.field, ref.item)
        return None
    build.resolved[ref.text] = found
    return found


def _resolve_parent(index: CellIndex, build: _Build, spec: Spec) -> Spec | str | None:
    if spec.parent is None:
        return None
    if spec.parent.text == spec.key:
        build.problems.add(spec.entry, "a cell cannot be its own parent", "parent")
        return None
    return _resolve(index, build, spec, spec.parent)


def _parents_first(build: _Build, parents: dict[int, Spec | str | None]) -> list[Spec]:
    """Entries ordered so that a parent in the file gets its id before its children."""
    children: dict[int, list[Spec]] = {}
    roots: list[Spec] = []
    for spec in build.specs:
        parent = parents[id(spec)]
        if isinstance(parent, Spec):
            children.setdefault(id(parent), []).append(spec)
        else:
            roots.append(spec)
    order: list[Spec] = []
    pending = list(reversed(roots))
    while pending:
        spec = pending.pop()
        order.append(spec)
        pending.extend(reversed(children.get(id(spec), [])))
    placed = {id(spec) for spec in order}
    for spec in build.specs:
        if id(spec) not in placed:
            build.problems.add(spec.entry, f"parent cycle through key {spec.key!r}", "parent")
    return order


def _resolve_deps(index: CellIndex, build: _Build, spec: Spec) -> list[tuple[str, Spec | str]]:
    """(type, target entry or existing id) of each dependency; problems are reported."""
    found: list[tuple[str, Spec | str]] = []
    for ref in spec.deps:
        if spec.key is not None and ref.text == spec.key:
            build.problems.add(spec.entry, "a cell cannot depend on itself", ref.field, ref.item)
            continue
        target = _resolve(index, build, spec, ref)
        if target is not None:
            found.append((ref.dep_type, target))
    return found


def _new_cell(
    ws: Workspace,
    spec: Spec,
    cell_id: str,
    parent_id: str | None,
    deps: list[Dependency],
    created: Any,
    problems: Problems,
) -> Cell | None:
    data = {
        "title": "",
        **spec.fields,
        "id": cell_id,
        "parent": parent_id,
        "dependencies": deps,
        "created_at": created,
        "updated_at": created,
        "created_by": ws.actor,
    }
    try:
        return Cell.model_validate(data)
    except ValidationError as exc:
        where, why = first_error(exc)
        name = {"files_owned": "files", "dependencies": "deps"}.get(where.split(".")[0], where)
        problems.add(spec.entry, f"invalid {name or 'cell'}: {why}", name or None)
        return None


def _refuse_cycles(index: CellIndex, build: _Build, cells: list[Cell]) -> None:
    """Dependency cycles through the new cells (with the existing ones they reach)."""
    new = {cell.id: cell for cell in cells}
    specs = dict(zip((cell.id for cell in cells), build.specs, strict=True))
    label = {cell.id: specs[cell.id].key or _quoted_title(cell.title) for cell in cells}
    for cycle in cycles_through(index, new):
        first = next(cell_id for cell_id in cycle if cell_id in new)
        chain = " -> ".join(label.get(cell_id, cell_id) for cell_id in cycle)
        build.problems.add(specs[first].entry, f"dependency cycle: {chain}", "deps")


def _quoted_title(title: str) -> str:
    return repr(title if len(title) <= 40 else title[:39] + "…")
