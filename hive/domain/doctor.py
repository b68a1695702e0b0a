"""``hive doctor``: find and explain everything wrong with a hive."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from hive.domain.config_sections import parsed_section
from hive.domain.graph import LightCell, LightGraph, find_cycles
from hive.domain.maintenance import object_store_health
from hive.domain.reading import COMMIT_CONFIG, committed_config_note, not_initialized
from hive.domain.setup import merge_setup_problems
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile, GitError, InvalidInput
from hive.git.index import index_mtime_ns, read_entries, stat_clean
from hive.git.repo import Snapshot
from hive.git.worktree import is_blob
from hive.models import Cell
from hive.models.results import DoctorReport, Problem
from hive.store.cache import CellIndex, collector_paused
from hive.store.cells import decode_config
from hive.store.ids import is_valid_id, parent_from_id
from hive.store.layout import (
    CELL_SUFFIX,
    CELLS_DIR,
    CONFIG_PATH,
    CONTEXT_PATH,
    HIVE_DIR,
    OUTCOMES_DIR,
    PERMISSIONS_DIR,
    cell_id_from_path,
    cell_path,
)
from hive.text import code_point, first_unprintable


def diagnose(ws: Workspace) -> DoctorReport:
    """Every problem found in the committed hive and in uncommitted .hive/ edits (with
    the cyclic garbage collector paused: the checks make a few objects per cell, none
    in a cycle, and at 100,000 cells the collections their allocation triggered were
    ~0.7 s)."""
    with collector_paused():
        return _diagnose(ws)


def _diagnose(ws: Workspace) -> DoctorReport:
    snap = ws.snapshot()
    config_sha = snap.blob_sha(CONFIG_PATH)
    if config_sha is None:
        raise not_initialized(ws.root)
    edited, edit_warnings = _config_edits(ws, config_sha)
    broken_config = _committed_config_problems(ws, config_sha)
    problems = broken_config + edited
    index = ws.cells(snap, config_loads=False)
    problems += _file_problems(index)
    problems += _object_problems(ws, index)
    problems += _layout_problems(snap.listing(CELLS_DIR))
    graph, conflicts, hidden = _cell_problems(index)
    problems += graph
    problems += _worktree_problems(ws, snap.listing(CELLS_DIR))
    problems += _reservation_file_problems(ws, snap)
    problems += _record_file_problems(ws, snap)
    settings: list[Problem] = []
    if not broken_config:  # these read the config's sections
        problems += _tools_config_problems(ws, snap)
        problems += _verify_problems(ws)
        settings = _unknown_setting_warnings(ws, snap)
    problems += symlink_problems(ws, snap)
    problems += _undecodable_name_problems(ws, snap)
    problems += conflicts
    problems += _config_conflicts(ws.git.read_blob(config_sha))
    problems += merge_setup_problems(ws, snap)
    problems += _contest_problems(ws, snap)
    problems += _git_state_problems(ws)
    credentials = _credential_problems(ws)
    problems += credentials
    problems += _place_problems(ws, snap)
    return DoctorReport(
        cells=len(index.blobs),
        problems=problems,
        warnings=edit_warnings
        + settings
        + hidden
        + _hidden_reservation_names(ws, snap)
        + _hidden_mail_names(ws)
        + _identity_warnings(ws, names_known=not credentials)
        + _signing_warnings(ws),
        objects=object_store_health(ws),
    )


def _committed_config_problems(ws: Workspace, config_sha: str) -> list[Problem]:
    """The committed config when it does not load (the cells are checked all the same:
    reading them does not need it)."""
    try:
        decode_config(ws.git.read_blob(config_sha), CONFIG_PATH)
    except CorruptFile as exc:
        message = exc.message + committed_config_note(ws.root, config_sha)
        return [Problem(kind="corrupt", message=message, path=CONFIG_PATH)]
    return []


def _place_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """A file where hive needs a directory: ``.hive/cells`` (committed or on disk: no
    cell can be read or written there) and hive's state directory (``.git/hive``:
    locks, the state index, credentials, agents' state)."""
    from hive.store.layout import state_dir_not_a_directory

    found: list[Problem] = []
    on_disk = os.path.join(ws.root, CELLS_DIR)
    if snap.blob_sha(CELLS_DIR) is not None or (
        os.path.lexists(on_disk) and not os.path.isdir(on_disk)
    ):
        message = (
            f"{CELLS_DIR} is a file, not the directory of cell files: no cell can be read"
            f" or written; move it away (git rm --cached {CELLS_DIR} if it is committed)"
        )
        found.append(Problem(kind="not-a-directory", message=message, path=CELLS_DIR))
    state_dir = ws.git.paths.hive_state_dir
    if os.path.lexists(state_dir) and not os.path.isdir(state_dir):
        message = state_dir_not_a_directory(state_dir).message
        found.append(Problem(kind="not-a-directory", message=message, path=state_dir))
    return found


