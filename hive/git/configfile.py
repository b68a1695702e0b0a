"""git config values without dulwich, for the files and forms hive can read for sure.

``GitRepo.config_value`` asks here first and falls back to dulwich's config
stack when this reader is not sure (:class:`Unsure`), so a fresh write process
does not import dulwich just to learn ``user.name``. The files and their order
are dulwich's (``Repo.get_config_stack``): the repository's ``config``, then
``$GIT_CONFIG_GLOBAL`` or ``~/.gitconfig`` and ``$XDG_CONFIG_HOME/git/config``,
then ``$GIT_CONFIG_SYSTEM`` or ``/etc/gitconfig`` (unless
``GIT_CONFIG_NOSYSTEM`` is true); the first file that sets a key wins, and within a
file the last value. Only plain ``[section]`` headers and ``key = value``
lines whose value has no quote, backslash or comment are read; anything else
(includes, quoted values, odd syntax) is :class:`Unsure`. With
``extensions.worktreeConfig`` true, the worktree's ``config.worktree`` comes first.

Before every file come the settings git takes from the environment, which it
applies after all of them: ``GIT_CONFIG_COUNT``'s pairs (``GIT_CONFIG_KEY_<n>``,
``GIT_CONFIG_VALUE_<n>``), then ``GIT_CONFIG_PARAMETERS`` (what ``git -c`` hands
its child processes, hooks among them), the last one of a key winning. They are
parsed only when set, as git parses them; what git would refuse (a bogus count, a
missing pair, an invalid key), an include, or a key without a value (``git -c
key``, a boolean true) is :class:`UnsureEnvironment`: ``git config`` answers.
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


class UnsureEnvironment(Unsure):
    """The environment's config may set the key in a way this reader does not follow
    (dulwich does not read the environment either): ask git."""


def config_value(
    paths: RepoPaths, section: str, key: str, *, environment: bool = True
) -> str | None:
    """The value of ``section.key`` (a section without subsection), None when unset;
    ``environment=False`` reads the files only (git reads a repository's format,
    ``core.bare`` and ``core.worktree``, from its own config file)."""
    wanted = (section.lower(), key.lower())
    if environment:
        found = environment_value(wanted)
        if found is not _UNSET:
            assert isinstance(found, str)
            return found
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


def setting(
    paths: RepoPaths, section: str, key: str, *, valueless: str | None = None
) -> str | None:
    """``section.key`` as written (:func:`config_value`); a config this reader cannot
    read for sure (includes, quoted values, a key without ``=``) is asked of git (no
    git: None). ``valueless``: what a key written without ``=`` stands for (git's
    readers get no value, where ``key =`` gives them ""; ``git config --get`` prints
    an empty line for both, ``--type=bool`` true for the first only); else ""."""
    try:
        return config_value(paths, section, key)
    except Unsure:
        from hive.errors import GitError
        from hive.git.rungit import run_git

        name = f"{section}.{key}"
        try:
            found = run_git(paths.root, "config", "--get", name)
            if found.returncode != 0:
                return None
            value = found.stdout.rstrip("\n")
            if value or valueless is None:
                return value
            boolean = run_git(paths.root, "config", "--type=bool", "--get", name)
        except GitError:
            return None
        return valueless if boolean.stdout.strip() == "true" else value


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


def ignores_case(paths: RepoPaths) -> bool:
    """Whether the repository's file system ignores case, as git is told
    (``core.ignorecase``, which ``git init`` and ``git clone`` set on such a file
    system): there ``SRC/a.py`` and ``src/a.py`` are one file."""
    return flag(paths, "core", "ignorecase")


def is_true(value: str | None) -> bool:
    """A config value written with ``=`` as ``git config --type=bool`` reads it (unset,
    or a value git refuses: false). A key written without ``=`` is true to git: the
    readers here cannot see that form (:class:`Unsure`); :func:`flag` asks git then."""
    return value is not None and git_boolean(value) is True


def git_boolean(value: str) -> bool | None:
    """git's ``git_config_bool`` of a value: ``true``/``yes``/``on`` and
    ``false``/``no``/``off`` (any case), empty is false, else an integer as
    ``git_parse_int`` reads it (decimal, ``0x`` hex, ``0`` octal, a ``k``/``m``/``g``
    unit) is true unless 0; None for a value git refuses."""
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off", ""):
        return False
    number = _git_int(value)
    return None if number is None else number != 0


_INT_MAX = 2**31 - 1  # git_parse_int's bound (a C int)
_DECIMAL = frozenset("0123456789")
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _git_int(text: str) -> int | None:
    """``strtoimax(text, &end, 0)`` then a unit at ``end``, as ``git_parse_signed``
    reads it for an int; None where git refuses (no digits, another suffix, out of
    range)."""
    at = len(text) - len(text.lstrip(_SPACE))
    sign = -1 if text[at : at + 1] == "-" else 1
    at += text[at : at + 1] in ("-", "+")
    base, digits = 10, _DECIMAL
    if text[at : at + 2] in ("0x", "0X") and text[at + 2 : at + 3] in _HEX:
        base, digits, at = 16, _HEX, at + 2
    elif text[at : at + 1] == "0":
        base, digits = 8, _OCTAL
    end = at
    while end < len(text) and text[end] in digits:
        end += 1
    factor = _UNITS.get(text[end:].lower())
    if end == at or factor is None:
        return None
    number = int(text[at:end], base)
    if number > _INT_MAX // factor:
        return None
    return sign * number * factor


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
    """A config boolean git reads for sure (:func:`git_boolean`); None for a value git
    refuses."""
    return git_boolean(value.strip())


def shared_config_files() -> list[str]:
    """The global and system config files, in the order they are asked: git's
    ``GIT_CONFIG_GLOBAL`` replaces both user files, a true ``GIT_CONFIG_NOSYSTEM``
    (a boolean: ``0``, ``false`` or empty keep it) drops the system file, whichever
    file ``GIT_CONFIG_SYSTEM`` names (a value git refuses as a boolean:
    :class:`UnsureEnvironment`)."""
    files: list[str] = []
    environ = os.environ
    if "GIT_CONFIG_GLOBAL" in environ:
        files.append(environ["GIT_CONFIG_GLOBAL"])
    else:
        files += user_config_files()
    no_system = environ.get("GIT_CONFIG_NOSYSTEM")
    if no_system is not None and _boolean(no_system) is None:
        raise UnsureEnvironment("GIT_CONFIG_NOSYSTEM")
    if no_system is None or not _boolean(no_system):
        files.append(environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
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


# ------------------------------------------------------ settings from the environment
_UNSET = object()  # the environment does not set the key
_SPACE = " \t\n\v\f\r"  # C's isspace


def environment_value(wanted: tuple[str, str]) -> object:
    """The environment's value of (section, key), lower case: the string, or
    ``_UNSET``; :class:`UnsureEnvironment` when git may read it otherwise."""
    environ = os.environ
    if "GIT_CONFIG_COUNT" not in environ and "GIT_CONFIG_PARAMETERS" not in environ:
        return _UNSET  # the common case: nothing parsed
    settings = environment_settings()
    if settings is None:
        raise UnsureEnvironment("GIT_CONFIG_COUNT or GIT_CONFIG_PARAMETERS")
    found = settings.get(wanted, _UNSET)
    if found is _DOUBT:
        raise UnsureEnvironment(".".join(wanted))
    return found


def environment_settings() -> dict[tuple[str, str], object] | None:
    """(section, key) -> the last value the environment gives it (``_DOUBT``: no
    value, a boolean true), keys with a subsection left out; None when git would
    refuse the settings or they include a file (git's ``git_config_from_parameters``)."""
    environ = os.environ
    settings: dict[tuple[str, str], object] = {}
    count = environ.get("GIT_CONFIG_COUNT")
    if count:  # git reads an empty count as none
        if any(digit not in "0123456789" for digit in count):
            return None
        for number in range(int(count)):
            key = environ.get(f"GIT_CONFIG_KEY_{number}")
            value = environ.get(f"GIT_CONFIG_VALUE_{number}")
            if key is None or value is None or not _setting(settings, key, value):
                return None
    pairs = _parameters(environ.get("GIT_CONFIG_PARAMETERS") or "")
    if pairs is None:
        return None
    for key, value in pairs:
        if not _setting(settings, key, value):
            return None
    return settings


def _setting(settings: dict[tuple[str, str], object], key: str, value: str | None) -> bool:
    """Record one pair as git's ``config_parse_pair`` reads it; False where git refuses
    the key or the pair includes a file."""
    first, last = key.find("."), key.rfind(".")
    section, name = key[:first], key[last + 1 :]
    valid_section = first > 0 and all(c in _NAME_CHARS for c in section)
    valid_name = name[:1] in _LETTERS and all(c in _NAME_CHARS for c in name)
    if not (valid_section and valid_name) or "\n" in key:
        return False
    section = section.lower()
    if section in ("include", "includeif"):
        return False
    if first == last:  # a key with a subsection is never asked for here
        settings[(section, name.lower())] = _DOUBT if value is None else value
    return True


def _parameters(text: str) -> list[tuple[str, str | None]] | None:
    """The pairs of ``GIT_CONFIG_PARAMETERS`` (git's ``parse_config_env_list``):
    ``'key'='value'``, ``'key'=`` (no value) or the older ``'key=value'``, shell
    quoted, separated by spaces; None when git would call the format bogus."""
    pairs: list[tuple[str, str | None]] = []
    at: int | None = 0
    while at is not None and at < len(text):
        key, at = _dequote(text, at)
        if key is None:
            return None
        if at is None or text[at] in _SPACE:
            pair = _old_style(key)
            if pair is None:
                return None
            pairs.append(pair)
        elif text[at] == "=":
            at += 1
            value: str | None = None
            if at < len(text) and text[at] == "'":
                value, at = _dequote(text, at)
                if value is None or (at is not None and text[at] not in _SPACE):
                    return None
            elif at < len(text) and text[at] not in _SPACE:
                return None
            pairs.append((key, value))
        else:
            return None
        while at is not None and at < len(text) and text[at] in _SPACE:
            at += 1
    return pairs


def _old_style(text: str) -> tuple[str, str | None] | None:
    """``key=value`` (``key``: no value), the key trimmed (``git_config_parse_parameter``)."""
    key, equals, value = text.partition("=")
    key = key.strip(_SPACE)
    return (key, value if equals else None) if key else None


def _dequote(text: str, at: int) -> tuple[str | None, int | None]:
    """One single-quoted word from ``at`` (``'\\''`` and ``'\\!'`` inside, git's
    ``sq_dequote_step``): (the word, where the text goes on, None at its end);
    (None, None) when it is not one."""
    if text[at] != "'":
        return None, None
    out: list[str] = []
    at += 1
    while True:
        end = text.find("'", at)
        if end < 0:
            return None, None
        out.append(text[at:end])
        at = end + 1
        if at == len(text):
            return "".join(out), None
        escaped = text[at : at + 3]
        if len(escaped) == 3 and escaped[0] == "\\" and escaped[1] in "'!" and escaped[2] == "'":
            out.append(escaped[1])
            at += 3
            continue
        return "".join(out), at
