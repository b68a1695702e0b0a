"""Installing hive's git hooks (idempotent, each chains an existing hook of its name):
``pre-commit`` (reservations, valid ``.hive/`` files), ``commit-msg`` (the
``Hive-Cell:`` trailer of an agent's own commits, ``hive/domain/commitmsg.py``) and
``pre-merge-commit`` (the pre-commit check on the commit a clean ``git merge`` makes:
without it a merge brought files under another's reservation past the check that a
merge concluded by ``git commit`` after a conflict meets)."""

from __future__ import annotations

import os
import stat
import sys

from hive.domain.workspace import Workspace
from hive.errors import Conflict
from hive.models.results import HookResult

MARKER = "# installed by hive"
CHAINED_SUFFIX = ".hive-chained"
HOOKS = ("pre-commit", "commit-msg", "pre-merge-commit")
FRAMEWORK_SIGN = "pre-commit.com"  # in the hook scripts the pre-commit framework writes


def hooks_dir(ws: Workspace) -> str:
    """``core.hooksPath`` (relative to the working tree) or ``<git dir>/hooks``."""
    configured = ws.git.config_value("core", "hooksPath")
    if configured:
        expanded = os.path.expanduser(configured)
        return expanded if os.path.isabs(expanded) else os.path.join(ws.root, expanded)
    return os.path.join(ws.git.paths.common_dir, "hooks")


def in_working_tree(ws: Workspace, path: str) -> bool:
    """Whether the hook at ``path`` is a file of the project (``core.hooksPath`` naming
    a directory of the working tree, such as ``.githooks``): a commit would share it,
    with this machine's path to Python, with every clone."""
    root, found = os.path.realpath(ws.root), os.path.realpath(path)
    git_dir = os.path.realpath(ws.git.paths.common_dir)
    inside = os.path.commonpath([root, found]) == root
    return inside and os.path.commonpath([git_dir, found]) != git_dir


def hook_script(name: str = "pre-commit") -> str:
    """The script hive installs as git's hook ``name`` (one of HOOKS)."""
    python = sys.executable
    if name == "commit-msg":
        return _commit_msg_script(python)
    when = "git merge (a merge commit)" if name == "pre-merge-commit" else "git commit"
    return f"""#!/bin/sh
{MARKER}: enforces file reservations and validates .hive/ on {when}.
# Skip once with HIVE_BYPASS=1 or --no-verify. Fails closed without hive.
{_chained(name)}if [ -x "{python}" ]; then
  exec "{python}" -c 'from hive.cli.entry import console; console()' hooks run pre-commit
fi
if command -v hive >/dev/null 2>&1; then
  exec hive hooks run pre-commit
fi
if [ "$HIVE_BYPASS" = "1" ]; then
  exit 0
fi
echo "hive {name}: cannot find hive ({python} or 'hive' on PATH), so reservations" >&2
echo "cannot be checked; commit blocked. Reinstall with 'hive hooks install'," >&2
echo "or skip this check once with HIVE_BYPASS=1 (or --no-verify)." >&2
exit 1
"""


def _commit_msg_script(python: str) -> str:
    """``commit-msg``: an agent's commit (``HIVE_AGENT_TOKEN`` set) gets the
    ``Hive-Cell:`` trailer of its cell; it never blocks a commit itself (a chained hook
    of the user's still may), and a person's commit starts no process."""
    return f"""#!/bin/sh
{MARKER}: adds the Hive-Cell: trailer of the cell an agent works on to its commits.
# Never blocks a commit itself (a chained hook of yours may); skipped by --no-verify.
{_chained("commit-msg")}[ -n "$HIVE_AGENT_TOKEN" ] || exit 0
if [ -x "{python}" ]; then
  "{python}" -c 'from hive.cli.entry import console; console()' hooks run commit-msg "$1"
elif command -v hive >/dev/null 2>&1; then
  hive hooks run commit-msg "$1"
fi
exit 0
"""


def _chained(name: str) -> str:
    """The part of hook ``name`` that first runs the user's own hook it replaced."""
    return f"""chained="$(dirname "$0")/{name}{CHAINED_SUFFIX}"
# A chained shell script runs under its own #! shell with git's name for this hook as
# its $0: hook managers (husky) find the user's script by that name.
hive_chained_shell() {{
  first=""
  IFS= read -r first < "$1" || [ -n "$first" ] || return 0
  case "$first" in "#!"*) ;; *) return 0 ;; esac
  set -f
  set -- ${{first#??}}
  set +f
  case "$1" in */env) shift ;; esac
  case "${{1##*/}}" in sh|ash|dash|bash|ksh|mksh|zsh) echo "$*" ;; esac
}}
if [ -x "$chained" ]; then
  shell="$(hive_chained_shell "$chained")"
  if [ -n "$shell" ]; then
    HIVE_CHAINED_HOOK="$chained" $shell -c '. "$HIVE_CHAINED_HOOK"' "$0" "$@" || exit $?
  else
    "$chained" "$@" || exit $?
  fi
fi
"""