def _config_edits(ws: Workspace, committed: str) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings) of a ``.hive/config.yaml`` edited on disk and not committed:
    hive reads the committed file, so such edits do nothing until they are committed."""
    path = os.path.join(ws.root, CONFIG_PATH)
    try:
        with open(path, "rb") as handle:
            content = handle.read()
    except OSError:
        return [], []
    if is_blob(content, committed):
        return [], []
    try:
        decode_config(content, CONFIG_PATH)
    except CorruptFile as exc:
        message = f"{exc.message} (uncommitted edits: fix them before you commit them)"
        return [Problem(kind="corrupt-uncommitted", message=message, path=CONFIG_PATH)], []
    message = (
        f"{CONFIG_PATH} has uncommitted edits: hive reads the committed file, so they take"
        f" effect once committed ({COMMIT_CONFIG})"
    )
    return [], [Problem(kind="config-uncommitted", message=message, path=CONFIG_PATH)]


def _unknown_setting_warnings(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """A top-level key of the committed config that hive does not read, with the setting
    meant: a misspelt ``tool:`` would leave every path rule unapplied, silently."""
    from difflib import get_close_matches

    from hive.domain.config_sections import config_line
    from hive.models.config import known_settings

    found = []
    for key in ws.config(snap).unknown_settings():
        near = get_close_matches(key, known_settings(), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        message = (
            f"{CONFIG_PATH}:{config_line(ws, [key], snap)}: hive reads no setting"
            f" {key!r}{hint}: it has no effect"
        )
        found.append(Problem(kind="unknown-setting", message=message, path=CONFIG_PATH))
    return found


def _verify_problems(ws: Workspace) -> list[Problem]:
    """A malformed ``verify:`` (swarm_complete's gate) or ``swarm:`` (hive swarm run's
    settings), with its line."""
    from hive.domain.swarm.verify import swarm_settings, verify_settings
    from hive.errors import InvalidInput

    found = []
    for check in (verify_settings, swarm_settings):
        try:
            check(ws)
        except InvalidInput as exc:
            found.append(Problem(kind="config", message=exc.message, path=CONFIG_PATH))
    return found


def _undecodable_name_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """Committed names below .hive that are not UTF-8: no file of hive's, and a sync
    cannot merge them (it refuses naming them)."""
    return [
        Problem(
            kind="undecodable-name",
            message=f"{path}: a name that is not UTF-8 is committed in .hive (hive names its"
            " files in UTF-8; hive sync refuses to merge it): rename or remove it with git mv"
            " or git rm",
            path=path,
        )
        for path in ws.git.undecodable_below(snap.tree, HIVE_DIR)
    ]


def symlink_problems(ws: Workspace, snap: Snapshot | None = None) -> list[Problem]:
    """Symlinks in .hive/, committed or only on disk: hive refuses to write through
    them (a symlinked directory would send its writes outside the repository)."""
    snap = snap or ws.snapshot()
    found = [
        Problem(
            kind="symlink",
            message=f"{path} is committed as a symlink: hive refuses to write through it;"
            " replace it with a real file or directory",
            path=path,
        )
        for path in ws.git.symlinks_below(snap.tree, HIVE_DIR)
    ]
    committed = {problem.path for problem in found}
    for path in _disk_symlinks(ws.root):
        if path not in committed:
            found.append(
                Problem(
                    kind="symlink",
                    message=f"{path} is a symlink in the working tree: hive refuses to write"
                    " through it; replace it with a real file or directory",
                    path=path,
                )
            )
    return found


def _disk_symlinks(root: str) -> list[str]:
    if os.path.islink(os.path.join(root, HIVE_DIR)):
        return [HIVE_DIR]
    return sorted(
        relative + "/" + entry.name
        for relative, entries in _walk(root, HIVE_DIR)
        for entry in entries
        if entry.is_symlink()
    )


AUDITED_COMMITS = 500


def _credential_problems(ws: Workspace) -> list[Problem]:
    """The clone's credential store (``.git/hive/identities.json``) when it cannot be
    read: no agent can prove its name until it is moved aside, and the audit of
    commits' agents, which needs the names registered here, is left out."""
    from hive.store import credentials

    try:
        credentials.load(ws.git.paths.hive_state_dir)
    except CorruptFile as exc:
        path = os.path.relpath(credentials.path_of(ws.git.paths.hive_state_dir), ws.root)
        return [Problem(kind="corrupt", message=exc.message, path=path)]
    return []


