"""git's own line merge of a file between two commits (``git merge-file``, against the
version of a base ``pathhistory.merge_bases`` names): what ``git merge`` leaves of a file
that has no merge driver of hive's, for ``hive doctor``'s audit of merge commits
(:mod:`hive.domain.mergeaudit`)."""

from __future__ import annotations

import os
import tempfile

from hive.errors import GitError
from hive.git.rungit import run_git_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess


def line_merge(root: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file -p`` of ``ours`` and ``theirs`` against ``base`` (None: an
    empty one, as git merges a file both sides added): the merged text, with conflict
    markers where the two collide; None when git cannot answer."""
    with tempfile.TemporaryDirectory(prefix="hive-merge-") as folder:
        names = []
        for label, data in (("ours", ours), ("base", base or b""), ("theirs", theirs)):
            name = os.path.join(folder, label)
            with open(name, "wb") as handle:
                handle.write(data)
            names.append(name)
        done = _git(root, "merge-file", "-p", *names)
    if done is None or done.returncode < 0 or done.returncode > 127:
        return None  # (the exit code counts the conflicts, up to 127; 255: an error)
    return done.stdout


def _git(root: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return run_git_bytes(root, *args)
    except GitError:  # no usable git
        return None
