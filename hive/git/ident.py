"""A person's commit identity as ``git commit`` makes it (git's ``ident.c``), on the
full and the lean write path (``GitRepo.person_identity``).

git decides the author and the committer separately, each field from the first of:

- name: ``GIT_<ROLE>_NAME``, ``<role>.name``, ``user.name``, then a guess (the
  password database's full name);
- email: ``GIT_<ROLE>_EMAIL``, ``<role>.email``, ``user.email``, then ``EMAIL``,
  then a guess (``login@host``, refused when the host has no domain);

(``<ROLE>`` is ``AUTHOR`` or ``COMMITTER``; the config includes the environment's
``GIT_CONFIG_COUNT`` pairs and ``GIT_CONFIG_PARAMETERS``: ``hive/git/configfile.py``).
hive reads the first three steps itself, with no process. It asks git (``git
var GIT_<ROLE>_IDENT``, which answers name and email together) only when a field
needs the guess or holds a value git would change or refuse (empty; spaces or
punctuation at either end, which git trims; ``<``, ``>`` or a line break, which it
drops) or comes from a config file hive's reader cannot read for sure (an
``include``/``includeIf``: a work email set for one directory's repositories); and
then once per process for the same environment and config files. git's guesses
are the same for both roles, so one question usually serves both.
"""

from __future__ import annotations

import os

from hive.errors import GitError
from hive.record import Frozen

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from hive.git.repo import GitRepo

    Reader = Callable[[str, str], str | None]


class Identity(Frozen):
    """The author of a hive commit, and its committer: ``committer`` when git names
    another one (``GIT_COMMITTER_*``, ``committer.*``: ``hive/git/ident.py``), else the
    author."""

    _fields = ("name", "email", "committer")

    def __init__(self, name: str, email: str, committer: Identity | None = None) -> None:
        self.name = name
        self.email = email
        same = committer is None or (committer.name, committer.email) == (name, email)
        self.committer = None if same else committer

    def as_bytes(self) -> bytes:
        """``Name <email>``: the author."""
        return f"{self.name} <{self.email}>".encode()

    def committer_bytes(self) -> bytes:
        """``Name <email>`` of the committer (who also signs the reflog line)."""
        return (self.committer or self).as_bytes()


ROLES = ("author", "committer")
# What git trims from either end of a name or an email (besides spaces and control
# characters: everything up to U+0020); the list has changed between versions of git
# (``.`` was taken off it), so a value with any of them at an end is git's to answer.
_TRIMMED = frozenset(".,:;<>\"\\'")
_DROPPED = frozenset("<>\n")  # removed from inside a name or an email
_UNSURE = "\0unsure"  # a field git may read otherwise than as written: ask git

# git's answers in this process: (role, repository, config files' state, environment)
_answers: dict[tuple[object, ...], Identity | GitError] = {}


def person_identity(
    repo: GitRepo, made_up: Callable[[str | None, str | None], Identity]
) -> Identity:
    """The author and committer git would give the person's own commit in ``repo``.
    Where git knows no identity for a role ("Author identity unknown"),
    ``made_up(name, email)`` with the fields that are known (hive's identity at
    ``hive.local``), unless ``user.useConfigOnly`` forbids a made-up identity: then the
    ``GitError`` with git's reason, as ``git commit`` refuses."""
    read = _config_reader(repo)
    fields = {role: _fields(role, read, os.environ) for role in ROLES}
    found = {role: _known(fields[role]) for role in ROLES}
    # git's guesses (the name, the email) are the same for both roles: the answer for
    # the role missing most serves a role missing no more than it
    guessing = [role for role in ROLES if found[role] is None and _UNSURE not in fields[role]]
    widest = max(guessing, key=lambda role: len(_gaps(fields[role])), default="")
    for role in ROLES:
        if found[role] is None:
            serves = role in guessing and _gaps(fields[role]) <= _gaps(fields[widest])
            found[role] = _from_git(repo, widest if serves else role, fields[role], made_up)
    author, committer = found["author"], found["committer"]
    assert author is not None and committer is not None
    return Identity(author.name, author.email, committer=committer)


def _known(fields: tuple[str | None, str | None]) -> Identity | None:
    name, email = fields
    if name is None or email is None or _UNSURE in fields:
        return None
    return Identity(name=name, email=email)


