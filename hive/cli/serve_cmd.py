"""``hive serve``: the local web board (see hive/serve/)."""

from __future__ import annotations

import json
import signal
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from hive.cli import HeldInterrupts, output
from hive.cli.common import OPTIONS, run_op
from hive.errors import InvalidInput

if TYPE_CHECKING:
    from uvicorn import Server

DEFAULT_PORT = 8700


def serve_cmd(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0: any free port).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    allow_write: Annotated[
        bool,
        typer.Option(
            "--allow-write",
            help="Allow claim, close, note and the release of stale reservations from the page"
            " (each a hive commit as you: HIVE_AGENT_TOKEN's agent, else git user.name).",
        ),
    ] = False,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a --host that is not loopback (other machines can then connect).",
        ),
    ] = False,
) -> None:
    """Serve a live web board of this hive (read-only unless --allow-write)."""
    previous = signal.signal(signal.SIGTERM, _as_ctrl_c)
    try:
        _serve(port, host, allow_write=allow_write, allow_remote=allow_remote)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _serve(port: int, host: str, *, allow_write: bool, allow_remote: bool) -> None:
    # Until the server's own handlers are set (``_stopper``), Ctrl-C and SIGTERM are
    # held: the web app's imports (starlette, uvicorn) and those the app makes as it is
    # made and bound (its static files' readers, the address's codec, the lean reader)
    # would take a KeyboardInterrupt inside an import, a traceback or importlib's
    # "cannot release un-acquired lock" (exit 70; see HeldInterrupts). A signal here
    # ends the server at once (``server``): it has served nothing yet.
    with HeldInterrupts(terminate=True, server=True):
        server, listener = _started(port, host, allow_write=allow_write, allow_remote=allow_remote)
    numbers = (signal.SIGINT, signal.SIGTERM)
    previous = [signal.signal(number, _stopper(server)) for number in numbers]
    try:
        server.run(sockets=[listener])
    finally:
        for number, handler in zip(numbers, previous, strict=True):
            signal.signal(number, handler)
        listener.close()


def _started(
    port: int, host: str, *, allow_write: bool, allow_remote: bool
) -> tuple[Server, socket.socket]:
    """The server made and its socket bound, its address said (not yet serving)."""
    from hive.serve.app import LOOPBACK_NAMES, ServeConfig, create_app, is_loopback
    from hive.serve.runner import server_for

    host = host.strip()
    if not host.strip("[]"):
        _refuse("--host needs an address (for example 127.0.0.1)")
    loopback = is_loopback(host)
    if not loopback and not allow_remote:
        _refuse(
            f"refusing to listen on {host}: not a loopback address, so other machines"
            " could read this hive; pass --allow-remote to do it anyway"
        )
    config = ServeConfig(
        root=OPTIONS.directory,
        actor=OPTIONS.actor,
        allow_write=allow_write,
        allowed_hosts=(*LOOPBACK_NAMES, host.strip("[]").lower()) if loopback else None,
    )
    app = run_op(lambda: create_app(config))
    listener = _listen(host, port)
    bound = listener.getsockname()[1]
    if not loopback:
        output.err(
            f"warning: hive serve is listening on {host}:{bound}, which other machines can"
            " reach: anyone who can connect can read this hive"
            + (" and act in it (--allow-write)" if allow_write else "")
        )
    mode = f"read-write as {app.state.hub.actor}" if allow_write else "read-only"
    bare = host.strip("[]")
    shown = f"[{bare}]" if ":" in bare else host  # an IPv6 address, bracketed once
    url = f"http://{shown}:{bound}/"
    if OPTIONS.json:  # one line, for a script to read the address from
        actor = app.state.hub.actor if allow_write else None
        started = {"url": url, "host": host, "port": bound, "write": allow_write, "actor": actor}
        sys.stdout.write(json.dumps(started) + "\n")
    else:
        output.say(f"hive serve: {url} ({mode}); Ctrl-C stops it")
    sys.stdout.flush()
    return server_for(app), listener


def _stopper(server: Server) -> Callable[[int, object], None]:
    """Ctrl-C and SIGTERM while the server runs: asked to stop (a second one: at once), as
    uvicorn's own handler does once it serves. Never a KeyboardInterrupt inside the event
    loop: one that came before uvicorn took the signals over (setting the loop up, the
    lifespan starting) or when it raises them again on its way out ended the loop with
    its tasks pending ('Task was destroyed but it is pending!' on stderr)."""

    def stop(signum: int, frame: object) -> None:
        if server.should_exit and signum == signal.SIGINT:
            server.force_exit = True
        server.should_exit = True

    return stop


def _as_ctrl_c(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a service manager) stops the server as Ctrl-C does: uvicorn
    shuts down gracefully (the event streams ended, the lifespan's end) and raises the
    signal again once done, which by default killed the process (exit 143); here it is
    Ctrl-C's KeyboardInterrupt, a clean stop (exit 0)."""
    raise KeyboardInterrupt


def _listen(host: str, port: int) -> socket.socket:
    from hive.serve.runner import listen

    try:
        return listen(host, port)
    except OSError as exc:
        _refuse(f"cannot listen on {host}:{port}: {exc.strerror or exc}{_listen_hint(exc)}")


def _listen_hint(exc: OSError) -> str:
    """The next step after a refused listen: another port for a port in use or one
    the user may not open, another address for one this machine does not have."""
    import errno

    if exc.errno in (errno.EADDRINUSE, errno.EACCES):
        return " (choose another with --port N, or --port 0 for a free one)"
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return " (give --host an address of this machine, e.g. 127.0.0.1)"
    return ""


def _refuse(message: str) -> NoReturn:
    """Stop with ``message`` (exit 2; with --json also as {"error", "code"} on stdout)."""

    def refuse() -> NoReturn:
        raise InvalidInput(message)

    run_op(refuse)
    raise AssertionError("unreachable")  # run_op exits on the error
