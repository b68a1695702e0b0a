"""Running the app under uvicorn: in the foreground (``hive serve``) or in a
background thread (tests, the screenshot script, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Coroutine
from typing import Any

# uvicorn.loops.asyncio: Server.run's event loop, imported here (with the imports
# ``hive serve`` holds Ctrl-C and SIGTERM over), not as it starts (see server_for)
import uvicorn
import uvicorn.loops.asyncio

from hive.serve.app import ServeConfig, create_app


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port); OSError if taken."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM
    )[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError:
        listener.close()
        raise
    return listener


class _Server(uvicorn.Server):
    """Ends the open event streams first, so shutting down does not wait for them."""

    _main: Coroutine[Any, Any, None] | None = None

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's ``run``, and its coroutine closed after: a Ctrl-C or SIGTERM after
        ``run`` made it and before the event loop ran it (uvicorn sets the loop up in
        between) left it never awaited, a RuntimeWarning on stderr."""
        try:
            super().run(sockets=sockets)
        finally:
            if self._main is not None:
                self._main.close()  # nothing when it ran

    def serve(self, sockets: list[socket.socket] | None = None) -> Coroutine[Any, Any, None]:
        """uvicorn's ``serve`` coroutine, kept for :meth:`run` to close."""
        self._main = super().serve(sockets=sockets)
        return self._main

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        state = getattr(self.config.app, "state", None)
        watcher = getattr(state, "watcher", None)
        if watcher is not None:
            watcher.end_streams()
        await super().shutdown(sockets)


def server_for(app: Any) -> uvicorn.Server:
    # loop="asyncio", not "auto" (uvloop when installed, which hive does not need): "auto"
    # looks for uvloop on every start, after Server.run has made its coroutine and before
    # uvicorn handles signals; a Ctrl-C or SIGTERM there left that coroutine never awaited
    # (a RuntimeWarning on stderr)
    config = uvicorn.Config(
        app, loop="asyncio", log_level="warning", timeout_graceful_shutdown=3, lifespan="on"
    )
    return _Server(config)


class BackgroundServer:
    """``create_app(config)`` served on loopback in a daemon thread."""

    def __init__(self, config: ServeConfig, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = create_app(config)
        self.listener = listen(host, port)
        self.url = f"http://{host}:{self.listener.getsockname()[1]}"
        self.server = server_for(self.app)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.listener]}, daemon=True
        )

    def __enter__(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("hive serve did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.listener.close()