def _identity_warnings(ws: Workspace, *, names_known: bool) -> list[Problem]:
    """Overrides and unverifiable hive commits among the latest commits, .hive/ changes
    committed without hive's trailers, claimed cells changed without an override and
    mail-log events not authored by their actor (see ``hive log --overrides``);
    ``names_known``: the credential store reads (else the agent-name audit is left out)."""
    from hive.domain.history import (
        audit_log,
        claim_breaches,
        hand_edits,
        latest_commits,
        merge_edits,
        merge_state_edits,
        reserved_changes,
    )
    from hive.domain.mail import forged_marks
    from hive.domain.maillog import MAIL_REF
    from hive.domain.syncaudit import SyncCommits

    commits = latest_commits(ws, AUDITED_COMMITS)  # one walk, read by the three audits
    syncs = SyncCommits(ws)  # the state history, read (when needed) once for both audits
    found: list[Problem] = []
    if names_known:  # who is registered here (else the store does not read: not audited)
        found += [
            Problem(kind=entry.kind, message=f"{entry.commit[:10]} {entry.detail}")
            for entry in audit_log(ws, limit=AUDITED_COMMITS, commits=commits)
        ]
    found += _commit_warnings(
        "hand-edit",
        hand_edits(ws, limit=AUDITED_COMMITS, commits=commits),
        "changed .hive/ without hive's trailers ({}): made by hand or with HIVE_AUTOCOMMIT=0;"
        " review it with git show",
    )
    found += _commit_warnings(
        "hand-edit",
        merge_edits(ws, limit=AUDITED_COMMITS, commits=commits, syncs=syncs),
        f"is a merge that left {CONFIG_PATH} as neither parent's version nor a merge of"
        " theirs ({}): edited by hand during the merge (who coordinates, the agents' tools"
        " and policy); review it with git show",
    )
    found += _commit_warnings(
        "hand-edit",
        merge_state_edits(ws, limit=AUDITED_COMMITS, commits=commits, syncs=syncs),
        "is a merge that left {}: a version neither parent had nor a merge of theirs"
        " (unclaimed cells, the project memory, permission decisions): edited by hand"
        " during the merge; review it with git show",
    )
    unfetched: list[tuple[str, str]] = []
    found += _commit_warnings(
        "not-owner",
        claim_breaches(
            ws, limit=AUDITED_COMMITS, commits=commits, unfetched=unfetched, syncs=syncs
        ),
        "{} without an override (hive refuses that; made by hand past the pre-commit hook,"
        " or under trailers written by hand): review it with git show",
    )
    found += _commit_warnings(
        "reserved-change",
        reserved_changes(ws, limit=AUDITED_COMMITS, commits=commits),
        "{} without an override: no pre-commit hook stopped it (committed with"
        " --no-verify or where hive's hooks are not installed, then brought here by a"
        " fast-forward merge or a pull, which run no hook); review it with git show",
    )
    found += _commit_warnings(
        "unverified-sync",
        unfetched,
        "is {}, and this clone has not fetched that state: what it changed of others'"
        " claimed cells and reservations is not checked; run 'hive sync' (or 'git fetch'),"
        " then 'hive doctor' again (a state that was never pushed stays unchecked: review"
        " the commit with git show)",
    )
    found += _commit_warnings(
        "author-mismatch",
        forged_marks(ws, limit=AUDITED_COMMITS),
        f"({MAIL_REF}) {{}}: made by hand, not by hive; do not trust it as that agent's",
    )
    return found


