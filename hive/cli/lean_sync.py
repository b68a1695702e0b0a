"""``hive sync [REMOTE]`` in a fresh process, lean.

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
* no two agents' active exclusive reservations in this branch's files may name one
  file (the sync settles an overlap even when nothing arrived: ``hive.domain.contest``).

The full path then commits nothing, moves no ref, pushes nothing, and prints ``synced
with REMOTE: 0 cell file(s) received, 0 sent, 0 message(s) received`` (or its JSON):
this module prints the same bytes.

A sync with something to do (to send, receive, merge, or mail to join or push) runs
here too, through the full sync's own rounds (``sync.run_rounds``: the same code, the
same commits, refs and counts) with ``lean_syncing.LeanSyncing`` in place of a Workspace; the
models are imported only where a case needs them (a same-file merge: ``merge_file``).
A reservation contest to settle (two agents' active exclusive reservations in the
merged files that may name one file, or a reservation file the plain reader declines)
is *handed over*: the plan raises ``sync.Uncommon`` before that round writes anything,
and the round's fetch goes to the full sync with what the earlier rounds did
(``remote.hand_over_fetch``; it runs next in this process and goes on from there).
The answer is the full CLI's (``synced_lines``, the JSON of ``SyncResult``).

Before the fetch, anything the full path must check or change *defers* to the full
CLI (None): a remote whose configuration the full path would change (no hive refspecs
yet) or that pushes elsewhere than it fetches from, any check the full path words (no
hive, a detached HEAD, a merge under way, an identity it refuses, a config file the
plain reader declines), options, a remote name with characters its output might show
otherwise, a terminal (the full path draws a progress bar and lets rich print). A
fetch that fails (a remote out of reach) and a sync lock held too long are reported
here as the full CLI reports them (exit code 8, 6): deferring would make the user wait
for them twice; so is whatever stops a round after the fetch (something may have been
written by then). What stops the lean path from deciding after the fetch (a ref or an
object it cannot read) hands the fetch over as a contest does: nothing is written by
then, and the full sync goes on from that fetch, to say what it says of it.
"""

from __future__ import annotations

import re
import sys

