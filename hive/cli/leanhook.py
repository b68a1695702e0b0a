"""``hive hooks run pre-commit`` answered in the hook's own process when nothing can
block the commit, without the models (None hands the command to ``cli/hookrun.py``'s
full check, which words the verdict). ``hive hooks run commit-msg FILE`` is
``cli/lean.py``'s (``commit_msg``: its answer reads the state index).

A module of its own, apart from ``cli/lean.py``'s reads: an agent's own ``git
commit`` starts this process, and every module it imports is paid by every commit.
The quick pre-commit check imports neither the state index (``sqlite3`` and with it
``functools``), nor ``re``, the ``datetime`` package, ``hashlib``/``hmac`` or
``contextlib`` unless a case needs them: the index only for ``tools.permissions``
rules the full check kept there, the glob parser only when a reservation of somebody
else may apply (``globquick``). ``tests/test_hook_quick.py`` runs the real hook with
Python's import log and fails on any of them otherwise.
"""

from __future__ import annotations

from hive.errors import HiveError

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.cli import Invocation
    from hive.domain.path_rules import Permissions
    from hive.git.refs import RepoPaths

GITLINK_HEADER = "160000"  # the mode of a submodule's commit in ``git diff --raw``


def write_pending(paths: RepoPaths) -> bool:
    """A hive write is under way or was killed: the full path recovers it first."""
    import os

    return os.path.lexists(paths.index_twin)


def precommit(inv: Invocation) -> int | None:
    """``hive hooks run pre-commit`` when nothing can block the commit: no ``.hive/``
    file staged and no staged path under an exclusive reservation of anybody but the
    committing agent (``HIVE_AGENT_TOKEN``'s, read from the credential store; a person
    is blocked by every one, a token of nobody by the full check); for an agent, also no
    staged file its ``tools.permissions`` rules deny it (none without a ``tools:``
    section; else the rules the full check parsed from this config version, kept in the
    state index). Any
    doubt (a reservation that could apply, here or in another worktree, objects it
    cannot read, a file the fast reader declines, a config or credential store it
    cannot read for sure, rules not parsed yet) leaves the verdict to the full check,
    which words it."""
    import os

    if inv.args != ["run", "pre-commit"] or inv.json:
        return None
    bypassed = os.environ.get("HIVE_BYPASS") == "1"
    from hive.git.refs import discover, read_head_fast

    try:
        paths = discover(inv.directory)
    except (HiveError, OSError):
        return 0 if bypassed else None
    if write_pending(paths):
        return None  # recovered first, even for HIVE_BYPASS: the commit must not revert it
    if bypassed:
        return 0
    agent = ""  # nobody's reservations are the committer's own (a person's commit)
    token = os.environ.get("HIVE_AGENT_TOKEN")
    if token:
        from hive.store import credentials

        try:
            agent = credentials.name_of_token(paths.hive_state_dir, token) or ""
        except (HiveError, OSError):
            return None
    head = read_head_fast(paths)
    if head is None or head.commit is None:
        return None
    listing = _hive_listing(paths, head.commit)  # HEAD's .hive: reservations and config
    if listing is None or (token and not agent and listing):
        return None  # (a token of nobody where hive is: the full check refuses the commit)
    held = _exclusive_holds(paths, head.commit, listing)
    rules = _path_rules(paths, listing) if agent else {}
    if held is None or rules is None:
        return None
    staged = _staged_paths(inv)
    if staged is None or any(path == ".hive" or path.startswith(".hive/") for path in staged):
        return None
    patterns = [pattern for holder, pattern in held if not agent or holder != agent]
    if not staged or not (rules or patterns):
        return 0
    from hive.git.configfile import ignores_case

    try:
        fold = ignores_case(paths)  # as the full check compares (reservecore.folds_case)
    except (HiveError, OSError):
        return None
    if rules and not _none_denied(rules, agent, staged, fold):
        return None  # the full check names each file and rule (or the agent's bypass)
    return 0 if not patterns or _none_held(patterns, staged, fold) else None