def _commit_warnings(kind: str, found: list[tuple[str, str]], template: str) -> list[Problem]:
    """A ``kind`` warning per (commit, what) of ``found``: the short commit id, then
    ``template`` with ``what`` in its place."""
    return [
        Problem(kind=kind, message=f"{sha[:10]} {template.format(what)}") for sha, what in found
    ]


def _signing_warnings(ws: Workspace) -> list[Problem]:
    """``commit.gpgsign`` asks git to sign commits; hive's own are made without gpg."""
    from hive.git.configfile import flag

    if not flag(ws.git.paths, "commit", "gpgsign"):
        return []
    message = (
        "commit.gpgsign is set, but hive's own commits are not signed (hive writes them"
        " without gpg); a remote or branch rule that requires signed commits refuses them"
    )
    return [Problem(kind="unsigned-commits", message=message)]


def _reservation_file_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """Reservation files that cannot be trusted (their reservations are not enforced)."""
    from hive.domain.reservations import reservation_problems

    return [
        Problem(kind="corrupt-reservations", message=found.message, path=found.path)
        for found in reservation_problems(ws, snap)
    ]


def _record_file_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """A truncated or broken project memory (.hive/context.yaml: inject_context and
    update_context fail), permission decision (its grant no longer counts) or outcome
    record (learning no longer sees it): the readers skip the last two. Each reader
    (and its models) is imported only when there is such a file to read."""
    found = []
    if snap.blob_sha(CONTEXT_PATH) is not None:  # without one: the empty memory
        from hive.domain.memory import load_context

        try:
            load_context(ws, snap)
        except CorruptFile as exc:
            message = f"{exc.message} (inject_context and update_context fail until it is fixed)"
            found.append(Problem(kind="corrupt", message=message, path=CONTEXT_PATH))
    records = [
        (PERMISSIONS_DIR, _decode_decision, "ignored: a grant it records no longer counts"),
        (OUTCOMES_DIR, _decode_outcome, "ignored: strategy selection no longer learns from it"),
    ]
    for directory, decode, lost in records:
        for path, sha in sorted(snap.listing(directory).items()):
            try:
                decode(ws.git.read_blob(sha), path)
            except CorruptFile as exc:
                message = f"{exc.message} ({lost})"
                found.append(Problem(kind="corrupt", message=message, path=path))
    return found


def _decode_decision(content: bytes, path: str) -> Any:
    from hive.domain.permissions import decode_decision

    return decode_decision(content, path)


def _decode_outcome(content: bytes, path: str) -> Any:
    from hive.domain.outcomes import decode_outcome

    return decode_outcome(content, path)


def _tools_config_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """A bad ``tools:`` (or ``permission_policy:``) section fails agent tool calls:
    report it here too (``tools:`` as the calls parse it, path rules' globs included)."""
    from hive.domain.governance import parse_settings
    from hive.models.agents_config import parse_agents_config
    from hive.models.policy import parse_policy

    problems = []
    parsers: list[tuple[Callable[[Any], Any], str]] = [
        (parse_settings, "tools"),
        (parse_policy, "permission_policy"),
        (parse_agents_config, "agents"),
    ]
    for parse, key in parsers:
        try:
            parsed_section(ws, key, parse, snap)
        except InvalidInput as exc:  # named with its line
            problems.append(Problem(kind="config", message=exc.message, path=CONFIG_PATH))
    return problems


