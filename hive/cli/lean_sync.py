"""``hive sync [REMOTE]`` in a fresh process, lean, when the sync has nothing to do.

Agents on many machines sync often, and most syncs find nothing new on either side.
Such a sync is answered here without typer, pydantic, rich or dulwich: the same
checks in the same order as ``hive.domain.sync.sync``, the same sync lock, the same
``git fetch`` (``hive.git.remote.fetch_refs``), then the refs decide. After the fetch
the sync has nothing to do when:

* ``refs/hive/state`` is what the remote has (its tracking ref after the fetch),
* this branch's ``.hive`` tree is the state's ``.hive`` tree (nothing written here
  since the last sync, nothing brought by ``git pull``: the three-way merge changes
  no file, and the merged tree is the state's, so no state commit is made),
* ``refs/hive/mail`` is what the remote has (no message to join or send), and
* no two agents hold active exclusive reservations in this branch's files (the sync
  settles an overlap even when nothing arrived: ``hive.domain.contest``).

The full path then commits nothing, moves no ref, pushes nothing, and prints ``synced
with REMOTE: 0 cell file(s) received, 0 sent, 0 message(s) received`` (or its JSON):
this module prints the same bytes. Anything else *defers* to the full CLI (None):
something to send, or to receive as the last fetch found, before this path fetches (the
full path fetches once); something that arrived with this fetch (the fetch updated only
the tracking refs; it is handed over, ``remote.hand_over_fetch``, and the full sync,
next in this process, starts from it instead of fetching again), the remote has no hive
state yet, a remote whose configuration the full path would change (no hive refspecs
yet) or that pushes elsewhere than it fetches from, any check the full path words (no
hive, a detached HEAD, a merge under way, an identity it refuses, a config or
reservation file the plain readers decline), options, a remote name with characters its
output might show otherwise, a terminal (the full path draws a progress bar and lets
rich print). A fetch that fails (a remote out of reach) and a sync lock held too long
are reported here as the full CLI reports them (exit code 8, 6): deferring would make
the user wait for them twice.
"""

from __future__ import annotations

import re
import sys