def _none_held(patterns: list[str], staged: list[str], fold: bool = False) -> bool:
    """Whether no staged path matches any of ``patterns`` (others' exclusive
    reservations); False also when it cannot say (a pattern the glob parser refuses).
    Each pair is first asked of ``globquick.quick_match`` (a pattern plainly elsewhere,
    or a plain path: no glob parser imported), the rest of ``globs.path_matches``.
    ``fold``: the file system ignores case (``core.ignorecase``), so both are compared
    case folded (``foldcase.fold``)."""
    from hive.domain.globquick import quick_match

    undecided = []
    for pattern in patterns:
        for path in staged:
            quick = quick_match(pattern, path, fold)
            if quick:
                return False
            if quick is None:
                undecided.append((pattern, path))
    if not undecided:
        return True
    from hive.domain.globs import path_matches

    try:
        return not any(path_matches(pattern, path, fold) for pattern, path in undecided)
    except Exception:
        return False


def _path_rules(paths: RepoPaths, listing: dict[bytes, str]) -> Permissions | None:
    """The ``tools.permissions`` rules of the config in ``listing`` (a commit's ``.hive``
    tree, :func:`_hive_listing`) as the full check parses
    them: none without a ``tools:`` section (or without ``.hive``: nothing to enforce),
    else those the full check stored in the state index for this config file version
    (``precommit._remember_rules``). None when not known here for sure: a config the
    plain reader (``configdoc``, as the lean writes read it) declines, whose refusal is
    the full check's to word, or a ``tools:`` section the full check has not parsed."""
    from hive.jsontext import loads

    if not listing:
        return {}
    config = listed_config(paths, listing)
    if config is None:
        return None
    if config["tools"] is None:
        return {}
    from hive.store.index import StateIndex  # sqlite3: only for a config with rules

    stored = StateIndex(paths.hive_state_dir).path_rules(listing[b"config.yaml"])
    rules = None if stored is None else loads(stored.decode("utf-8"))
    return rules if isinstance(rules, dict) else None


def listed_config(paths: RepoPaths, listing: dict[bytes, str]) -> dict[str, Any] | None:
    """The config in ``listing`` (a commit's ``.hive`` tree) as the plain reader
    (``configdoc``, as the lean writes read it) reads it; None when there is none, or
    it is not read here for sure (a config the plain reader declines: the full CLI's
    to word)."""
    from hive.git.loose import read_object
    from hive.store.configdoc import plain_config

    sha = listing.get(b"config.yaml")
    found = None if sha is None else read_object(paths, sha)
    if found is None or found[0] != b"blob":
        return None
    return plain_config(found[1])


def _none_denied(rules: Permissions, agent: str, staged: list[str], fold: bool) -> bool:
    """Whether ``agent`` may commit every file of ``staged`` by ``rules``: the check the
    full one makes (``path_rules.check_paths``, as the pseudo-tool ``git_commit``, case
    folded with ``fold``); False also when it cannot say."""
    from hive.domain.path_rules import COMMIT_TOOL, check_paths

    try:
        check_paths(rules, agent, COMMIT_TOOL, staged, fold_case=fold)
    except Exception:
        return False
    return True


def _exclusive_holds(
    paths: RepoPaths, head: str, head_listing: dict[bytes, str]
) -> list[tuple[str, str]] | None:
    """(holder, pattern) of every unexpired exclusive reservation at ``head`` (whose
    ``.hive`` tree ``head_listing`` the caller has read) and at the HEAD of every other
    worktree of the repository (the full check counts both: issue
    11), read from loose objects or packs; None when that cannot be known cheaply and
    for sure. The worktrees are those the full check reads (``refs.other_worktree_heads``),
    so a worktree added or switched by ``git`` counts from the next commit on."""
    from hive.git.refs import other_worktree_heads

    commits = [head, *(other.commit for other in other_worktree_heads(paths))]
    held: list[tuple[str, str]] = []
    for commit in dict.fromkeys(commits):  # worktrees on one commit: read once
        if commit is None:
            continue
        listing = head_listing if commit == head else _hive_listing(paths, commit)
        found = None if listing is None else _holds_at(paths, listing)
        if found is None:
            return None
        held += found
    return held