def _contest_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """Overlapping exclusive reservations a merge brought in that no sync has settled."""
    from hive.domain.contest import unsettled_contests

    return [
        Problem(
            kind="contested-reservation",
            message=f"{c.kept.agent}'s {c.kept.path_pattern!r} and {c.yielded.agent}'s"
            f" {c.yielded.path_pattern!r} are both held exclusively (granted in different"
            f" clones); the earliest grant wins: run 'hive sync' to settle it and tell both",
        )
        for c in unsettled_contests(ws, snap)
    ]


def _git_state_problems(ws: Workspace) -> list[Problem]:
    """The user's git is mid-operation (or detached): hive refuses to commit until done."""
    from hive.git.state import git_state_problem

    problem = git_state_problem(ws.git.paths, ws.git.head())
    return [] if problem is None else [Problem(kind="git-state", message=problem)]


def _cell_problems(index: CellIndex) -> tuple[list[Problem], list[Problem], list[Problem]]:
    """(graph problems, merge conflicts, names holding hidden characters) of the cells,
    read from their stored JSON in one pass by id (a cell is decoded into its model only
    to word its conflicts)."""
    graph: list[Problem] = []
    conflicts: list[Problem] = []
    hidden: list[Problem] = []
    light: dict[str, LightCell] = {}
    for cell_id, document in index.documents(sorted(index.blobs)):
        graph += _edge_problems(index, document)
        hidden += _hidden_names(cell_id, document)
        if document["conflicts"]:
            conflicts += _merge_conflicts(index, index.cells[cell_id])
        light[cell_id] = LightCell(document)
    for cycle in find_cycles(LightGraph(index, light)):
        graph.append(
            Problem(kind="cycle", message="dependency cycle: " + " -> ".join(cycle), cell=cycle[0])
        )
    return graph, conflicts, hidden


def _hidden_names(cell_id: str, document: dict[str, Any]) -> list[Problem]:
    """A warning for each label, assignee or owned file pattern of a cell that holds a
    character not shown as itself (a right-to-left override, a zero-width space): hive
    refuses such names when written, so it came by a hand edit or a merge; removing it
    is allowed."""
    found: list[Problem] = []
    names = [("label", label) for label in document.get("labels") or ()]
    if document.get("assignee"):
        names.append(("assignee", document["assignee"]))
    names += [("owned file pattern", glob) for glob in document.get("files_owned") or ()]
    fixes = {
        "label": "--remove-label NAME' removes it",
        "assignee": "--assignee NAME' replaces it",
        "owned file pattern": "--files GLOB ...' replaces the cell's patterns",
    }
    for what, name in names:
        fix = f"'hive update {cell_id} {fixes[what]}"
        message = _hidden_message(f"{cell_id} {what}", name, fix)
        if message is not None:
            found.append(Problem(kind="hidden-character", message=message, cell=cell_id))
    return found


def _hidden_message(where: str, name: object, fix: str) -> str | None:
    """The ``hidden-character`` warning for ``name`` (a name read back, not written by
    hive) when it holds a character hive refuses in a name; None when it holds none."""
    hit = first_unprintable(name) if isinstance(name, str) else None
    if hit is None:
        return None
    position, char = hit
    return (
        f"{where} {name!r} holds {code_point(char)} at position {position} (written by"
        f" hand or merged: hive refuses it in a name); {fix}"
    )