def missing_hooks(ws: Workspace) -> list[str]:
    """The hooks of HOOKS that do not run hive here: no such hook, or one that neither
    hive installed nor calls 'hive hooks run' (a pre-commit framework's hook counts as
    running it: the framework's configuration, which hive does not read, declares it)."""
    directory = hooks_dir(ws)
    missing = []
    for name in HOOKS:
        try:
            text = _read(os.path.join(directory, name))
        except OSError:
            text = ""
        if not any(sign in text for sign in (MARKER, "hive hooks run", FRAMEWORK_SIGN)):
            missing.append(name)
    return missing


def install_hook(ws: Workspace) -> HookResult:
    """Install every hook of HOOKS: the pre-commit hook's result, the others' in
    ``also``. Nothing is changed while one of them cannot be read."""
    _check_readable(ws, "install")
    try:
        first, *others = [_install(ws, name) for name in HOOKS]
    except OSError as exc:
        raise _unwritable(exc) from None
    return first.model_copy(update={"also": others})


def _unwritable(exc: OSError) -> Conflict:
    where = f" {exc.filename}" if exc.filename else ""
    return Conflict(f"cannot change git's hook{where}: {exc.strerror or exc}")


def _install(ws: Workspace, name: str) -> HookResult:
    directory = hooks_dir(ws)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise Conflict(
            f"{directory} cannot hold git's hooks ({exc.strerror}): move what is there"
            " away, then run 'hive hooks install' again"
        ) from None
    path = os.path.join(directory, name)
    chained = path + CHAINED_SUFFIX
    script = hook_script(name)
    set_aside: str | None = None
    if os.path.exists(path):
        current = _read(path)
        if MARKER in current:
            if current == script:
                return HookResult(path=path, action="unchanged", chained=_existing(chained))
        elif not os.path.exists(chained):
            os.replace(path, chained)
        else:  # a second hook of the user's: kept beside the chained one, never over one
            set_aside = _free_name(chained + ".old")
            os.replace(path, set_aside)
    _write_executable(path, script)
    return HookResult(
        path=path, action="installed", chained=_existing(chained), set_aside=set_aside
    )


def _free_name(base: str) -> str:
    """``base``, or ``base.2``, ``base.3``, ... : the first name nothing has."""
    name, number = base, 2
    while os.path.lexists(name):
        name, number = f"{base}.{number}", number + 1
    return name


def uninstall_hook(ws: Workspace) -> HookResult:
    """Remove every hook of HOOKS hive installed (putting back a chained one): the
    pre-commit hook's result, the others' in ``also``. Nothing is changed while one of
    them cannot be read."""
    _check_readable(ws, "uninstall")
    _check_chained(ws)
    first, *others = [_uninstall(ws, name) for name in HOOKS]
    return first.model_copy(update={"also": others})


def _uninstall(ws: Workspace, name: str) -> HookResult:
    path = os.path.join(hooks_dir(ws), name)
    chained = path + CHAINED_SUFFIX
    if not os.path.exists(path):
        return HookResult(path=path, action="absent")
    try:
        if MARKER not in _read(path):
            return HookResult(path=path, action="not-ours")
        os.unlink(path)
        if os.path.exists(chained):
            os.replace(chained, path)
            return HookResult(path=path, action="restored", chained=path)
    except OSError as exc:
        raise _unwritable(exc) from None
    return HookResult(path=path, action="removed")


def _check_readable(ws: Workspace, command: str) -> None:
    """Refuse, naming the file, when a hook of HOOKS is a directory or cannot be read
    (a socket, no read permission), before ``hive hooks COMMAND`` changes anything."""
    again = f"then run 'hive hooks {command}' again"
    directory = hooks_dir(ws)
    for name in HOOKS:
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            raise Conflict(f"{path} is a directory, not a hook: move it away, {again}")
        if not os.path.exists(path):  # a dangling link is replaced, as no hook
            continue
        try:
            _read(path)
        except OSError as exc:
            raise Conflict(
                f"cannot read git's hook {path} ({exc.strerror or exc}): make it a readable"
                f" file or move it away, {again}"
            ) from None


def _check_chained(ws: Workspace) -> None:
    """Refuse, naming it, a chained hook that uninstall would put back in its hook's
    place but that is no regular file (a directory, a socket): nothing is changed."""
    again = "then run 'hive hooks uninstall' again"
    for name in HOOKS:
        path = os.path.join(hooks_dir(ws), name)
        chained = path + CHAINED_SUFFIX
        if not os.path.exists(chained) or os.path.isfile(chained):
            continue
        if os.path.exists(path) and MARKER in _read(path):  # readable: _check_readable
            what = "a directory" if os.path.isdir(chained) else "not a regular file"
            raise Conflict(
                f"{chained} is {what}, not a hook to put back in {name}'s place:"
                f" move it away, {again}"
            )


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _existing(path: str) -> str | None:
    return path if os.path.exists(path) else None


def _write_executable(path: str, content: str) -> None:
    temp = f"{path}.tmp-{os.getpid()}"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(content)
    mode = os.stat(temp).st_mode
    os.chmod(temp, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(temp, path)
