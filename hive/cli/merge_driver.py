"""The git merge driver for ``.hive/`` files: ``merge.hive.driver``.

git runs ``<python> -m hive.cli.merge_driver %O %A %B %P`` for a file both
sides changed (``hive init`` installs it; see :mod:`hive.domain.merge`). The
merged file is written over ``%A``; the exit code is 0 when the merge is
clean. Nothing here ever writes conflict markers: when no side parses, ``%A``
(ours) is left as it is and git reports the path as conflicted.
"""

from __future__ import annotations

import os
import sys

from hive.text import shown_lines

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.domain.merge import MergeOutcome


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _their_commits() -> list[str]:
    """The commits being merged in: ``git merge`` names each in its environment
    (``GITHEAD_<sha>=<name>``); a rebase or cherry-pick does not."""
    prefix = "GITHEAD_"
    names = [key[len(prefix) :] for key in os.environ if key.startswith(prefix)]
    return [sha for sha in names if len(sha) == 40 and all(c in _HEX for c in sha)]


_HEX = frozenset("0123456789abcdef")


def _merge(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None) -> MergeOutcome:
    """The merge of one file, against the best base the two histories give (git runs
    the driver in the top directory of the working tree)."""
    from hive.domain.merge import merge_file, merge_in_repository
    from hive.errors import HiveError

    if ours is None or theirs is None:
        return merge_file(path, base, ours, theirs)
    try:
        from hive.git.refs import discover
        from hive.git.repo import GitRepo

        repo = GitRepo(discover(os.getcwd()), recover=False)  # never write during git's merge
        try:
            return merge_in_repository(
                repo, path, base, ours, theirs, their_commits=_their_commits()
            )
        finally:
            repo.close()
    except (HiveError, OSError, KeyError, ValueError):  # history unreadable: git's base
        return merge_file(path, base, ours, theirs)


def _merge_plain(
    path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> tuple[bytes, list[str]] | None:
    """:func:`_merge`'s result (the file, the fields a conflict record keeps) without
    pydantic or dulwich (``hive/domain/mergecore.py``), or None when only the full path
    can give it. Most files both sides changed are cells in hive's own form, and each
    costs a process: this path imports a fraction of the full one."""
    from hive.domain.mergecore import merge_plain
    from hive.errors import HiveError
    from hive.git.pathhistory import LooseHistory, Unreadable

    def history() -> LooseHistory:
        from hive.git.refs import discover

        return LooseHistory(discover(os.getcwd()))

    try:
        return merge_plain(path, base, ours, theirs, history, _their_commits())
    except (Unreadable, HiveError, OSError, KeyError, ValueError):  # the full path's to handle
        return None


def _record_ids(path: str, content: bytes) -> None:
    """A reservation file merged here: its ids (one renumbered by the merge included)
    are never given again by this clone, as after a ``hive sync``."""
    from hive.domain.mergecore import is_reservation_path

    if not is_reservation_path(path):
        return  # (a cell: nothing more imported)
    from hive.domain.reservecore import raise_sequence
    from hive.errors import HiveError

    try:
        from hive.git.refs import discover

        state_dir = discover(os.getcwd()).hive_state_dir
    except (HiveError, OSError):  # not in a repository hive can read: nothing to record
        return
    raise_sequence(state_dir, [(path, content)])


def run(argv: list[str]) -> int:
    if len(argv) != 4:
        sys.stderr.write("usage: python -m hive.cli.merge_driver BASE OURS THEIRS PATH\n")
        return 2
    base_file, ours_file, theirs_file, path = argv
    ours, base, theirs = _read(ours_file), _read(base_file), _read(theirs_file)
    plain = _merge_plain(path, base, ours, theirs)
    if plain is not None:
        content, fields, clean, message = plain[0], plain[1], True, ""
    else:
        outcome = _merge(path, base, ours, theirs)
        content, clean, message = outcome.content, outcome.clean, outcome.message
        fields = [record.field for record in outcome.conflicts]
    if clean:
        _record_ids(path, content)
    if content != ours:
        temp = f"{ours_file}.hive-merge-{os.getpid()}"
        with open(temp, "wb") as handle:
            handle.write(content)
        os.replace(temp, ours_file)
    for name in fields:
        sys.stderr.write(
            shown_lines(
                f"hive: {path}: both sides changed {name}; kept one value, the other"
                " is recorded (see 'hive show', 'hive resolve')"
            )
            + "\n"
        )
    if not clean:
        sys.stderr.write(shown_lines(f"hive: cannot merge {path}: {message}") + "\n")
        return 1
    return 0


def main() -> None:
    from hive.cli import ending_code, interrupted, take_interrupts

    take_interrupts()
    try:
        code = run(sys.argv[1:])
    except KeyboardInterrupt:  # the file git gave is left as it was (replaced atomically)
        code = interrupted(None)
    except Exception as exc:  # never a traceback in the middle of a git merge
        if os.environ.get("HIVE_DEBUG"):
            raise
        sys.stderr.write(
            shown_lines(f"hive merge driver failed: {type(exc).__name__}: {exc}") + "\n"
        )
        code = 1
    sys.exit(ending_code(code))


if __name__ == "__main__":
    main()
