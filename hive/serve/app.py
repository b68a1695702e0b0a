"""The web app of ``hive serve``: Starlette routes over the domain's view functions.

Every page is rendered on the server (Jinja2, templates and assets inside the
package); a page asks ``/events`` (server-sent events) for the state token,
and when it changes fetches itself again as a fragment and swaps its main
area in place, so a commit from any process shows up within about a second.
Domain calls run one at a time in a worker thread (a Workspace's caches are
not shared between threads). Actions need ``--allow-write`` and the server's
token (``X-Hive-Token`` header or ``token`` field); each is one hive commit
made as the acting person.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.responses import JSONResponse as StarletteJSON
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hive.domain import views
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput, NotFound, PermissionDenied
from hive.jsontext import inert_bytes
from hive.models import CELL_TYPES, STATUSES
from hive.serve import svg
from hive.serve.watch import Watcher
from hive.text import as_lines, shown_lines

T = TypeVar("T")
KEEPALIVE_SECONDS = 15.0
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
MAX_BODY = 64 * 1024
NOTE_OVERRIDE = "a note added from the board (hive serve)"

STATUS_OF_CODE = {
    "not_found": 404,
    "invalid_input": 400,
    "path_outside_repository": 400,
    "ambiguous_id": 400,
    "permission_denied": 403,
    "lock_timeout": 503,
    "not_initialized": 409,
    "corrupt_file": 409,  # the hive's data, not the server, is what went wrong
    "not_a_git_repository": 409,  # the directory served stopped being a repository
}
STATUS_OF_EXIT = {2: 400, 3: 404, 4: 409, 5: 403, 6: 503, 7: 409, 9: 409}


@dataclass
class ServeConfig:
    """How the server was started."""

    root: str = "."
    actor: str | None = None  # the name claimed (--actor): proven as every command proves it
    allow_write: bool = False
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_NAMES  # None: any Host header
    poll_seconds: float = 0.25
    clock_seconds: float = 30.0  # open pages re-render this often: expiries, "5m ago"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Hub:
    """The workspace and the lock that serializes every domain call on it."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        # Who acts: the agent of HIVE_AGENT_TOKEN, else the person of the git identity;
        # a name claimed (--actor, HIVE_AGENT) must be theirs (not_your_identity).
        # Always committing (HIVE_AUTOCOMMIT=0 does not apply): each action is a normal
        # hive commit, and the board shows what is committed, whoever committed it.
        self.ws = Workspace(
            config.root,
            claim=config.actor,
            session=f"serve:{secrets.token_hex(4)}",
            autocommit=True,
        )
        self.actor = self.ws.actor
        # a person's forced close needs no reason; an agent's (a coordinator's) does
        self.override_needs_reason = self.ws.principal.kind == "agent"
        self._lock = threading.Lock()
        # Part of every version this server announces: a page left open while the
        # server restarts hears a new version, refreshes, and gets the new token.
        self.instance = secrets.token_hex(4)

    async def call(self, operation: Callable[[Workspace], T]) -> T:
        def locked() -> T:
            with self._lock:
                return operation(self.ws)

        return await asyncio.to_thread(locked)

    def token_now(self) -> str:
        return self.version(self.ws)

    def version(self, ws: Workspace) -> str:
        """The state token of the views, and which server made the page."""
        return f"{views.state_token(ws)}.{self.instance}"