def _hive_listing(paths: RepoPaths, commit: str) -> dict[bytes, str] | None:
    """The entries of ``commit``'s ``.hive`` tree ({} when it has none); None when not
    readable here for sure."""
    from hive.git.loose import read_tree, tree_entries

    found = tree_entries(paths, commit)
    if found is None:
        return None
    hive = found[0]
    return {} if hive is None else read_tree(paths, hive)


def _holds_at(paths: RepoPaths, listing: dict[bytes, str]) -> list[tuple[str, str]] | None:
    """(holder, pattern) of the unexpired exclusive reservations in ``listing`` (a
    commit's ``.hive`` tree; None: not readable here for sure)."""
    from hive.git.loose import read_object, read_tree

    held = listing.get(b"reservations")
    if held is None:
        return []
    files = read_tree(paths, held)
    if files is None:
        return None
    found: list[tuple[str, str]] = []
    for name, sha in files.items():
        obj = read_object(paths, sha)
        if obj is None or obj[0] != b"blob":
            return None
        holds = _holds_of(name.decode("utf-8", "surrogateescape"), obj[1])
        if holds is None:
            return None
        found += holds
    return found


def _holds_of(name: str, data: bytes) -> list[tuple[str, str]] | None:
    """(holder, pattern) of the active exclusive reservations of the file ``name``
    holding ``data``; None for a file the full check would not read as this: one the
    plain reader declines (the model may refuse it) or that is misfiled, which the full
    check reports as untrusted and refuses the commit for (``load_reservations``)."""
    from hive.domain import reserveplain
    from hive.times import utc_now

    found = reserveplain.plain_file(data)
    path = f"{reserveplain.RESERVATIONS_DIR}/{name}"
    holders = [] if found is None else [item.agent for item in found.reservations]
    if found is None or reserveplain.misfiled(path, found.agent, holders) is not None:
        return None
    held = reserveplain.exclusive_held(found.reservations, utc_now())
    return [(item.agent, item.path_pattern) for item in held]


def _staged_paths(inv: Invocation) -> list[str] | None:
    """Paths the commit being made changes (git honours GIT_INDEX_FILE for us); None
    also when a submodule's commit is among them (it stands for the files below it,
    which the full check compares with the reservations). The plumbing ``diff-index``,
    not ``diff``: no diff settings of the user's apply (``diff.relative``,
    ``diff.ignoreSubmodules``), and ``--ignore-submodules=none`` overrides
    ``submodule.NAME.ignore``, so a staged submodule commit is never left out."""
    argv = ["git", "-C", inv.directory, "diff-index", "--cached", "--raw", "--no-renames"]
    output = output_of([*argv, "--ignore-submodules=none", "-z", "HEAD"])
    if output is None:
        return None
    fields = output.decode("utf-8", "surrogateescape").split("\0")
    paths = []
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if GITLINK_HEADER in header[:15]:  # ":OLDMODE NEWMODE ..."
            return None
        paths.append(path)
    return paths


def output_of(argv: list[str], env: dict[str, str] | None = None) -> bytes | None:
    """What ``argv`` prints on standard output when it exits 0 (its standard error
    discarded; in ``env``, default this process's), else None: ``subprocess.run(argv,
    capture_output=True, env=env)`` without importing ``subprocess`` (with
    ``threading``, ``selectors``, ``locale`` and ``re``: ~6 ms of every commit the hook
    checks)."""
    import os

    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            done = subprocess.run(argv, capture_output=True, check=False, env=env)
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None
    read_end, write_end = os.pipe()
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_CLOSE, read_end),
            (os.POSIX_SPAWN_CLOSE, write_end),
        ]
        pid = os.posix_spawnp(argv[0], argv, env or os.environ, file_actions=actions)
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None