from hive.cli import Invocation, answer_stands, internal_error
from hive.cli.lean_write import Defer, Prepared, prepare, report
from hive.errors import GitError, HiveError, LockTimeout
from hive.git.remote import (
    HIVE_REFS,
    MAIL_REF,
    PUSH_REFSPEC,
    STATE_REF,
    check_hive_refs,
    fetch_refs,
    fetch_refspec,
    hand_over_fetch,
    shown_remote,
    stale_fetch_refspecs,
    tracking_ref,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.domain.reserveplain import PlainReservation
    from hive.git.repo import Change, GitRepo, Snapshot

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
    """The remote of the command line when it is one this path answers for ("": none
    given, chosen under the sync lock as the full path chooses it, :func:`_configured`)."""
    if len(inv.args) > 1:
        return None
    remote = inv.args[0] if inv.args else ""
    return remote if not remote or _SHOWN_AS_IS.fullmatch(remote) else None


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
    """Under the sync lock, as the full path: fetch, then the refs decide; a sync with
    something to do runs here too (:func:`_exchange`) unless it meets a case it leaves
    to the full sync."""
    repo = prepared.session.repo
    try:
        with repo.sync_lock(prepared.timeout):
            chosen = _configured(repo, remote)
            if chosen is None:
                return None
            remote, named = chosen
            check_hive_refs(repo, None)  # git's fetch stops at a local ref naming no object
            fetch_refs(repo.paths.root, remote, HIVE_REFS, tracking_ref(remote, "*"))
            check_hive_refs(repo, remote)
            done = _fetched(inv, prepared, remote, named)
    except (LockTimeout, GitError) as exc:
        return report(inv, exc)
    except (Defer, HiveError, OSError):
        return None  # before the fetch: nothing written
    if done is None or isinstance(done, int):
        return done
    return _answer(inv, done)


def _fetched(
    inv: Invocation, prepared: Prepared, remote: str, named: bool
) -> dict[str, Any] | int | None:
    """After the fetch: nothing to do, or the exchange. What stops the decision (a ref
    or an object this path cannot read, whatever the full sync will say of it) stops it
    before anything is written: the fetch is handed over (``remote.hand_over_fetch``),
    so the full sync goes on from it rather than asking the remote again."""
    try:
        state = _nothing_to_do(prepared, remote)
    except (Defer, HiveError, OSError):
        hand_over_fetch(prepared.session.repo.paths.root, remote)
        return None
    if state is None:
        return _exchange(inv, prepared, remote, named)
    return _nothing_done(remote, state)


def _exchange(
    inv: Invocation, prepared: Prepared, remote: str, named: bool
) -> dict[str, Any] | int | None:
    """The full sync's rounds (``sync.run_rounds``, the same code) from this fetch, with
    ``lean_syncing.LeanSyncing``: None when a round met a case left to the full sync (handed
    over with this round's fetch and what the earlier rounds did: the full sync goes on
    from there). What stops it otherwise is reported as the full CLI reports it (the
    exit code), never left to the full CLI: something may have been written."""
    from hive.domain.sync import Uncommon, run_rounds

    root = prepared.session.repo.paths.root
    hand_over_fetch(root, remote)  # the first round: this fetch
    try:
        from hive.cli.lean_syncing import LeanSyncing

        actor = LeanSyncing(prepared, contest_possible)
        return run_rounds(actor, remote, None, everything=False, named=named)
    except Uncommon as exc:
        hand_over_fetch(root, remote, exc.carried)
        return None
    except HiveError as exc:
        return report(inv, exc)
    except Exception as exc:
        return internal_error(exc, as_json=inv.json)


def _configured(repo: GitRepo, remote: str) -> tuple[str, bool] | None:
    """The remote (``remote``, else the one the full path chooses:
    ``GitConfig.default_remote``) and whether it is a remote of git's config (else a URL
    or a path), when the full path would leave git's config as it is
    (``sync.configure_remotes`` adds hive's refspecs to a named remote without them, and
    removes another name's, left by ``git remote rename``) and push only the refs that
    differ from the fetched ones (not so for a remote that pushes elsewhere); else None
    (a choice the full path refuses included: it words it)."""
    from hive.git.gitconfig import GitConfig

    config = GitConfig(repo.paths.root)
    if not remote:
        try:
            remote = config.default_remote(repo.head().ref, "hive sync")
        except HiveError:
            return None
        if not _SHOWN_AS_IS.fullmatch(remote):
            return None
    named = remote in config.remotes()
    if named:
        fetches = config.get_all(f"remote.{remote}.fetch")
        if fetch_refspec(remote) not in fetches or stale_fetch_refspecs(remote, fetches):
            return None
        if PUSH_REFSPEC not in config.get_all(f"remote.{remote}.push"):
            return None
    return None if config.pushes_elsewhere(remote) else (remote, named)


def _nothing_to_do(prepared: Prepared, remote: str) -> str | None:
    """``refs/hive/state`` when the sync has nothing to do (see the module doc), else
    None. HEAD is read again: a write may have landed since the first look."""
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
    if contest_possible(prepared.session.repo, snap, []):
        return None
    return state


def contest_possible(repo: GitRepo, snap: Snapshot, changes: list[Change]) -> bool:
    """Whether the reservation files of ``snap`` with ``changes`` made might hold a
    contest the sync settles (``contest.find_contests``: overlapping active exclusive
    reservations of different agents, not forced): two such of different agents may
    name one file (``reservecore.may_contest``), or a file the plain reader declines."""
    from hive.domain.reserveplain import RESERVATIONS_DIR, exclusive_held, plain_file
    from hive.times import utc_now

    contents: dict[str, bytes | None] = {
        path: repo.read_blob(sha) for path, sha in snap.listing(RESERVATIONS_DIR).items()
    }
    contents.update(
        (change.path, change.content)
        for change in changes
        if change.path.startswith(RESERVATIONS_DIR + "/")
    )
    now = utc_now()
    held: list[PlainReservation] = []
    for content in contents.values():
        if content is None:
            continue  # removed by the merge
        found = plain_file(content)
        if found is None:
            return True
        held += [item for item in exclusive_held(found.reservations, now) if not item.forced]
    if len({item.agent for item in held}) < 2:
        return False  # one agent's own: never a contest (the overlap test not loaded)
    from hive.domain.reservecore import may_contest

    return may_contest(held)


def _nothing_done(remote: str, state: str) -> dict[str, Any]:
    """``run_rounds``'s answer for a sync that did nothing."""
    return {
        "remote": shown_remote(remote),
        "attempts": 1,
        "commit": None,
        "state": state,
        "received_cells": 0,
        "sent_cells": 0,
        "mail_received": 0,
        "conflicts": [],
        "unresolved": [],
        "contested": [],
        "cycles": [],
    }


def _answer(inv: Invocation, done: dict[str, Any]) -> int:
    """The full CLI's answer (``present._synced``, or the ``SyncResult`` as JSON), with
    neither pydantic nor rich when the answer holds nothing they would write otherwise:
    no number but integers in the JSON (``json`` writes the rest as pydantic does, with
    ``ensure_ascii=False``: a conflict's values, a path in ``unresolved``), printable
    lines (``lean.plain_text``, as ``output.say`` writes them when piped, which is the
    only way this path prints text)."""
    answer_stands()
    if inv.json and _integers_only(done):
        from hive.jsontext import dumps

        sys.stdout.flush()
        sys.stdout.buffer.write(dumps(done, indent=2).encode("utf-8") + b"\n")
    elif inv.json:
        from pydantic_core import to_json

        from hive.jsontext import inert_bytes

        sys.stdout.buffer.write(inert_bytes(to_json(done, indent=2) + b"\n"))
    else:
        from hive.cli.lean import plain_text

        lines = synced_lines(done)
        if all(plain_text(line) for line in lines):
            sys.stdout.write("\n".join(lines) + "\n")
        else:
            from hive.cli import output  # its ``say``: control characters shown as ?

            for line in lines:
                output.say(line)
    sys.stdout.flush()
    return 0


def _integers_only(value: object) -> bool:
    """Whether ``value`` holds no number but integers, and text keys only: ``json``
    writes a float otherwise than pydantic (``1e+16``, ``Infinity``)."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _integers_only(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return all(_integers_only(item) for item in value)
    return value is None or isinstance(value, str | int)  # (bool is an int)


def synced_lines(done: dict[str, Any]) -> list[str]:
    """What ``hive sync`` prints (the full CLI's ``present._synced`` and this path):
    ``done`` is ``SyncResult``'s fields, its contests as (yielded, kept) pairs of
    (agent, pattern)."""
    commit = f" (commit {done['commit'][:10]})" if done["commit"] else ""
    lines = [
        f"synced with {done['remote']}: {done['received_cells']} cell file(s) received,"
        f" {done['sent_cells']} sent, {done['mail_received']} message(s) received{commit}"
    ]
    for record in done["conflicts"]:
        if record.get("file"):
            lines.append(
                f"  merge conflict in {record['file']}: both sides changed"
                f" {record.get('field')}: kept {record.get('kept')!r}, the other had"
                f" {record.get('other')!r} (recorded in the file; see 'hive doctor')"
            )
            continue
        lines.append(
            f"  merge conflict on {record.get('cell')}: both sides changed"
            f" {record.get('field')} (see 'hive show {record.get('cell')}')"
        )
    lines += [f"  not merged: {problem}" for problem in done["unresolved"]]
    lines += [
        f"  dependency cycle: {' -> '.join(cycle)} (each side added a dependency of it;"
        " none of them can be ready: remove one with 'hive dep remove'; see 'hive doctor')"
        for cycle in done["cycles"]
    ]
    for (lost_agent, lost_pattern), (kept_agent, kept_pattern) in done["contested"]:
        lines.append(
            f"  reservation contested: {lost_agent}'s {lost_pattern!r} yields to"
            f" {kept_agent}'s {kept_pattern!r} (earliest grant wins; both told by mail)"
        )
    return lines
