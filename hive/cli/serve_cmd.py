"""``hive serve``: the local web board (see hive/serve/)."""

from __future__ import annotations

import socket
import sys
from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import OPTIONS, run_op

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
            help="Allow claim, close, note and coordinator release from the page"
            " (each a hive commit as --actor / git user.name).",
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
    from hive.serve.app import LOOPBACK_NAMES, ServeConfig, create_app, is_loopback

    loopback = is_loopback(host)
    if not loopback and not allow_remote:
        output.err(
            f"error: refusing to listen on {host}: not a loopback address, so other machines"
            " could read this hive; pass --allow-remote to do it anyway"
        )
        raise typer.Exit(2)
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
    shown = f"[{host}]" if ":" in host else host
    output.say(f"hive serve: http://{shown}:{bound}/ ({mode}); Ctrl-C stops it")
    sys.stdout.flush()
    from hive.serve.runner import server_for

    server_for(app).run(sockets=[listener])


def _listen(host: str, port: int) -> socket.socket:
    from hive.serve.runner import listen

    try:
        return listen(host, port)
    except OSError as exc:
        output.err(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}")
        raise typer.Exit(2) from None