def _hidden_reservation_names(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """A ``hidden-character`` warning for each reservation file whose agent, and each
    reservation whose pattern, holds a character hive refuses in a name (a file written
    by hand or merged from another clone)."""
    from hive.domain.reservations import load_reservations
    from hive.domain.reservecore import reservation_path
    from hive.text import shell_word

    found: list[Problem] = []
    for agent, data in sorted(load_reservations(ws, snap).files.items()):
        path = reservation_path(agent)
        fix = f"'git rm {shell_word(path)}' and a commit drop its reservations"
        message = _hidden_message(f"{path} agent", agent, fix)
        if message is not None:
            found.append(Problem(kind="hidden-character", message=message, path=path))
            continue  # its reservations go with the file
        for item in data.reservations:
            fix = (
                f"'hive release --id {item.id} --agent {shell_word(agent)} --reason TEXT'"
                " releases it"
            )
            where = f"{path} reservation #{item.id} pattern"
            message = _hidden_message(where, item.path_pattern, fix)
            if message is not None:
                found.append(Problem(kind="hidden-character", message=message, path=path))
    return found


def _hidden_mail_names(ws: Workspace) -> list[Problem]:
    """A ``hidden-character`` warning for each name in the mail log (an agent
    registered, a sender, a recipient, a thread id) that holds a character hive refuses
    in a name: an event committed to ``refs/hive/mail`` by hand or merged from a clone
    that allowed it. The log is append-only: the warning says whom to be wary of."""
    from hive.domain.maillog import MAIL_REF, state_of

    state = state_of(ws)
    names: dict[tuple[str, object], None] = {}  # in the order first met
    for agent in state.agents:
        names[("agent", agent)] = None
    for sent in state.messages.values():
        names[("sender", sent.get("from"))] = None
        for recipient in sent.get("to") or ():
            names[("recipient", recipient)] = None
        if sent.get("thread_id"):
            names[("thread id", sent["thread_id"])] = None
    fix = f"{MAIL_REF} is append-only, so it stays: --json output gives the name exactly"
    found = []
    for what, name in names:
        message = _hidden_message(f"mail log {what}", name, fix)
        if message is not None:
            found.append(Problem(kind="hidden-character", message=message))
    return found


def _merge_conflicts(index: CellIndex, cell: Cell) -> list[Problem]:
    """Values a merge did not keep (both sides changed the field): shown until resolved."""
    found = []
    for record in cell.conflicts:
        if record.field == "file":
            what = "one side's file did not parse; its text is kept in the cell's conflicts"
        else:
            what = (
                f"both sides changed {record.field}: kept {_short(record.kept)},"
                f" the other side had {_short(record.other)}"
            )
        found.append(
            Problem(
                kind="merge-conflict",
                message=f"{cell.id}: {what} (see 'hive show {cell.id}',"
                f" then 'hive resolve {cell.id}')",
                cell=cell.id,
                path=index.paths.get(cell.id),
            )
        )
    return found


def _config_conflicts(content: bytes) -> list[Problem]:
    """Settings both clones changed that a sync merged (``# hive merge conflict:`` lines
    of the committed config): shown until someone deletes the line."""
    from hive.domain.merge import CONFIG_CONFLICT

    text = content.decode("utf-8", errors="replace")
    return [
        Problem(
            kind="merge-conflict",
            message=f"{CONFIG_PATH}: {line.removeprefix(CONFIG_CONFLICT)}",
            path=CONFIG_PATH,
        )
        for line in text.splitlines()
        if line.startswith(CONFIG_CONFLICT)
    ]


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _file_problems(index: CellIndex) -> list[Problem]:
    return [
        Problem(kind="corrupt", message=err.message, path=path, cell=cell_id_from_path(path))
        for path, err in sorted(index.problems.items())
    ]


def _object_problems(ws: Workspace, index: CellIndex) -> list[Problem]:
    """Cell files whose git object cannot be read any more (the state index may still
    know what they held: it is keyed by blob id). A packed object whose bytes match the
    CRC-32s its pack index recorded is whole without being read; the others are read."""
    found = []
    whole = ws.git.blobs_known_whole(list(index.blobs.values()))
    for cell_id, sha in sorted(index.blobs.items()):
        if sha.startswith("mem:") or sha in whole:
            continue
        try:
            ws.git.read_blob(sha)
        except Exception as exc:  # dulwich: zlib, checksum, missing object, ...
            path = index.paths.get(cell_id, cell_id)
            message = (
                f"{path}: its git object {sha[:12]} cannot be read ({type(exc).__name__});"
                " run 'git fsck', and restore the object from another clone or a backup"
            )
            found.append(Problem(kind="corrupt", message=message, path=path, cell=cell_id))
    return found


def _layout_problems(listing: dict[str, str]) -> list[Problem]:
    found = []
    for path in sorted(listing):
        cell_id = cell_id_from_path(path)
        if cell_id is None:
            found.append(Problem(kind="stray-file", message=f"{path}: not a cell file", path=path))
        elif not is_valid_id(cell_id):
            found.append(
                Problem(kind="bad-id", message=f"{path}: {cell_id!r} is not a valid id", path=path)
            )
        elif cell_path(cell_id) != path:
            found.append(
                Problem(
                    kind="misplaced",
                    message=f"{path}: should be at {cell_path(cell_id)}",
                    path=path,
                    cell=cell_id,
                )
            )
    return found


def _edge_problems(index: CellIndex, cell: dict[str, Any]) -> list[Problem]:
    """A cell's dependencies and parent that name no cell, and a parent its id denies."""
    found: list[Problem] = []
    cell_id, parent = cell["id"], cell["parent"]
    for dep in cell["dependencies"]:
        if dep["target"] not in index.blobs:
            found.append(
                Problem(
                    kind="dangling-dependency",
                    message=f"{cell_id} has a {dep['type']} dependency on missing {dep['target']}",
                    cell=cell_id,
                )
            )
    if parent and parent not in index.blobs:
        found.append(
            Problem(
                kind="dangling-parent",
                message=f"{cell_id} has missing parent {parent}",
                cell=cell_id,
            )
        )
    implied = parent_from_id(cell_id)
    if implied is not None and parent != implied:
        found.append(
            Problem(
                kind="parent-mismatch",
                message=f"{cell_id}: its id names parent {implied} but parent is {parent}",
                cell=cell_id,
            )
        )
    return found


def _worktree_problems(ws: Workspace, committed: dict[str, str]) -> list[Problem]:
    """Cell files edited in the working tree (not committed) that would not load. A file
    git's index calls unchanged since it was staged (its stat data, by git's racy-timestamp
    rule: ``index.stat_clean``), staged as the committed blob, is the committed file and is
    not read; every other file is read and checked (a symlink is not followed: it is
    reported as one)."""
    from hive.domain.damage import (
        decode_problem,
        directories_in_place_of_cells,
        directory_message,
    )

    found: list[Problem] = [
        Problem(kind="not-a-file", message=directory_message(rel), path=rel)
        for rel in directories_in_place_of_cells(ws)
        if not any(path.startswith(rel + "/") for path in committed)  # else: with the cells
    ]
    index_path = ws.git.paths.index_path
    try:
        staged = read_entries(index_path, CELLS_DIR + "/")
    except GitError:  # an index hive cannot read (split, version 4): every file is read
        staged = {}
    written = index_mtime_ns(index_path)
    for relative, entries in _walk(ws.root, CELLS_DIR):
        for item in sorted((e for e in entries if not _is_dir(e)), key=lambda e: e.name):
            if not item.name.endswith(CELL_SUFFIX) or item.is_symlink():
                continue  # a symlink is a problem of its own (symlink_problems), not read
            rel = relative + "/" + item.name
            entry = staged.get(rel)
            if (
                entry is not None
                and committed.get(rel) == entry.sha.decode()
                and stat_clean(item.stat(follow_symlinks=False), entry, written)
            ):
                continue
            try:
                with open(item.path, "rb") as handle:
                    content = handle.read()
            except FileNotFoundError:
                continue  # removed since it was listed (a write under way)
            if rel in committed and is_blob(content, committed[rel]):
                continue
            problem = decode_problem(content, rel)
            if problem is not None:
                found.append(
                    Problem(
                        kind="corrupt-uncommitted",
                        message=problem,
                        path=rel,
                        cell=cell_id_from_path(rel),
                    )
                )
    return found


def _walk(root: str, relative: str) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """(directory relative to ``root``, its entries) for ``relative`` and every directory
    below it, in ``os.walk``'s order (top down, subdirectories as listed, symlinks to
    directories not followed), keeping the entries' file types (no ``stat`` per name)."""
    try:
        with os.scandir(os.path.join(root, relative)) as listing:
            entries = list(listing)
    except OSError:
        return
    yield relative, entries
    for entry in entries:
        if _is_dir(entry) and not entry.is_symlink():
            yield from _walk(root, relative + "/" + entry.name)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
