"""Moving a private ref (``refs/hive/mail``) between clones with the real ``git``.

Transport (ssh, https, credentials, local paths) is exactly the user's git:
hive runs ``git ls-remote``, ``git fetch`` and ``git push`` and never forces
a push, so a remote that moved meanwhile is fetched and merged again. None of them
asks anybody for anything (:func:`no_prompt_environment`: no password prompt, no askpass program,
ssh in batch mode): a remote that wants credentials git does not have fails at once,
named (:func:`_needs_credentials`), where a sync from a script or an agent waited for
a password nobody would type.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time

from hive.errors import GitError, HiveError, InvalidInput
from hive.git.refs import TRACKING_PREFIX as TRACKING_PREFIX  # re-exported
from hive.git.rungit import FETCH_TIMEOUT as FETCH_TIMEOUT  # re-exported
from hive.git.rungit import git_environment
from hive.git.rungit import run_git as run_git  # re-exported

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.git.repo import GitRepo

# A fetch that lost a race for one of its local refs to another fetch in this clone (two
# syncs at once, or the `git fetch` of a killed hive process that ran on): tried again.
FETCH_RACE_ATTEMPTS = 8


# git asks for a user name or password on the terminal unless GIT_TERMINAL_PROMPT is 0,
# and first through an askpass program (GIT_ASKPASS, else core.askPass, else
# SSH_ASKPASS) unless GIT_ASKPASS is set and empty. Credential helpers still answer.
NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": ""}
# ssh asks on the terminal itself (a password, a key's passphrase, a new host's key)
# unless BatchMode is on; git runs GIT_SSH_COMMAND through the shell, as core.sshCommand
NO_PROMPT_SSH = "ssh -o BatchMode=yes"


def no_prompt_environment(root: str) -> dict[str, str]:
    """``run_git``'s environment in which git and ssh ask nobody for anything: no
    terminal prompt, no askpass program, ssh in batch mode unless the user chose their
    own ssh command (``GIT_SSH_COMMAND``, ``core.sshCommand``, ``GIT_SSH``: kept)."""
    env = {**git_environment(), **NO_PROMPT}
    if not _own_ssh(root, env):
        env["GIT_SSH_COMMAND"] = NO_PROMPT_SSH
    return env


def _own_ssh(root: str, env: dict[str, str]) -> bool:
    """Whether the user set the ssh command git runs (git's order: GIT_SSH_COMMAND,
    core.sshCommand, GIT_SSH); the config read without a git process where it can be."""
    if env.get("GIT_SSH_COMMAND") or env.get("GIT_SSH"):
        return True
    from hive.git.configfile import setting
    from hive.git.refs import discover

    try:
        return bool(setting(discover(root), "core", "sshCommand"))
    except (HiveError, OSError):
        return False  # no repository there: git's own command then says so


def _network_git(
    root: str, *args: str, timeout: float = FETCH_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """``git *args``, a command that talks to a remote, asking nobody for anything."""
    return run_git(root, *args, timeout=timeout, env=no_prompt_environment(root))


def check_remote(remote: str) -> str:
    """A remote name or URL that cannot be mistaken for a git option."""
    value = remote.strip()
    if not value or value.startswith("-") or any(c in value for c in "\n\r\0"):
        raise InvalidInput(f"invalid remote {remote!r}")
    return value


def shown_remote(remote: str) -> str:
    """``remote`` as git shows a URL: without the user name and password a URL with a
    scheme may carry (``https://TOKEN@github.com/o/r.git`` is ``https://github.com/o/r.git``),
    so no credential reaches a message, the output, or a commit message that a sync
    pushes (git's own messages leave them out too). A remote's name or a path is as given."""
    scheme, sep, rest = remote.partition("://")
    if not sep or not scheme or not all(c.isalnum() or c in "+.-" for c in scheme):
        return remote
    authority, slash, path = rest.partition("/")
    _userinfo, at, host = authority.rpartition("@")
    return f"{scheme}://{host}{slash}{path}" if at else remote


def check_hive_refs(git: GitRepo, remote: str | None) -> None:
    """hive's refs here (``remote`` None) or as fetched from ``remote`` each name a
    commit, else a GitError saying which ref and the way out (nothing is changed). A ref
    set by hand or by another tool to a blob, a tree or a missing object ended in
    "internal error: AssertionError" (a merge base of a blob), or in a fetch error that
    blamed the remote for this clone's ref."""
    for ref in (STATE_REF, MAIL_REF):
        if remote is None:
            sha, whose = git.ref_value(ref), f"this clone's {ref}"
            way_out = f"delete it ('git update-ref -d {ref}'): the next sync sets it again"
        else:
            sha = git.ref_value(tracking_ref(remote, ref.removeprefix("refs/hive/")))
            whose = f"{shown_remote(remote)}'s {ref}"
            way_out = (
                "point it back at a hive commit there, or delete it there (the next sync of"
                " any clone sends its state again); nothing was changed here"
            )
        if sha is None:
            continue
        try:
            git.commit_tree(sha)
        except GitError:
            raise GitError(f"{whose} names {sha}, which is not a commit: {way_out}") from None


def _failure(
    result: subprocess.CompletedProcess[str], what: str, root: str = "", remote: str = ""
) -> GitError:
    reason = _needs_credentials(result.stderr, remote) or _git_reason(result)
    if remote and "does not appear to be a git repository" in reason:
        reason += _remote_hint(root, remote)
    return GitError(f"{what}: {reason}")  # ``what`` names the remote as shown_remote does


# what git (https) and ssh say when the remote wants what hive never asks for
_CREDENTIALS = (
    "terminal prompts disabled",
    "could not read Username",
    "could not read Password",
    "Authentication failed",
    "Permission denied (",
    "Host key verification failed",
)


def _needs_credentials(stderr: str, remote: str) -> str | None:
    """The reason, and the way out, when ``remote`` wanted a password, a key or a new
    host's confirmation (hive asks for none); None for any other failure."""
    for line in stderr.splitlines():
        if any(marker in line for marker in _CREDENTIALS):
            said = line.strip().removeprefix("fatal:").strip()
            shown = shown_remote(remote) if remote else "the remote"
            return (
                f"{shown} needs credentials and hive never asks for them ({said}): give git"
                " a credential helper, or ssh a key in ssh-agent and the host in known_hosts,"
                f" then check with 'git ls-remote {shown}'"
            )
    return None


def _remote_hint(root: str, remote: str) -> str:
    """The next step when ``remote`` names no remote of this clone (a URL or a path:
    git's own reason says enough)."""
    if not _REMOTE_NAME.fullmatch(remote) or os.path.exists(os.path.join(root, remote)):
        return ""
    listed = run_git(root, "remote")
    names = listed.stdout.split() if listed.returncode == 0 else []
    if not names:
        return f"; this clone has no remote yet: add one with 'git remote add {remote} URL'"
    return f"; this clone's remotes: {', '.join(names)} (or give a URL)"


def _git_reason(result: subprocess.CompletedProcess[str]) -> str:
    """git's own reason for a failure: its first ``fatal:``/``error:`` line (the lines after
    it are advice such as "Please make sure you have the correct access rights")."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    for line in lines:
        for prefix in ("fatal:", "error:"):
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
    return lines[-1] if lines else f"exit code {result.returncode}"


def remote_ref(root: str, remote: str, ref: str) -> str | None:
    """The commit ``ref`` points at on ``remote`` (None when it has no such ref)."""
    result = _network_git(root, "ls-remote", "--refs", remote, ref)
    if result.returncode != 0:
        raise _failure(result, f"cannot read {shown_remote(remote)}", root, remote)
    for line in result.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    return None


def fetch_ref(root: str, remote: str, ref: str, into: str) -> None:
    """Fetch ``remote``'s ``ref`` into the local ref ``into`` (overwritten)."""
    _fetch(root, remote, f"+{ref}:{into}", f"cannot fetch {ref} from {shown_remote(remote)}")


def push_ref(root: str, remote: str, ref: str) -> bool:
    """Push ``ref`` to the same name on ``remote``; False when the remote moved (not a
    fast-forward), so the caller fetches and merges again."""
    return not push_refs(root, remote, [ref])


_REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# hive's refs as ``hive sync`` (``hive.domain.sync``) and its lean twin
# (``hive/cli/lean_sync.py``) move them: one definition, so both agree.
STATE_REF = "refs/hive/state"
MAIL_REF = "refs/hive/mail"
HIVE_REFS = "refs/hive/*"
PUSH_REFSPEC = f"{HIVE_REFS}:{HIVE_REFS}"  # never forced
# the trailer of a sync's commit naming the remote state it merged (hive.domain.syncaudit)
STATE_TRAILER = "Hive-Sync-State"


def fetch_refspec(remote: str) -> str:
    """The fetch refspec that keeps ``remote``'s hive refs as tracking refs."""
    return f"+{HIVE_REFS}:{tracking_ref(remote, '*')}"


def stale_fetch_refspecs(remote: str, refspecs: list[str]) -> list[str]:
    """The refspecs among ``refspecs`` (``remote``'s fetch refspecs) that keep hive's refs
    as another remote's tracking refs: ``git remote rename origin upstream`` renames the
    branches' refspec and leaves hive's (``+refs/hive/*:refs/hive-remotes/origin/*``),
    so every fetch of ``upstream`` went on writing ``origin``'s tracking refs."""
    wanted = fetch_refspec(remote)
    prefix = f"+{HIVE_REFS}:{TRACKING_PREFIX}/"
    return [
        spec
        for spec in refspecs
        if spec != wanted and spec.startswith(prefix) and spec.endswith("/*")
    ]


def refspec_remote(refspec: str) -> str:
    """The remote whose tracking refs a hive fetch refspec writes (``origin`` of
    ``+refs/hive/*:refs/hive-remotes/origin/*``)."""
    into = refspec.partition(":")[2]
    return into.removeprefix(f"{TRACKING_PREFIX}/").removesuffix("/*")


def move_tracking_refs(root: str, old: str, new: str) -> None:
    """Move ``old``'s tracking refs (``refs/hive-remotes/<old>/*``) to ``new``'s, in one
    ``git update-ref`` transaction: ``git remote rename`` moves the branches' tracking
    refs and leaves hive's. A ref ``new`` has already stays as it is; ``old``'s goes."""
    old_prefix, new_prefix = f"{TRACKING_PREFIX}/{old}/", f"{TRACKING_PREFIX}/{new}/"
    listed = run_git(
        root, "for-each-ref", "--format=%(refname) %(objectname)", old_prefix, new_prefix
    )
    if listed.returncode != 0:
        raise _failure(listed, f"cannot list the tracking refs of {old}")
    refs = dict(line.split(" ", 1) for line in listed.stdout.splitlines() if " " in line)
    commands = []
    for ref, sha in refs.items():
        if not ref.startswith(old_prefix):
            continue
        moved = new_prefix + ref.removeprefix(old_prefix)
        if moved not in refs:
            commands.append(f"create {moved} {sha}\n")
        commands.append(f"delete {ref} {sha}\n")
    if not commands:
        return
    done = run_git(root, "update-ref", "--stdin", input_text="".join(commands))
    if done.returncode != 0:
        raise _failure(done, f"cannot move the tracking refs of {old} to {new}")


def tracking_ref(remote: str, name: str) -> str:
    """Where a remote's ``refs/hive/<name>`` is kept locally: ``refs/hive-remotes/<remote>/<name>``
    (outside ``refs/hive/``, so a push of hive's refs never sends them back). A URL
    is named by a hash of itself."""
    slug = remote
    if not _REMOTE_NAME.fullmatch(remote) or ".." in remote or remote.endswith(".lock"):
        slug = "url-" + hashlib.sha1(remote.encode(), usedforsecurity=False).hexdigest()[:12]
    return f"{TRACKING_PREFIX}/{slug}/{name}"


# A fetch of hive's refs this process made an instant ago and handed over with the sync
# it could not finish (``hive/cli/lean_sync.py`` to ``hive.domain.sync``, which runs
# next in the same process): (root, remote) -> (when, what the lean sync's earlier rounds
# did). The sync goes on from that round with this fetch instead of fetching again (a
# second round trip to the remote for nothing); any later round fetches, as a push the
# remote rejects because it moved since starts one.
_HANDED_OVER: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
HANDOVER_SECONDS = 2.0  # a fetch older than this is fetched again (the remote may have moved)
CARRIED_SECONDS = 120.0  # older than this: no sync's of this process (the counts dropped)


def hand_over_fetch(root: str, remote: str, carried: dict[str, Any] | None = None) -> None:
    """The tracking refs of ``remote`` were just fetched for a sync that goes on next;
    ``carried``: the round of this fetch and what the earlier rounds did (none: the
    first round)."""
    _HANDED_OVER[(root, remote)] = (time.monotonic(), carried or {"attempt": 1})


def take_handed_over_fetch(root: str, remote: str) -> dict[str, Any] | None:
    """What a fetch of ``remote`` handed over carries (taken: once), with ``"fetched":
    False`` when the fetch is older than :data:`HANDOVER_SECONDS` (the sync fetches
    again, and goes on counting what the earlier rounds did: a full CLI slow to start on
    a loaded machine dropped them); None when there is none, or it is older than
    :data:`CARRIED_SECONDS` (the sync fetches first)."""
    when, carried = _HANDED_OVER.pop((root, remote), (0.0, {}))
    age = time.monotonic() - when
    if not when or age >= CARRIED_SECONDS:
        return None
    return {**carried, "fetched": age < HANDOVER_SECONDS}


def fetch_refs(
    root: str,
    remote: str,
    pattern: str,
    into: str,
    *,
    timeout: float = FETCH_TIMEOUT,
) -> None:
    """Fetch every remote ref matching ``pattern`` (``refs/hive/*``) into ``into``
    (``refs/hive-remotes/origin/*``), forced and pruned: these are tracking refs, a
    mirror of what the remote holds (one it no longer has goes here too). ``timeout``:
    as :func:`run_git` takes it (``hive init``'s fetch waits less)."""
    refspec = f"+{pattern}:{into}"
    what = f"cannot fetch hive's refs from {shown_remote(remote)}"
    _fetch(root, remote, refspec, what, "--prune", timeout=timeout)


# git's fetch starts ``git maintenance run --auto`` after it (``git gc --auto``, detached,
# once there are too many loose objects or packs): a process each sync, and a repack in
# the background beside hive's own packer. hive packs what a sync fetched itself, as
# ``git gc --auto`` would, when the sync's merge releases the write lock (every sync
# whose fetch brought objects merges: ``GitRepo.write_lock``, ``pack_if_needed``). A
# push runs no maintenance here (the ``git gc --auto`` after it is the remote's own,
# ``receive.autogc``).
NO_AUTO_MAINTENANCE = ("-c", "maintenance.auto=false")


def _fetch(
    root: str,
    remote: str,
    refspec: str,
    what: str,
    *options: str,
    timeout: float = FETCH_TIMEOUT,
) -> None:
    """``git fetch`` of ``refspec``, without git's automatic maintenance after it
    (:data:`NO_AUTO_MAINTENANCE`); tried again when it lost the race for a local ref
    to a fetch running at the same time in this clone (git: "cannot lock ref ...: is at
    X but expected Y", or its ``.lock`` exists): the refs are tracking refs, forced, so
    the next fetch simply sets them again."""
    fetch = (*NO_AUTO_MAINTENANCE, "fetch", "--quiet", "--no-tags")
    for attempt in range(1, FETCH_RACE_ATTEMPTS + 1):
        try:
            result = _network_git(root, *fetch, *options, remote, refspec, timeout=timeout)
        except GitError as exc:  # no git, or no answer in time: which remote it was
            raise GitError(f"{what}: {exc.message}") from None
        if result.returncode == 0:
            return
        if "cannot lock ref" not in result.stderr or attempt == FETCH_RACE_ATTEMPTS:
            raise _failure(result, what, root, remote)
        time.sleep(0.01 * attempt)


# A "[remote rejected]" that is a race with another push (the remote could not lock
# or update the ref just then), not a refusal.
_LOST_RACE = re.compile(r"failed to update ref|failed to lock|cannot lock")


def push_refs(root: str, remote: str, refs: list[str]) -> list[str]:
    """Push each ref to the same name on ``remote`` (never forced); the refs the remote
    rejected because it moved (the caller fetches and merges again)."""
    if not refs:
        return []
    # a mirror remote (remote.NAME.mirror) takes no refspec: hive's refs go as to any
    unmirrored = ("-c", f"remote.{remote}.mirror=false") if _REMOTE_NAME.fullmatch(remote) else ()
    pushed = (f"{ref}:{ref}" for ref in refs)
    result = _network_git(root, *unmirrored, "push", "--porcelain", remote, *pushed)
    rejected: list[str] = []
    refused: list[str] = []
    for line in result.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] != "!":
            continue
        ref, summary = parts[1].split(":", 1)[0], parts[2].strip()
        if summary.startswith("[rejected]") or _LOST_RACE.search(summary):
            rejected.append(ref)  # the remote moved, or another push held its ref: again
        else:  # "[remote rejected] (pre-receive hook declined)": trying again cannot help
            refused.append(f"{ref}: {summary.strip('[]').replace('] (', ' (')}")
    if refused:
        said = [
            line.removeprefix("remote:").strip()
            for line in result.stderr.splitlines()
            if line.startswith("remote:") and line.removeprefix("remote:").strip()
        ]
        reason = "; ".join(refused) + (f" (the remote said: {' / '.join(said)})" if said else "")
        raise GitError(f"{shown_remote(remote)} refused hive's refs: {reason}")
    if result.returncode != 0 and not rejected:
        raise _failure(result, f"cannot push hive's refs to {shown_remote(remote)}", root, remote)
    return rejected
