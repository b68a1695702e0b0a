"""git config values without dulwich, for the files and forms hive can read for sure.

``GitRepo.config_value`` asks here first and falls back to dulwich's config
stack when this reader is not sure (:class:`Unsure`), so a fresh write process
does not import dulwich just to learn ``user.name``. The files and their order
are dulwich's (``Repo.get_config_stack``): the repository's ``config``, then
``$GIT_CONFIG_GLOBAL`` or ``~/.gitconfig`` and ``$XDG_CONFIG_HOME/git/config``,
then ``$GIT_CONFIG_SYSTEM`` or ``/etc/gitconfig`` (unless
``GIT_CONFIG_NOSYSTEM``); the first file that sets a key wins, and within a
file the last value. Only plain ``[section]`` headers and ``key = value``
lines whose value has no quote, backslash or comment are read; anything else
(includes, quoted values, odd syntax) is :class:`Unsure`. With
``extensions.worktreeConfig`` true, the worktree's ``config.worktree`` comes first.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from hive.git.refs import RepoPaths

# Section and key names (``[A-Za-z0-9-]``, a key starting with a letter), read with
# string methods: a fresh write process does not import ``re`` for its config.
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NAME_CHARS = _LETTERS | frozenset("0123456789-")
_DOUBT = object()  # a value this reader cannot read for sure


class Unsure(Exception):
    """This reader cannot tell the value exactly as dulwich would: ask dulwich."""


def config_value(paths: RepoPaths, section: str, key: str) -> str | None:
    """The value of ``section.key`` (a section without subsection), None when unset."""
    wanted = (section.lower(), key.lower())
    for path in config_files(paths):
        values = _read(path)
        if values is None:
            continue
        if wanted in values:
            value = values[wanted]
            if value is _DOUBT or not isinstance(value, str):
                raise Unsure(path)
            return value
    return None


def setting(paths: RepoPaths, section: str, key: str) -> str | None:
    """``section.key`` as written (:func:`config_value`); a config this reader cannot
    read for sure (includes, quoted values) is asked of git (no git: None)."""
    try:
        return config_value(paths, section, key)
    except Unsure:
        from hive.errors import GitError
        from hive.git.rungit import run_git

        try:
            found = run_git(paths.root, "config", "--get", f"{section}.{key}")
        except GitError:
            return None
        return found.stdout.rstrip("\n") if found.returncode == 0 else None


def flag(paths: RepoPaths, section: str, key: str) -> bool:
    """A boolean setting as git reads it: :func:`is_true` of the value written; a value
    this reader cannot read for sure (a key written without ``=``, which git reads as
    true; includes) is asked of git as a boolean (no git: false)."""
    try:
        return is_true(config_value(paths, section, key))
    except Unsure:
        from hive.errors import GitError
        from hive.git.rungit import run_git

        try:
            found = run_git(paths.root, "config", "--type=bool", "--get", f"{section}.{key}")
        except GitError:
            return False
        return found.returncode == 0 and found.stdout.strip() == "true"


def is_true(value: str | None) -> bool:
    """A config boolean as git reads it (unset: false)."""
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    return lowered.lstrip("-").isdigit() and int(lowered) != 0


def config_files(paths: RepoPaths) -> list[str]:
    """The files asked, first to last: with ``extensions.worktreeConfig`` true (``git
    sparse-checkout`` sets it), this worktree's ``config.worktree`` first, which git
    reads after the repository's ``config`` (``GitRepo._config_stack`` alike)."""
    local = os.path.join(paths.common_dir, "config")
    files = [local]
    enabled = (_read(local) or {}).get(("extensions", "worktreeconfig"), None)
    if enabled is not None:
        if not isinstance(enabled, str) or _boolean(enabled) is None:
            raise Unsure("extensions.worktreeConfig")
        if _boolean(enabled):
            files.insert(0, os.path.join(paths.git_dir, "config.worktree"))
    return files + shared_config_files()


def _boolean(value: str) -> bool | None:
    """A config boolean git reads for sure (``true``/``yes``/``on``, ``false``/``no``/
    ``off``, a number; :func:`is_true` says which); None for a value git refuses."""
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on", "false", "no", "off", "") or lowered.lstrip("-").isdigit():
        return is_true(value)
    return None


