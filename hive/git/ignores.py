"""Which paths git ignores, by git's own rules (``git check-ignore``): every
``.gitignore`` on the way, ``.git/info/exclude`` and ``core.excludesFile``, with
negations, exactly as ``git add`` applies them."""

from __future__ import annotations

from collections.abc import Sequence

from hive.errors import GitError


def ignored_untracked(root: str, paths: Sequence[str]) -> dict[str, str]:
    """The ``paths`` (relative to ``root``) that git ignores and does not track, each
    with the rule that ignores it (``.gitignore:2: .env``); a tracked file is not
    ignored, as git commits its changes. GitError when git cannot tell."""
    if not paths:
        return {}
    from hive.git.rungit import run_git

    given = "".join(f"{path}\0" for path in paths)
    done = run_git(root, "check-ignore", "--verbose", "-z", "--stdin", input_text=given)
    if done.returncode not in (0, 1):  # 1: none of them is ignored
        said = done.stderr.strip() or f"exit code {done.returncode}"
        raise GitError(f"git check-ignore could not tell which files git ignores: {said}")
    fields = done.stdout.split("\0")
    found: dict[str, str] = {}
    for start in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[start : start + 4]
        if pattern.startswith("!"):  # --verbose also names a negation that keeps it
            continue
        found[path] = f"{source}:{line}: {pattern}"
    return found
