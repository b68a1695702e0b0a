"""dulwich's ``Repo``, opened as git opens a repository.

dulwich refuses a repository whose ``extensions`` it does not know
(``UnsupportedExtension``), git's own included: ``partialClone`` (a repository made
partial by ``git fetch --filter``, or cloned by an older git), ``preciousObjects``
(objects another repository borrows) and ``noop``. None of them changes how objects or
refs are read or written; each asks something of whoever deletes objects, which hive
honours itself (``packing``: a partial clone's promisor packs are never merged, and a
precious-objects repository is never packed). Opened here, dulwich reads the
repository's config without them; every other extension it refuses stays refused.
"""

from __future__ import annotations

import contextlib

from dulwich.config import ConfigFile
from dulwich.repo import Repo

# Lower case, as dulwich compares extension names.
KNOWN_TO_GIT = (b"partialclone", b"preciousobjects", b"noop")


class _Opened(Repo):
    """A ``Repo`` whose config, while it is being opened, leaves out ``KNOWN_TO_GIT``."""

    def __init__(self, root: str) -> None:
        self._opening = True
        super().__init__(root)
        self._opening = False

    def get_config(self) -> ConfigFile:
        config = super().get_config()
        if getattr(self, "_opening", False):
            for name in KNOWN_TO_GIT:
                with contextlib.suppress(KeyError):
                    config.remove((b"extensions",), name)
        return config


def open_repo(root: str) -> Repo:
    """The repository at ``root`` (a working tree or a git directory), as
    ``dulwich.repo.Repo(root)`` opens it but for the extensions git knows above."""
    return _Opened(root)