def shared_config_files() -> list[str]:
    """The global and system config files, in the order they are asked."""
    files: list[str] = []
    environ = os.environ
    if "GIT_CONFIG_GLOBAL" in environ:
        files.append(environ["GIT_CONFIG_GLOBAL"])
    else:
        files += user_config_files()
    if "GIT_CONFIG_SYSTEM" in environ:
        files.append(environ["GIT_CONFIG_SYSTEM"])
    elif "GIT_CONFIG_NOSYSTEM" not in environ:
        files.append("/etc/gitconfig")
    return files


def user_config_files() -> list[str]:
    """``~/.gitconfig`` and ``$XDG_CONFIG_HOME/git/config`` as git finds them: from
    ``$HOME`` only (without it git reads neither, where Python's ``~`` would ask the
    password database and find another identity than git's)."""
    environ = os.environ
    home = environ.get("HOME")
    # ``$HOME/.gitconfig`` joined as git joins it: an empty HOME names /.gitconfig, not
    # .gitconfig in the current directory (a file a repository may commit)
    xdg = environ.get("XDG_CONFIG_HOME") or (home + "/.config" if home is not None else None)
    files = [home + "/.gitconfig"] if home is not None else []
    return files + ([os.path.join(xdg, "git", "config")] if xdg else [])


# Files read, by path: (stat signature, values). A file is read again when its stat
# signature changes; one changed less than a second before it was read is not kept
# (a second change in the same clock tick, same size, would not show in the stat).
_READ: dict[str, tuple[tuple[int, int, int, int], dict[tuple[str, str], object]]] = {}
_SETTLED_NS = 1_000_000_000


def _read(path: str) -> dict[tuple[str, str], object] | None:
    """(section, key) -> last value of one file (None when it does not exist). A file
    not changed since this process read it is not parsed again (each command asks for
    several keys, a long-lived process for many)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unsure(path) from exc
    signature = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
    known = _READ.get(path)
    if known is not None and known[0] == signature:
        return known[1]
    values = _parse(path)
    if (
        values is not None
        and time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _SETTLED_NS
    ):
        if len(_READ) >= 64:  # many repositories in one process (a test suite)
            _READ.clear()
        _READ[path] = (signature, values)
    return values


def _parse(path: str) -> dict[tuple[str, str], object] | None:
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Unsure(path) from exc
    values: dict[tuple[str, str], object] = {}
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            section = _section(line, path)
            continue
        found = _key_line(line)
        if found is None or section is None or "\\" in line:
            raise Unsure(path)
        if section == "":
            continue  # a section with a subsection: never asked for here
        key, value = found
        plain = value is not None and not any(mark in value for mark in '"\\#;')
        values[(section, key.lower())] = value.strip() if value is not None and plain else _DOUBT
    return values


def _name_end(text: str, start: int) -> int:
    """Where the run of name characters starting at ``start`` ends."""
    end = start
    while end < len(text) and text[end] in _NAME_CHARS:
        end += 1
    return end


def _key_line(line: str) -> tuple[str, str | None] | None:
    """(key, value after ``=`` or None) of ``key``, ``key = value`` or ``key=``: what
    ``([A-Za-z][A-Za-z0-9-]*)\\s*(=(.*))?`` matches in full; None for anything else."""
    if not line or line[0] not in _LETTERS:
        return None
    end = _name_end(line, 1)
    rest = line[end:].lstrip()
    if not rest:
        return line[:end], None
    if rest[0] != "=":
        return None
    return line[:end], rest[1:]


def _section(line: str, path: str) -> str:
    """The lower-cased name of a plain section, "" for one with a subsection."""
    end = _name_end(line, 1)
    if end == 1 or not line.endswith("]"):
        raise Unsure(path)
    subsection = line[end:-1]  # "" or whitespace, then a quoted name without \\ or "
    if subsection:
        quoted = subsection.lstrip()
        plain = len(quoted) >= 2 and quoted[0] == quoted[-1] == '"'
        if not (subsection[0].isspace() and plain) or any(c in quoted[1:-1] for c in '"\\'):
            raise Unsure(path)
    name = line[1:end].lower()
    if name in ("include", "includeif"):
        raise Unsure(path)
    return "" if subsection else name
