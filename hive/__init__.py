"""hive: a git-backed issue tracker and coordination layer for swarms of coding agents."""

__version__ = "0.1.0"


_STOPPED_AT_START = False  # the command is a server (mcp, serve): Ctrl-C stops it, exit 0
# A Ctrl-C whose KeyboardInterrupt Python swallowed (:func:`_interrupt_again`) and no
# handler of hive's has answered yet: the process ends in 130 whatever else happens
# (``hive.cli.ending_code``), also when it ends before the Ctrl-C is delivered again.
_SWALLOWED = False


def _interrupted_at_start(signum: int, frame: object) -> None:
    """Ctrl-C (and a server's SIGTERM) before a hive command's entry point is ready to
    handle it (its imports): nothing has been written yet, so the process ends at once,
    as an interrupted command ends (exit 130 and one word; a server: 0; never a
    traceback). The entry point puts Python's own handler back
    (``hive.cli.take_interrupts``) first; a server's own SIGTERM handler replaces this
    one once it is ready (``hive serve``: serve_cmd, ``hive mcp``: mcp_start)."""
    import os

    if _STOPPED_AT_START:
        os._exit(0)
    os.write(2, b"interrupted\n")
    if _wants_json():  # the error object on stdout too, as hive.cli.interrupted prints it
        try:  # noqa: SIM105 - no import in a signal handler that runs mid-import
            os.write(1, b'{\n  "error": "interrupted",\n  "code": "interrupted"\n}\n')
        except OSError:  # the reader is gone
            pass
    os._exit(130)


def _wants_json() -> bool:
    """Whether ``--json`` is on the command line (before a ``--``)."""
    import sys

    for arg in sys.argv[1:]:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _command_word() -> str | None:
    """The command of ``sys.argv`` (global options and their values skipped)."""
    import sys

    args = sys.argv[1:]
    while args:
        arg = args.pop(0)
        if arg in ("-C", "--actor"):
            args = args[1:]
        elif not arg.startswith("-"):
            return arg
    return None


def _started_as_a_command() -> bool:
    """Whether this process was started to run hive (the console script, ``python -m
    hive``, ``-m hive.cli.main``, ``-m hive.cli.merge_driver``, the pre-commit hook's
    ``-c``), not a program importing it: only then is Ctrl-C taken over this early."""
    import sys

    args = list(getattr(sys, "orig_argv", [])[1:])
    while args:
        arg = args.pop(0)
        if arg in ("-m", "-c") and args:
            target = args[0]
            if arg == "-c":
                return "hive.cli.entry" in target
            return target in ("hive", "hive.cli.main", "hive.cli.merge_driver")
        if arg in ("-X", "-W", "--check-hash-based-pycs"):
            args = args[1:]  # an option's value
        elif not arg.startswith("-"):  # the script
            name = arg.replace("\\", "/").rsplit("/", 1)[-1]
            return name in ("hive", "hive.exe", "hive-script.py")
    return False


def _interrupt_again(unraisable: object) -> None:
    """``sys.unraisablehook`` of a hive command: a Ctrl-C whose KeyboardInterrupt was
    raised where Python cannot let it through (a weakref callback, such as the one that
    drops an import's module lock, or a ``__del__``) is delivered again a moment later
    instead of being reported as "Exception ignored ... KeyboardInterrupt" and lost
    (the command then ran on to its end, exit 0, after the user's Ctrl-C). It is
    recorded too (:data:`_SWALLOWED`): a command that ends before it is delivered again
    (or once Ctrl-C is ignored, its answer written) still ends in 130."""
    import sys

    if issubclass(getattr(unraisable, "exc_type", type(None)), KeyboardInterrupt):
        import _thread

        global _SWALLOWED
        _SWALLOWED = True

        # from another thread a moment later: raised in this hook, it would be lost too
        _thread.start_new_thread(_interrupt_main_soon, ())
        return
    sys.__unraisablehook__(unraisable)  # type: ignore[arg-type]


def _interrupt_main_soon() -> None:
    """Ctrl-C again for the main thread, once it is out of the unraisable hook: the
    handler of SIGINT in force then runs (nothing, once Python is shutting down)."""
    import _thread
    import time

    time.sleep(0.001)
    _thread.interrupt_main()


def _interrupted_before_the_handler() -> None:
    """A Ctrl-C raised before :func:`_interrupted_at_start` was in place (while the
    command line is looked at: under load a window of milliseconds): in a hive command,
    answered as that handler answers it (``_STOPPED_AT_START`` may not be set yet); in a
    program importing hive, the KeyboardInterrupt it is."""
    global _STOPPED_AT_START
    if not _started_as_a_command():
        raise  # the KeyboardInterrupt being handled (at module level, below)
    _STOPPED_AT_START = _command_word() in ("mcp", "serve")
    _interrupted_at_start(2, None)


def _take_interrupts_over() -> None:
    """Ctrl-C (a server's SIGTERM too) answered by :func:`_interrupted_at_start`, in a
    process started as a hive command only."""
    if not _started_as_a_command():
        return
    import _signal  # type: ignore[import-not-found]  # builtin (signal imports enum)
    import sys

    if sys.unraisablehook is sys.__unraisablehook__:
        sys.unraisablehook = _interrupt_again

    global _STOPPED_AT_START
    _STOPPED_AT_START = _command_word() in ("mcp", "serve")  # hive.cli.STOPPED_BY_CTRL_C
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted_at_start)
    if _STOPPED_AT_START and _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
        # a server stops on SIGTERM (``kill``, a service manager) as on Ctrl-C, from its
        # first line on: its own handler (serve_cmd, mcp_server) takes over once ready
        _signal.signal(_signal.SIGTERM, _interrupted_at_start)


# Everything above only defines (no call: Python looks for a pending Ctrl-C only at a
# call, a loop's jump and a function's start), so from here on a Ctrl-C is answered;
# before, only at this module's first instruction, in a KeyboardInterrupt of Python's.
try:
    _take_interrupts_over()
except KeyboardInterrupt:
    _interrupted_before_the_handler()