# ------------------------------------------------------------------ rendering


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("hive.serve", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.filters["exact"] = _Exact
    env.filters["ago"] = _ago
    env.filters["stamp"] = _stamp
    env.filters["duration"] = svg._duration
    env.globals.update(
        STATUSES=STATUSES,
        CELL_TYPES=CELL_TYPES,
        graph=svg.dependency_graph,
        chart=svg.outcome_chart,
        legend=svg.legend,
        diff_lines=_diff_lines,
        diff_cut=_diff_cut,
        DIFF_LINES=DIFF_LINES,
        made_by=_made_by,
    )
    return env


class _Exact(str):
    """A value a page carries but does not show (``|exact``: a form field's value, a
    key the page's script sends back), left as it is by :func:`_shown`."""


def _shown(value: object) -> object:
    """Every value a page puts in (Jinja's ``finalize``, before HTML escaping): text as
    a terminal is given it (``hive.text.shown_lines``), so a right-to-left override or
    a zero-width character in a title is shown as ``<U+202E>`` and reorders or hides nothing
    (HTML escaping leaves them; CSS isolation keeps them from reordering only what is
    around the value); each line break (U+2028, NEL, a lone CR, ...) as a line feed,
    as ``hive show`` lays it out (``hive.text.as_lines``)."""
    if isinstance(value, str) and not isinstance(value, _Exact):
        shown = shown_lines(as_lines(value))
        if shown is not value:
            return Markup(shown) if isinstance(value, Markup) else shown
    return value


def _as_datetime(value: datetime | int | float | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    return value


def _ago(value: datetime | int | float | None) -> str:
    moment = _as_datetime(value)
    if moment is None:
        return ""
    seconds = (datetime.now(UTC) - moment).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            text = f"{seconds // size:.0f}{unit}"
            break
    else:
        text = f"{seconds:.0f}s"
    return f"in {text}" if future else f"{text} ago"


def _stamp(value: datetime | int | float | None) -> str:
    moment = _as_datetime(value)
    return "" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


DIFF_LINES = 4000  # a commit's diff on a page stops here (the page says so, and how to see it all)


def _made_by(commit: Any) -> str:
    """Who made a reviewed commit, in ``hive review``'s words."""
    from hive.domain.swarm.review import made_by

    return made_by(commit)


def _diff_cut(patch: str, limit: int = DIFF_LINES) -> int:
    """How many lines of ``patch`` a page leaves out (0: it shows all of it)."""
    return max(0, len(patch.splitlines()) - limit)


def _diff_lines(patch: str, limit: int = DIFF_LINES) -> list[tuple[str, str]]:
    """(css class, text) per line of a unified diff, cut after ``limit`` lines."""
    lines = patch.splitlines()
    shown = []
    for line in lines[:limit]:
        if line.startswith(("diff --git", "index ", "--- ", "+++ ")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        shown.append((kind, line))
    if len(lines) > limit:
        shown.append(("meta", f"… {len(lines) - limit} more lines not shown (see above the diff)"))
    return shown


class Pages:
    """Renders views as whole pages, or as the fragment a live page swaps in."""

    def __init__(self, hub: Hub, watcher: Watcher) -> None:
        self.hub = hub
        self.watcher = watcher
        self.env = _environment()

    async def render(
        self,
        request: Request,
        template: str,
        build: Callable[[Workspace], Mapping[str, Any]],
        *,
        section: str,
        canonical: Callable[[Mapping[str, Any]], str] | None = None,
    ) -> Response:
        """``template`` over ``build``'s data; ``canonical`` names the page's own path
        for that data (a cell asked for by a partial id), where a request for another
        path is sent, so the page open in a browser stays right as the hive grows."""

        def read(ws: Workspace) -> tuple[str, Mapping[str, Any]]:
            version = self.hub.version(ws)  # before reading: a change meanwhile re-renders
            return version, build(ws)

        try:
            version, data = await self.hub.call(read)
        except HiveError as exc:
            return self.error(request, exc, section=section)
        if canonical is not None:
            path = canonical(data)
            if path != request.url.path:
                query = f"?{request.url.query}" if request.url.query else ""
                return RedirectResponse(quote(path) + query, status_code=302)
        return self._html(request, template, {**data}, version=version, section=section)

    def error(
        self,
        request: Request,
        exc: HiveError,
        *,
        section: str,
        heading: str = "Not shown",
        back: str | None = None,
    ) -> Response:
        status = _http_status(exc)
        data = {"error": exc, "heading": heading, "back": back}
        return self._html(request, "error.html", data, version="", section=section, status=status)

    def _html(
        self,
        request: Request,
        template: str,
        data: dict[str, Any],
        *,
        version: str,
        section: str,
        status: int = 200,
    ) -> Response:
        fragment = request.headers.get("x-hive-fragment") == "1"
        config = self.hub.config
        context = {
            **data,
            "fragment": fragment,
            "version": version,
            "section": section,
            "actor": self.hub.actor,
            "override_needs_reason": self.hub.override_needs_reason,
            "allow_write": config.allow_write,
            "token": config.token if config.allow_write else "",
            "query": _query_helper(request),
            "path": request.url.path,
            "clock_seconds": config.clock_seconds,
        }
        body = self.env.get_template(template).render(context)
        headers = {"X-Hive-Version": version, "Cache-Control": "no-store"}
        return HTMLResponse(body, status_code=status, headers=headers)


def _query_helper(request: Request) -> Callable[..., str]:
    """``query(page=2)``: this page's query string with some parameters changed."""

    def query(**changes: Any) -> str:
        params = dict(request.query_params)
        for key, value in changes.items():
            if value in (None, ""):
                params.pop(key, None)
            else:
                params[key] = str(value)
        return "?" + urlencode(params) if params else "?"

    return query


def _http_status(exc: HiveError) -> int:
    """The HTTP status of ``exc``: by its code, else by its family (exit code): a
    refusal (not_owner, not_your_identity, ...) is 403, a conflict 409."""
    if exc.code in STATUS_OF_CODE:
        return STATUS_OF_CODE[exc.code]
    return STATUS_OF_EXIT.get(exc.exit_code, 500)


# ------------------------------------------------------------------ the app


def _int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return default
    return _whole_number(name, raw)


def _whole_number(name: str, raw: str) -> int:
    """``raw`` as a whole number written in ASCII digits ('²' is a digit to
    str.isdigit, not to int)."""
    if not (raw.isascii() and raw.isdigit()):
        raise InvalidInput(f"{name} must be a whole number without a sign, got {raw!r}")
    return int(raw)


def _board_args(request: Request) -> dict[str, Any]:
    params = request.query_params
    return {
        "status": params.get("status") or None,
        "type": params.get("type") or None,
        "priority": params.get("priority") or None,
        "assignee": params.get("assignee") or None,
        "label": params.get("label") or None,
        "text": params.get("q") or None,
        "page": _int_param(request, "page", 1),
        "per_page": _int_param(request, "per_page", 50),
    }


class JSONResponse(StarletteJSON):
    """The JSON API's answers, made inert (``jsontext.inert``: DEL and the C1 control
    characters as ``\\u`` escapes, the same JSON value) as every JSON hive writes is: a
    value written by hand reaches a terminal (``curl``) as no command."""

    def render(self, content: Any) -> bytes:
        return inert_bytes(super().render(content))


def _json(value: Any, status: int = 200) -> JSONResponse:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    elif isinstance(value, list):
        value = [
            item.model_dump(mode="json", by_alias=True) if isinstance(item, BaseModel) else item
            for item in value
        ]
    return JSONResponse(value, status_code=status, headers={"Cache-Control": "no-store"})


def _error_json(exc: HiveError) -> JSONResponse:
    return JSONResponse(exc.to_dict(), status_code=_http_status(exc))


def create_app(config: ServeConfig) -> Starlette:
    """The ASGI app for ``config`` (its workspace is opened here)."""
    hub = Hub(config)
    hub.ws.config()  # NotInitialized now, not on the first request
    watcher = Watcher(hub.token_now, interval=config.poll_seconds)
    pages = Pages(hub, watcher)
    endpoints = Endpoints(hub, pages, watcher)
    app = Starlette(
        routes=_routes(endpoints, Actions(hub, pages)),
        lifespan=_lifespan(hub, watcher),
        exception_handlers={404: endpoints.no_route, 405: endpoints.no_route},
    )
    app.state.hub = hub
    app.state.watcher = watcher
    guarded: Any = HostGuard(app, config.allowed_hosts)
    return guarded  # type: ignore[no-any-return]


def _routes(endpoints: Endpoints, actions: Actions) -> list[BaseRoute]:
    static = resources.files("hive.serve") / "static"
    return [
        Route("/", endpoints.board_page),
        Route("/epics", endpoints.epics_page),
        Route("/epics/{epic_id}", endpoints.epic_page),
        Route("/cells/{cell_id}", endpoints.cell_page),
        Route("/reservations", endpoints.reservations_page),
        Route("/mail", endpoints.mail_page),
        Route("/outcomes", endpoints.outcomes_page),
        Route("/events", endpoints.events),
        Route("/api/version", endpoints.version),
        Route("/api/actions/{action}", actions.post, methods=["POST"]),
        Route("/api/{view}", endpoints.api),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
    ]


def _lifespan(
    hub: Hub, watcher: Watcher
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """Warm the workspace and watch for changes while the app runs."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.call(_warm)
        await watcher.start()
        try:
            yield
        finally:
            await watcher.stop()

    return lifespan


class Endpoints:
    """The pages, the JSON views and the event stream (the actions are :class:`Actions`)."""

    def __init__(self, hub: Hub, pages: Pages, watcher: Watcher) -> None:
        self.hub = hub
        self.pages = pages
        self.watcher = watcher

    async def board_page(self, request: Request) -> Response:
        try:
            args = _board_args(request)
        except HiveError as exc:
            return self.pages.error(request, exc, section="board")
        return await self.pages.render(
            request,
            "board.html",
            lambda ws: {"board": views.board(ws, **args)},
            section="board",
        )

    async def epics_page(self, request: Request) -> Response:
        return await self.pages.render(
            request, "epics.html", lambda ws: {"epics": views.list_epics(ws)}, section="epics"
        )

    async def epic_page(self, request: Request) -> Response:
        epic_id = request.path_params["epic_id"]
        return await self.pages.render(
            request,
            "epic.html",
            lambda ws: {"view": views.epic_view(ws, epic_id=epic_id)},
            section="epics",
            canonical=lambda data: f"/epics/{data['view'].status.epic.id}",
        )

    async def cell_page(self, request: Request) -> Response:
        cell_id = request.path_params["cell_id"]
        return await self.pages.render(
            request,
            "cell.html",
            lambda ws: {"view": views.cell_view(ws, cell_id=cell_id)},
            section="board",
            canonical=lambda data: f"/cells/{data['view'].cell.id}",
        )

    async def reservations_page(self, request: Request) -> Response:
        return await self.pages.render(
            request,
            "reservations.html",
            lambda ws: {"view": views.reservations_view(ws)},
            section="reservations",
        )

    async def mail_page(self, request: Request) -> Response:
        key = request.query_params.get("thread") or None
        return await self.pages.render(
            request, "mail.html", lambda ws: _mail_data(ws, key), section="mail"
        )

    async def outcomes_page(self, request: Request) -> Response:
        bucket = request.query_params.get("bucket") or None
        return await self.pages.render(
            request,
            "outcomes.html",
            lambda ws: {"stats": views.outcome_stats(ws, bucket=bucket)},
            section="outcomes",
        )

    async def api(self, request: Request) -> Response:
        name = request.path_params["view"]
        try:
            build = _api_view(name, request)
            if build is None:
                raise NotFound(f"no view {name!r}")
            return _json(await self.hub.call(build))
        except HiveError as exc:
            return _error_json(exc)

    async def version(self, request: Request) -> Response:
        try:
            return JSONResponse({"version": await asyncio.to_thread(self.hub.token_now)})
        except HiveError as exc:  # the repository went away under the server
            return _error_json(exc)

    async def events(self, request: Request) -> Response:
        return StreamingResponse(
            _event_stream(request, self.watcher),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def no_route(self, request: Request, exc: Exception) -> Response:
        """A path or method no route serves: the error page (JSON under /api/)."""
        path = request.url.path
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        error = _no_route_error(request, status)
        headers = exc.headers if isinstance(exc, HTTPException) else None  # 405: Allow
        if path.startswith("/api/"):
            return JSONResponse(error.to_dict(), status_code=status, headers=headers)
        if path.startswith("/static/"):
            return Response(error.message, status, headers, media_type="text/plain")
        response = self.pages.error(request, error, section="")
        response.status_code = status
        response.headers.update(headers or {})
        return response


def _no_route_error(request: Request, status: int) -> HiveError:
    """What a request no route serves is told: a method not allowed (405), else no page."""
    if status == 405:
        return InvalidInput(f"{request.method} is not allowed on {request.url.path}")
    return NotFound(f"no page {request.url.path}: the board is at /")


def _mail_data(ws: Workspace, key: str | None) -> dict[str, Any]:
    """The mail page's threads, the thread chosen (``key``, else the first) and its cell."""
    from hive.domain.mail import list_threads, thread_view

    threads = list_threads(ws, limit=500)
    chosen = key or (threads[0].key if threads else None)
    shown = thread_view(ws, key=chosen) if chosen else None
    linked = _cell_named(ws, shown.thread_id) if shown and shown.thread_id else None
    return {"threads": threads, "thread": shown, "chosen": chosen, "cell": linked}


def _cell_named(ws: Workspace, name: str) -> str | None:
    """``name`` when it is a cell's id (a mail thread about that cell), else None."""
    from hive.domain.cells import show_cell

    try:
        return name if show_cell(ws, cell_id=name).id == name else None
    except HiveError:
        return None


def _warm(ws: Workspace) -> None:
    """Read the cells once before the first request (a 10,000-cell hive takes a moment)."""
    with contextlib.suppress(HiveError):
        views.board(ws, per_page=1)


def _api_view(name: str, request: Request) -> Callable[[Workspace], Any] | None:
    from hive.domain.mail import list_threads, thread_view

    params = request.query_params
    if name == "board":
        args = _board_args(request)
        return lambda ws: views.board(ws, **args)
    if name == "epics":
        return views.list_epics
    if name == "epic":
        return lambda ws: views.epic_view(ws, epic_id=params.get("id", ""))
    if name == "cell":
        return lambda ws: views.cell_view(ws, cell_id=params.get("id", ""))
    if name == "reservations":
        return views.reservations_view
    if name == "mail":
        key = params.get("thread")
        return lambda ws: thread_view(ws, key=key) if key else list_threads(ws)
    if name == "outcomes":
        return lambda ws: views.outcome_stats(ws, bucket=params.get("bucket") or None)
    return None


async def _event_stream(request: Request, watcher: Watcher) -> AsyncIterator[str]:
    queue = watcher.subscribe()
    try:
        yield f"retry: 1000\nevent: version\ndata: {watcher.token}\n\n"
        while True:
            try:
                token = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                if await request.is_disconnected():
                    return
                yield ": keepalive\n\n"
                continue
            if token is None:
                return
            yield f"event: version\ndata: {token}\n\n"
    finally:
        watcher.unsubscribe(queue)


# ------------------------------------------------------------------ actions


class Actions:
    """POST /api/actions/{claim,close,note,release}: one hive commit each."""

    def __init__(self, hub: Hub, pages: Pages) -> None:
        self.hub = hub
        self.pages = pages

    async def post(self, request: Request) -> Response:
        config = self.hub.config
        wants_html = "text/html" in request.headers.get("accept", "")
        try:
            fields = await _fields(request)
            _check_request(request, config, fields)
            operation = _action(request.path_params["action"], fields)
            result = await self.hub.call(operation)
        except HiveError as exc:
            if wants_html:  # a plain form post: the error page, with the way back
                back = _same_origin_referer(request)
                return self.pages.error(request, exc, section="", heading="Not done", back=back)
            return _error_json(exc)
        if wants_html:  # a plain form post (no script): back to the page it came from
            return RedirectResponse(_same_origin_referer(request) or "/", status_code=303)
        head = await asyncio.to_thread(lambda: self.hub.ws.git.head().commit)
        payload = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        return JSONResponse(
            {"ok": True, "commit": head, "actor": self.hub.actor, "result": payload}
        )


async def _fields(request: Request) -> dict[str, str]:
    body = await _bounded_body(request)
    if request.headers.get("content-type", "").startswith("application/json"):
        import json

        try:
            decoded = json.loads(body or b"{}")
        except ValueError:
            raise InvalidInput("request body is not valid JSON") from None
        if not isinstance(decoded, dict):
            raise InvalidInput("request body must be a JSON object")
        return {str(k): _field_text(str(k), v) for k, v in decoded.items() if v is not None}

    async def replay() -> Message:  # the form parser reads the body read above
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        form = await Request(request.scope, replay).form()
    except HTTPException as exc:  # a malformed multipart body
        raise InvalidInput(f"request body is not a valid form: {exc.detail}") from None
    return {key: _field_text(key, value) for key, value in form.items()}


async def _bounded_body(request: Request) -> bytes:
    """The body, refused as soon as it is known to be over MAX_BODY (its declared
    length, or what has arrived): not read whole into memory first."""
    too_large = InvalidInput(f"request body is too large (over {MAX_BODY} bytes)")
    declared = request.headers.get("content-length", "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _field_text(name: str, value: object) -> str:
    """A field's text: a string, or a number (a JSON reservation_id); anything else (a
    JSON object or list, an uploaded file) is refused, not stored as its repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidInput(f"field {name!r} must be text, got {type(value).__name__}")


def _check_request(request: Request, config: ServeConfig, fields: Mapping[str, str]) -> None:
    """Read-only servers refuse every action; the others need the token and no
    sign of a cross-site request."""
    if not config.allow_write:
        raise PermissionDenied("this hive serve is read-only; restart it with --allow-write")
    given = request.headers.get("x-hive-token") or fields.get("token", "")
    if not given or not hmac.compare_digest(given.encode(), config.token.encode()):
        raise PermissionDenied("missing or wrong token: reload the page and try again")
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise PermissionDenied("cross-site requests are refused")
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise PermissionDenied(f"requests from {origin} are refused")


def _same_origin_referer(request: Request) -> str | None:
    referer = request.headers.get("referer")
    if not referer:
        return None
    parts = urlsplit(referer)
    if parts.netloc != request.headers.get("host"):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _required(fields: Mapping[str, str], name: str) -> str:
    value = fields.get(name, "").strip()
    if not value:
        raise InvalidInput(f"missing {name}")
    return value


def _action(name: str, fields: Mapping[str, str]) -> Callable[[Workspace], Any]:
    from hive.domain.cells import close_cell, start_cell, update_cell
    from hive.domain.reservations import release_for_holder

    if name == "claim":
        cell_id = _required(fields, "cell_id")
        return lambda ws: start_cell(ws, cell_id=cell_id)
    if name == "close":
        cell_id = _required(fields, "cell_id")
        reason = fields.get("reason", "").strip() or None
        # as 'hive close --force [--reason WHY]': past open blockers, or a cell someone
        # else has claimed (the override recorded): a person's force alone is recorded
        # as "(no reason given)", a coordinator agent's needs a reason (the domain says)
        force = fields.get("force", "").strip().lower() in ("1", "on", "true", "yes")
        return lambda ws: close_cell(ws, cell_id=cell_id, reason=reason, force=force)
    if name == "note":
        cell_id = _required(fields, "cell_id")
        text = _required(fields, "text")
        # A person (or coordinator) watching the swarm may add a note to a cell an agent
        # has claimed: recorded as their override, as 'hive update --force' records it.
        return lambda ws: update_cell(
            ws, cell_id=cell_id, append_notes=text, force=True, reason=NOTE_OVERRIDE
        )
    if name == "release":
        number = _whole_number("reservation_id", _required(fields, "reservation_id").lstrip("#"))
        holder = fields.get("agent", "").strip() or None  # ids of two clones may repeat
        return lambda ws: release_for_holder(
            ws, reservation_id=number, agent=holder, as_coordinator=True, only_stale=True
        )
    raise InvalidInput(f"unknown action {name!r}: use claim, close, note or release")


# ------------------------------------------------------------------ host guard


class HostGuard:
    """Refuse requests whose Host header names another site (DNS rebinding)."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...] | None) -> None:
        self.app = app
        self.allowed = None if allowed is None else {h.lower() for h in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.allowed is not None:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if _host_name(host) not in self.allowed:
                response = JSONResponse(
                    {"error": f"unknown host {host!r}", "code": "permission_denied"}, 403
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    @property
    def state(self) -> Any:
        return getattr(self.app, "state", None)


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
