"""``python -m hive`` and the ``hive`` console script (``hive.__main__:console``): the
first code of a ``hive`` process. Ctrl-C is held from here until the command line's
code is imported: a KeyboardInterrupt raised while ``hive.cli.entry`` and what it
imports load ended in a traceback (``hive/cli/__init__.py``'s ``HeldInterrupts``
holds it only once that module has loaded). This module imports only ``_signal`` (a
builtin) first, so the window left is the interpreter's own start-up.
"""

import _signal  # type: ignore[import-not-found]  # builtin, loaded at start-up
import sys


def console() -> None:
    """Run the ``hive`` command line of ``sys.argv`` (exits with its code)."""
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        caught.append(signum)

    try:
        previous = _signal.signal(_signal.SIGINT, hold)
    except ValueError:  # not the main thread (an in-process caller): nothing to hold
        previous = None
    try:
        from hive.cli import entry
    finally:
        if previous is not None:
            _signal.signal(_signal.SIGINT, previous)
    if caught:
        from hive.cli import interrupted, parse

        sys.exit(interrupted(parse(sys.argv[1:]).command))
    entry.console()


if __name__ == "__main__":
    console()
