"""A worker for tests/test_swarm_run.py's forked-start test: reports what it has of
its own (``main(args)``, as ``hive/domain/swarm/forked.py`` calls an agent)."""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
import threading
import time


def main(args: list[str]) -> int | str:
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            fds[name] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
    seen = {
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
        "cwd": os.getcwd(),
        "cell": os.environ.get("HIVE_CELL"),
        "argv": sys.argv[1:],
        "fds": fds,
        "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
        "sighup": str(signal.getsignal(signal.SIGHUP)),
        "pwd": os.environ.get("PWD"),
    }
    with open(args[0] + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(seen, handle)
    os.replace(args[0] + ".tmp", args[0])  # whole, for a test that polls it
    print("probe ran", flush=True)
    if "--stderr-hang" in args:
        print("a line on stderr", file=sys.stderr)  # no flush: a new interpreter's is by line
        time.sleep(600)  # until the test signals it (a loaded machine may be slow to)
    if "--hang" in args:
        time.sleep(600)  # until the test signals it (a loaded machine may be slow to)
    if "--thread" in args:
        atexit.register(print, "exit handler ran")
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread finished"))).start()
    if "--interrupt" in args:
        raise KeyboardInterrupt
    if "--text" in args:
        return "a text as exit status"
    return 7
