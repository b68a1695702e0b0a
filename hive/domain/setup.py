"""``hive init``: create .hive/config.yaml in one commit, install the merge driver
and the remotes' refspecs for hive's refs (all idempotent)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import Any

from pydantic import ValidationError

from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput
from hive.git.gitconfig import GitConfig, check_attribute, get_all, git_available
from hive.git.repo import Change, Snapshot, format_message
from hive.git.worktree import blob_sha_of, is_blob
from hive.models import HiveConfig
from hive.models.cell import first_error
from hive.models.results import InitResult, Problem
from hive.store.cells import decode_config, encode_config
from hive.store.layout import CONFIG_PATH

ATTRIBUTES_PATH = ".gitattributes"
ATTRIBUTES_COMMENT = "# hive: merge .hive/ files field by field (hive init; see docs/sync.md)"
ATTRIBUTE_LINES = (
    ".hive/cells/** merge=hive",
    ".hive/reservations/** merge=hive",
    ".hive/context.yaml merge=hive",
)
SAMPLE_PATHS = (".hive/cells/x/hv-x.yaml", ".hive/reservations/agent.yaml", ".hive/context.yaml")
DRIVER_KEY = "merge.hive.driver"
DRIVER_NAME_KEY = "merge.hive.name"
DRIVER_MODULE = "hive.cli.merge_driver"


def init_hive(ws: Workspace, *, prefix: str | None = None) -> InitResult:
    """Create the hive in this repository; a second run changes nothing."""
    _refuse_hive_file(ws)
    try:
        config = HiveConfig(prefix=prefix) if prefix else HiveConfig()
    except ValidationError as exc:
        raise InvalidInput(f"invalid prefix {prefix!r}: {first_error(exc)[1]}") from None
    git_config = GitConfig(ws.root) if git_available() else None  # read once for all
    remote = RemoteSettings() if _has_config(ws) else _remote_settings(ws, git_config)
    settings = encode_config(config)
    if remote.data is not None:
        settings, config = remote.data, decode_config(remote.data, CONFIG_PATH)

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        changes: list[Change] = []
        created = snap.blob_sha(CONFIG_PATH) is None
        if created:
            changes.append(Change(CONFIG_PATH, settings))
        attributes = _attributes_change(ws, snap)
        if attributes is not None:
            changes.append(attributes[0])
        if not changes:
            return [], "", (False, "")
        subject = (
            f"hive: init (prefix {config.prefix})" if created else "hive: init merge attributes"
        )
        done = (created, attributes[1] if attributes is not None else "")
        return changes, format_message(subject, ws.trailers("init")), done

    written = ws.write_files(plan)
    existing = ws.config()
    from hive.domain.sync import configure_remotes

    driver = install_merge_driver(ws, git_config)
    unpushed = _without_push_refspecs(git_config)
    remotes = configure_remotes(ws, config=git_config)
    notes = _push_notes(ws, git_config, [name for name in unpushed if remotes.get(name)])
    created, attributes = written.result
    return InitResult(
        root=ws.root,
        prefix=existing.prefix,
        created=created,
        commit=written.commit if created else None,
        attributes=attributes,
        merge_driver=driver,
        remotes=list(remotes),
        remotes_configured=[name for name, changed in remotes.items() if changed],
        settings_from=remote.name if remote.data is not None and written.result else None,
        remote_note=remote.note,
        notes=notes,
    )


def _without_push_refspecs(config: GitConfig | None) -> list[str]:
    """The remotes with no push refspec: ``configure_remotes`` gives them ``push =
    HEAD`` (with hive's own), which changes where a plain ``git push`` goes."""
    if config is None:
        return []
    return [name for name in config.remotes() if not config.get_all(f"remote.{name}.push")]


def _push_notes(ws: Workspace, config: GitConfig | None, remotes: list[str]) -> list[str]:
    """What ``push = HEAD``, just added to ``remotes``, changes for the current branch:
    git then pushes it to the branch of the same name there, whatever push.default says
    (docs/sync.md, "Plain git fetch and git push"), so a branch whose upstream has
    another name is no longer refused (push.default simple) nor sent to its upstream."""
    branch = ws.git.head().ref
    if config is None or not remotes or branch is None or not branch.startswith("refs/heads/"):
        return []
    name = branch.removeprefix("refs/heads/")
    upstream = config.get_all(f"branch.{name}.merge")
    tracked = config.get_all(f"branch.{name}.remote")
    if not upstream or not tracked or tracked[-1] not in remotes or upstream[-1] == branch:
        return []
    remote, target = tracked[-1], upstream[-1].removeprefix("refs/heads/")
    return [
        f"plain 'git push' now sends {name} to {remote}/{name} (its upstream is"
        f" {remote}/{target}): push it there with 'git push {remote} {name}:{target}'"
    ]


# ``hive init``'s fetch of the remote's hive is a courtesy (its settings, else the
# defaults): it asks for no password (an agent's init would wait for one) and gives a
# remote that does not answer this long, not git's own minutes (``rungit.FETCH_TIMEOUT``).
INIT_FETCH_SECONDS = 20.0


class RemoteSettings:
    """What a first ``hive init`` found of the remote's hive: the remote's name, its
    ``.hive/config.yaml`` as ``hive sync`` last left it on ``refs/hive/state`` (None: no
    hive there), and a note when the remote could not be read."""

    def __init__(self, name: str = "", data: bytes | None = None, note: str = "") -> None:
        self.name, self.data, self.note = name, data, note


def _has_config(ws: Workspace) -> bool:
    """Whether HEAD's commit carries a hive already (``init`` run again, or a clone of a
    branch that has one): then nothing is fetched."""
    head = ws.git.head().commit
    if head is None:
        return False
    return ws.git.lookup_path(ws.git.commit_tree(head), CONFIG_PATH) is not None


def _remote_settings(ws: Workspace, git_config: GitConfig | None) -> RemoteSettings:
    """The settings of the hive the remote ``hive sync`` talks to carries (the branch's
    upstream remote, else the only one, else ``origin``), fetched as
    ``hive sync`` fetches them: a clone made with ``git clone`` gets the branch, not
    ``refs/hive/*``, so a first ``hive init`` there wrote the defaults, and the first
    sync then found two configs in conflict (another prefix, the coordinators)."""
    from hive.errors import GitError
    from hive.git.remote import HIVE_REFS, STATE_REF, fetch_refs, tracking_ref

    if git_config is None or not git_config.remotes():
        return RemoteSettings()
    try:  # the remote 'hive sync' talks to (none when it would ask which)
        name = git_config.default_remote(ws.git.head().ref, "hive sync")
    except HiveError:
        return RemoteSettings()
    try:
        into = tracking_ref(name, "*")
        fetch_refs(ws.root, name, HIVE_REFS, into, timeout=INIT_FETCH_SECONDS)
    except GitError as exc:
        return RemoteSettings(name, note=f"could not read {name}'s hive ({exc})")
    state = ws.git.ref_value(tracking_ref(name, STATE_REF.rsplit("/", 1)[-1]))
    blob = ws.git.lookup_path(ws.git.commit_tree(state), CONFIG_PATH) if state else None
    if blob is None:
        return RemoteSettings(name)
    data = ws.git.read_blob(blob)
    try:
        decode_config(data, CONFIG_PATH)
    except HiveError as exc:
        return RemoteSettings(name, note=f"{name}'s hive settings do not load ({exc})")
    return RemoteSettings(name, data)


def _refuse_hive_file(ws: Workspace) -> None:
    """``.hive`` must be a directory (or absent): say so, with the way out."""
    place = os.path.join(ws.root, ".hive")
    if os.path.lexists(place) and not os.path.isdir(place):
        kind = "a symlink" if os.path.islink(place) else "a file"
        raise InvalidInput(
            f"{place} is {kind}, not a directory: hive keeps its cells in .hive/;"
            " move or rename it, then run 'hive init' again",
            path=".hive",
        )


def _attributes_change(ws: Workspace, snap: Snapshot) -> tuple[Change, str] | None:
    """hive's lines put last in the root ``.gitattributes`` (added, or moved after a line
    that overrides them, such as ``* merge=union``; everything else in it kept), unless
    git already routes hive's files to the driver (from any attributes file). A
    ``.gitattributes`` with uncommitted edits, staged or not, is left alone (doctor then
    says so)."""
    if _routed(ws):
        return None
    current = snap.read(ATTRIBUTES_PATH)
    text = current.decode("utf-8", errors="replace") if current is not None else ""
    wanted = _hive_lines_last(text)
    if wanted == text:
        return None  # already last: what overrides them is in another file (doctor says so)
    if _attributes_edited(ws, current):
        return None  # the user's own uncommitted edits: never swept into a hive commit
    present = set(text.splitlines())
    done = "moved last" if all(line in present for line in ATTRIBUTE_LINES) else "added"
    return Change(ATTRIBUTES_PATH, wanted.encode()), done


def _attributes_edited(ws: Workspace, committed: bytes | None) -> bool:
    """Whether ``.gitattributes`` has uncommitted edits: staged (``git add``), or in the
    working tree, against ``committed`` (HEAD's content; None: none)."""
    blob = blob_sha_of(committed) if committed is not None else None
    if ws.git.staged_blob(ATTRIBUTES_PATH) != blob:
        return True
    on_disk = os.path.join(ws.root, ATTRIBUTES_PATH)
    if not os.path.lexists(on_disk):
        return False
    with open(on_disk, "rb") as handle:
        return not is_blob(handle.read(), blob_sha_of(committed or b""))


def _hive_lines_last(text: str) -> str:
    """``text`` with hive's comment and lines at its end, once each (git takes the last
    line that matches a path, so nothing in the file can override them)."""
    block = (ATTRIBUTES_COMMENT, *ATTRIBUTE_LINES)
    kept = "".join(
        line for line in text.splitlines(keepends=True) if line.rstrip("\r\n") not in block
    )
    if kept and not kept.endswith("\n"):
        kept += "\n"
    return kept + "".join(line + "\n" for line in block)


def _routed(ws: Workspace) -> bool:
    """Whether git sends cell and reservation files to the ``hive`` merge driver."""
    return not _unrouted(ws)


def _unrouted(ws: Workspace) -> dict[str, str | None]:
    """The sample paths git does not send to the ``hive`` merge driver, with the merge
    attribute it gives them instead (all of them when git is missing)."""
    if not git_available():
        return dict.fromkeys(SAMPLE_PATHS)
    drivers = check_attribute(ws.root, SAMPLE_PATHS, "merge")
    return {path: drivers.get(path) for path in SAMPLE_PATHS if drivers.get(path) != "hive"}


def driver_command() -> str:
    """The merge driver command line git runs (this interpreter, like the hook)."""
    return f"{shlex.quote(sys.executable)} -m {DRIVER_MODULE} %O %A %B %P"


def install_merge_driver(ws: Workspace, config: GitConfig | None = None) -> str:
    """Configure ``merge.hive.driver`` in this clone: installed, unchanged, or why not."""
    if not git_available():
        return "skipped: no git program found (nothing to configure)"
    config = config or GitConfig(ws.root)
    changed = config.set_value(DRIVER_KEY, driver_command())
    config.set_value(DRIVER_NAME_KEY, "hive field-level merge of .hive/ files")
    return "installed" if changed else "unchanged"


def merge_setup_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """What keeps ``git merge`` from merging cells field by field in this clone."""
    if not git_available():
        return []
    found: list[Problem] = []
    unrouted = _unrouted(ws)
    if unrouted:
        message = _unrouted_message(ws, unrouted)
        if _attributes_edited(ws, snap.read(ATTRIBUTES_PATH)):
            message += f" (first commit or undo your uncommitted edits of {ATTRIBUTES_PATH}:"
            message += " hive init leaves them alone)"
        found.append(Problem(kind="merge-driver", message=message, path=ATTRIBUTES_PATH))
    configured = get_all(ws.root, DRIVER_KEY)
    if not configured:
        found.append(
            Problem(
                kind="merge-driver",
                message="git merge driver 'hive' is not configured in this clone, so git"
                " merges cells line by line (conflict markers); run 'hive init'",
            )
        )
    elif not _driver_runs(configured[-1]):
        found.append(
            Problem(
                kind="merge-driver",
                message=f"git merge driver 'hive' runs {configured[-1]!r}, which is not"
                " available; run 'hive init' to point it at this hive",
            )
        )
    return found


_MERGE_VALUES = {
    "unset": "-merge (as binary files)",
    "set": "merge (git's line merge)",
    None: "their merge attribute unspecified (!merge: git's line merge)",
}


def _unrouted_message(ws: Workspace, unrouted: dict[str, str | None]) -> str:
    """Why git does not send hive's files to its driver, and the way out."""
    value = next(iter(unrouted.values()))
    try:
        with open(os.path.join(ws.root, ATTRIBUTES_PATH), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    present = set(text.splitlines())
    if not all(line in present for line in ATTRIBUTE_LINES):
        return (
            f"{ATTRIBUTES_PATH} does not route .hive/ files to hive's merge driver (lines:"
            f" {'; '.join(ATTRIBUTE_LINES)}); run 'hive init' to add them"
        )
    shown = _MERGE_VALUES.get(value, f"merge={value}")
    if _hive_lines_last(text) != text:
        where = (
            f"a line after hive's in {ATTRIBUTES_PATH} overrides them; run 'hive init' to"
            " move hive's lines last (or remove that line)"
        )
    else:
        where = (
            "another attributes file overrides hive's lines (a .gitattributes below the"
            " top directory, .git/info/attributes or core.attributesFile): remove its line"
            " that sets merge for .hive/ files"
        )
    return f"{ATTRIBUTES_PATH} has hive's merge lines, but git merges them with {shown}: {where}"


def _driver_runs(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    if os.path.isabs(program):
        return os.access(program, os.X_OK)
    return shutil.which(program) is not None