def _gaps(fields: tuple[str | None, str | None]) -> set[int]:
    """Which of (name, email) git would guess."""
    return {number for number, value in enumerate(fields) if value is None}


def _config_reader(repo: GitRepo) -> Reader:
    """``section.field`` of the config (``GIT_CONFIG_*`` settings of the environment
    first: ``GitRepo.config_value``), each read once."""
    cache: dict[str, str | None] = {}

    def read(section: str, field: str) -> str | None:
        key = f"{section}.{field}"
        if key not in cache:
            cache[key] = _file_value(repo, section, field)
        return cache[key]

    return read


def _file_value(repo: GitRepo, section: str, field: str) -> str | None:
    """``section.field`` as hive's config reader reads it for sure (the environment's
    ``GIT_CONFIG_*`` settings first); ``_UNSURE`` where it cannot (an ``include`` or
    ``includeIf``, which may set it for this repository only: git follows them,
    dulwich's config stack behind ``GitRepo.config_value`` does not)."""
    from hive.git.configfile import Unsure, config_value

    try:
        return config_value(repo.paths, section, field)
    except Unsure:
        return _UNSURE


def _fields(role: str, read: Reader, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(name, email) of ``role`` from the environment and config: None where git would
    guess, ``_UNSURE`` where git may read it otherwise than as written."""
    found: list[str | None] = []
    for field in ("name", "email"):
        value = environ.get(f"GIT_{role.upper()}_{field.upper()}")
        for section in (role, "user"):
            if value is None:
                value = read(section, field)
        found.append(value if value is None or _as_written(value) else _UNSURE)
    return found[0], found[1]


def _as_written(value: str) -> bool:
    """Whether git takes ``value`` exactly as written (see the module's docstring)."""
    ends = (value[:1], value[-1:])
    if not value or any(end <= " " or end in _TRIMMED for end in ends):
        return False
    return _DROPPED.isdisjoint(value)


def _from_git(
    repo: GitRepo,
    asked: str,
    fields: tuple[str | None, str | None],
    made_up: Callable[[str | None, str | None], Identity],
) -> Identity:
    """A role's identity: its known ``fields``, git's answer for role ``asked`` (its
    own, or one that guessed the same fields) for the others; where git refuses to
    guess, ``made_up`` or (``user.useConfigOnly``) git's refusal."""
    name, email = (None if value == _UNSURE else value for value in fields)
    answer = _ask_git(repo, asked)
    if isinstance(answer, Identity):
        return Identity(name=name or answer.name, email=email or answer.email)
    from hive.git.configfile import flag

    if flag(repo.paths, "user", "useConfigOnly"):
        raise answer
    return made_up(name, email)


def _ask_git(repo: GitRepo, role: str) -> Identity | GitError:
    """``git var GIT_<ROLE>_IDENT``: git's identity for ``role``, or the GitError
    naming git's reason; asked once per process for the same environment and config."""
    key = (role, repo.paths.root, repo.config_state(), tuple(sorted(os.environ.items())))
    if key not in _answers:
        if len(_answers) >= 64:  # many repositories or settings in one process (tests)
            _answers.clear()
        _answers[key] = _git_var(repo.paths.root, f"GIT_{role.upper()}_IDENT")
    return _answers[key]


def _git_var(root: str, variable: str) -> Identity | GitError:
    from hive.git.rungit import run_git

    try:
        said = run_git(root, "var", variable)
    except GitError as exc:
        return exc
    ident = said.stdout.strip()
    start, end = ident.rfind(" <"), ident.rfind(">")
    if said.returncode != 0 or start <= 0 or end < start:
        return unknown_identity(said.stderr)
    return Identity(name=ident[:start], email=ident[start + 2 : end])


def unknown_identity(stderr: str) -> GitError:
    """The refusal of a write whose person git knows no identity for (``useConfigOnly``)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    reason = lines[-1].removeprefix("fatal: ") if lines else "git var failed"
    return GitError(
        "git does not know who you are and user.useConfigOnly forbids a made-up"
        f" identity, so hive does not commit either ({reason}):"
        ' run git config --global user.name "Your Name" and git config --global'
        " user.email you@example.com (without --global: this repository only), or set"
        " GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL;"
        " an agent commits as itself (hive agent register NAME)"
    )