from hive.cli import Invocation, answer_stands
from hive.cli.lean_write import Defer, Prepared, prepare, report
from hive.errors import GitError, HiveError, LockTimeout
from hive.git.remote import (
    HIVE_REFS,
    MAIL_REF,
    PUSH_REFSPEC,
    STATE_REF,
    fetch_refs,
    fetch_refspec,
    hand_over_fetch,
    tracking_ref,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.git.repo import Snapshot

DEFAULT_REMOTE = "origin"  # RemoteParams.remote
# A remote name or URL the output shows as it is (JSON without escapes, a plain line).
_SHOWN_AS_IS = re.compile(r"[A-Za-z0-9/.~][A-Za-z0-9._/:@~+=,-]{0,1023}")


def sync(inv: Invocation) -> int | None:
    """``hive sync [REMOTE]`` when it has nothing to do; None for the full CLI."""
    remote = _remote(inv)
    if remote is None:
        return None
    if not inv.json and not _piped_plain():
        return None  # a terminal: the full path's progress bar and rich's printing
    from hive.git.gitconfig import git_available

    if not git_available():
        return None  # the full path says it needs git
    prepared = prepare(inv)
    if prepared is None or isinstance(prepared, int):
        return None
    try:
        _check(prepared)
    except (Defer, HiveError, OSError):
        return None
    return _locked(inv, prepared, remote)


def _remote(inv: Invocation) -> str | None:
    """The remote of the command line when it is one this path answers for."""
    if len(inv.args) > 1:
        return None
    remote = inv.args[0] if inv.args else DEFAULT_REMOTE
    return remote if _SHOWN_AS_IS.fullmatch(remote) else None


def _piped_plain() -> bool:
    from hive.cli.lean import piped_plain

    return piped_plain()


def _check(prepared: Prepared) -> None:
    """What ``hive.domain.sync.sync`` checks before it talks to the remote: an
    initialised hive (a config the plain reader reads as the model does) and git's
    state (a merge or a rebase under way, a detached HEAD)."""
    from hive.git.state import check_git_state

    session, snap = prepared.session, prepared.snap
    session.config(snap)  # Defer: not initialised, or a config the model may refuse
    check_git_state(session.paths, snap.head)


def _locked(inv: Invocation, prepared: Prepared, remote: str) -> int | None:
    """Under the sync lock, as the full path: fetch, then decide from the refs."""
    repo = prepared.session.repo
    try:
        with repo.sync_lock(prepared.timeout):
            if _nothing_to_do(prepared, remote) is None:  # read first: no git process
                return None  # something to send, or to receive as the last fetch found
            if not _configured(repo.paths.root, remote):
                return None
            fetch_refs(repo.paths.root, remote, HIVE_REFS, tracking_ref(remote, "*"))
            state = _nothing_to_do(prepared, remote)
            if state is None:  # something arrived: the full sync goes on from this fetch
                hand_over_fetch(repo.paths.root, remote)
    except (LockTimeout, GitError) as exc:
        return report(inv, exc)
    except (Defer, HiveError, OSError):
        return None
    if state is None:
        return None
    return _answer(inv, remote, state)


def _configured(root: str, remote: str) -> bool:
    """Whether the full path would leave git's config as it is (``sync.configure_remotes``
    adds hive's refspecs to a named remote without them) and push only the refs that
    differ from the fetched ones (not so for a remote that pushes elsewhere)."""
    from hive.git.gitconfig import GitConfig

    config = GitConfig(root)
    if remote in config.remotes():
        if fetch_refspec(remote) not in config.get_all(f"remote.{remote}.fetch"):
            return False
        if PUSH_REFSPEC not in config.get_all(f"remote.{remote}.push"):
            return False
    return not config.pushes_elsewhere(remote)


def _nothing_to_do(prepared: Prepared, remote: str) -> str | None:
    """``refs/hive/state`` when the sync has nothing to do (see the module doc), else
    None. HEAD is read again: a write may have landed since the first look. Asked
    before the fetch too, of the tracking refs the last one left: a sync with something
    to send (or to receive as that fetch found) goes to the full CLI without a fetch
    here, so it fetches once, not twice."""
    repo = prepared.session.repo
    state = repo.ref_value(STATE_REF)
    if state is None or repo.ref_value(tracking_ref(remote, "state")) != state:
        return None
    if repo.ref_value(MAIL_REF) != repo.ref_value(tracking_ref(remote, "mail")):
        return None
    snap = repo.snapshot()
    if snap.head != prepared.snap.head or snap.tree is None:
        return None
    hive_tree = repo.lookup_path(snap.tree, ".hive", want_tree=True)
    if hive_tree is None or hive_tree != repo.lookup_path(
        repo.commit_tree(state), ".hive", want_tree=True
    ):
        return None
    if _may_contest(prepared, snap):
        return None
    return state


def _may_contest(prepared: Prepared, snap: Snapshot) -> bool:
    """Whether the reservation files of ``snap`` might hold a contest the sync settles
    (``contest.find_contests``: overlapping active exclusive reservations of different
    agents): more than one agent holds one (``reserveplain.exclusive_held``, the
    pre-commit hook's rule: a forced grant counts too, though no contest settles it),
    or a file the plain reader declines."""
    from hive.domain.reserveplain import RESERVATIONS_DIR, exclusive_held, plain_file
    from hive.times import utc_now

    now = utc_now()
    holders: set[str] = set()
    for sha in snap.listing(RESERVATIONS_DIR).values():
        found = plain_file(prepared.session.repo.read_blob(sha))
        if found is None:
            return True
        holders.update(item.agent for item in exclusive_held(found.reservations, now))
    return len(holders) > 1


def _answer(inv: Invocation, remote: str, state: str) -> int:
    """The full CLI's answer to a sync that did nothing (``present._synced``, or the
    ``SyncResult`` as JSON)."""
    answer_stands()
    if inv.json:
        import json

        result = {
            "remote": remote,
            "attempts": 1,
            "commit": None,
            "state": state,
            "received_cells": 0,
            "sent_cells": 0,
            "mail_received": 0,
            "conflicts": [],
            "unresolved": [],
            "contested": [],
        }
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        sys.stdout.write(
            f"synced with {remote}: 0 cell file(s) received, 0 sent, 0 message(s) received\n"
        )
    sys.stdout.flush()
    return 0
