"""A worker for tests/test_swarm_run.py's forked-start test: reports what it has of
its own (``main(args)``, as ``hive/domain/swarm/forked.py`` calls an agent)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main(args: list[str]) -> int:
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
    }
    with open(args[0] + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(seen, handle)
    os.replace(args[0] + ".tmp", args[0])  # whole, for a test that polls it
    print("probe ran", flush=True)
    if "--hang" in args:
        time.sleep(60)
    return 7
