"""hive serve without a browser: the view functions, the coordinator release, the
change probe, and the HTTP surface of a real server (uvicorn on loopback)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from hive.domain import views
from hive.domain.cells import create_cell, list_cells
from hive.domain.mail import inbox, list_threads, send_message, thread_view
from hive.domain.reservations import list_reservations, release_for_holder
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotFound, PermissionDenied
from hive.models.views import OutcomePoint, OutcomeStats, StrategySeries
from tests.conftest import agent_env, ctrl_c_as_at_a_terminal, git, make_repo, set_coordinators
from tests.hivefork import hive_command
from tests.inprocess import run_hive
from tests.serve_sample import Sample, serving

if TYPE_CHECKING:
    from hive.serve.runner import BackgroundServer


@pytest.fixture
def ws(sample: Sample) -> Workspace:
    return Workspace(str(sample.root), actor="Test User")


def request(
    url: str,
    *,
    data: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    form: bool = False,
) -> tuple[int, Any, str]:
    """(status, headers (case-insensitive), body) of a GET, or a POST when ``data`` is given."""
    body = None
    sent = dict(headers or {})
    if data is not None:
        if form:
            from urllib.parse import urlencode

            body = urlencode(data).encode()
            sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
        else:
            body = json.dumps(data).encode()
            sent.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=body, headers=sent, method="POST" if body else "GET")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=30) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def head_commit(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


# ------------------------------------------------------------------ views


def test_board_filters_paginates_and_lists_facets(ws: Workspace, sample: Sample) -> None:
    everything = views.board(ws)
    assert [c.status for c in everything.columns] == [
        "open",
        "in_progress",
        "blocked",
        "deferred",
        "closed",
    ]
    assert everything.total == 10
    assert "BlueLake" in everything.assignees and "ui" in everything.labels

    bugs = views.board(ws, type="bug")
    assert [c.id for col in bugs.columns for c in col.cells] == [sample.bug]
    text = views.board(ws, text="HASHING")
    assert [c.title for col in text.columns for c in col.cells] == ["Password hashing service"]
    mine = views.board(ws, assignee="BlueLake")
    assert [c.id for col in mine.columns for c in col.cells] == [sample.subtasks[0]]
    labelled = views.board(ws, label="export")
    assert [c.id for col in labelled.columns for c in col.cells] == [sample.feature]
    urgent = views.board(ws, priority="P0")
    assert {c.priority for col in urgent.columns for c in col.cells} == {0}

    first = views.board(ws, status="open", per_page=2)
    second = views.board(ws, status="open", per_page=2, page=2)
    assert len(first.columns) == 1 and first.columns[0].pages == 4
    shown = [c.id for c in first.columns[0].cells] + [c.id for c in second.columns[0].cells]
    assert len(set(shown)) == 4
    with pytest.raises(InvalidInput, match="priority"):
        views.board(ws, priority="9")
    with pytest.raises(InvalidInput, match="per_page"):
        views.board(ws, per_page=0)


def test_epic_view_has_progress_and_dependency_edges(ws: Workspace, sample: Sample) -> None:
    view = views.epic_view(ws, epic_id=sample.epic)
    assert view.status.total == 5 and view.status.percent_complete == 0
    design, hashing, login, docs, session = sample.subtasks
    edges = {(e.source, e.target) for e in view.edges}
    assert edges == {
        (hashing, design),
        (login, design),
        (login, hashing),
        (docs, login),
        (session, design),
    }
    epics = views.list_epics(ws)
    assert [(e.epic.id, e.total) for e in epics] == [(sample.epic, 5)]


def _path_points(d: str, steps: int = 40) -> list[tuple[float, float]]:
    """Points along an SVG path of M, L and C (cubic) commands."""
    import re

    tokens = re.findall(r"[MLC]|-?[\d.]+,-?[\d.]+", d)
    points: list[tuple[float, float]] = []
    here = (0.0, 0.0)
    i = 0
    while i < len(tokens):
        command, i = tokens[i], i + 1
        count = 3 if command == "C" else 1
        xy = [tuple(map(float, t.split(","))) for t in tokens[i : i + count]]
        i += count
        if command == "C":
            (ax, ay), (bx, by), (cx, cy) = xy
            for n in range(steps + 1):
                t = n / steps
                u = 1 - t
                points.append(
                    (
                        u**3 * here[0] + 3 * u * u * t * ax + 3 * u * t * t * bx + t**3 * cx,
                        u**3 * here[1] + 3 * u * u * t * ay + 3 * u * t * t * by + t**3 * cy,
                    )
                )
        elif command == "L":
            points += [
                (
                    here[0] + (xy[0][0] - here[0]) * n / steps,
                    here[1] + (xy[0][1] - here[1]) * n / steps,
                )
                for n in range(steps + 1)
            ]
        here = (xy[-1][0], xy[-1][1])
    return points


def test_epic_graph_arrows_go_around_the_boxes_they_skip() -> None:
    """An arrow from a box to one two columns on, in another row, does not run
    through the box in the middle column (it looked like an arrow into that box)."""
    import re

    from hive.models import Cell, utc_now
    from hive.models.views import Edge
    from hive.serve import svg

    now = utc_now()
    cells = [
        Cell(id=f"hv-{name}", title=name, created_at=now, updated_at=now)
        for name in ("aaaa", "bbbb", "cccc", "dddd")
    ]
    edges = [  # a -> b -> c, and d (second row of the first column) -> c
        Edge(source="hv-bbbb", target="hv-aaaa", type="blocks"),
        Edge(source="hv-cccc", target="hv-bbbb", type="blocks"),
        Edge(source="hv-cccc", target="hv-dddd", type="blocks"),
    ]
    drawn = str(svg.dependency_graph(cells, edges))
    box = re.search(r'data-id="hv-bbbb"><rect x="(\d+)" y="(\d+)"', drawn)
    assert box is not None
    left, top = int(box[1]), int(box[2])
    skip = re.search(r'd="([^"]+)"[^>]*data-source="hv-cccc" data-target="hv-dddd"', drawn)
    assert skip is not None
    inside = [
        (x, y)
        for x, y in _path_points(skip[1])
        if left < x < left + svg.NODE_W and top < y < top + svg.NODE_H
    ]
    assert inside == []


def test_reservations_view_groups_by_agent_and_marks_stale(ws: Workspace, sample: Sample) -> None:
    view = views.reservations_view(ws)
    by_agent = {group.agent: group.reservations for group in view.agents}
    assert sorted(by_agent) == ["BlueLake", "GreenField", "RedStone"]
    stale = by_agent["GreenField"][0]
    assert stale.reservation.id == sample.stale_reservation
    assert stale.expired and stale.stale == "expired"
    assert by_agent["BlueLake"][0].stale is None


def test_mail_threads_and_messages_mark_nothing_read(ws: Workspace, sample: Sample) -> None:
    threads = list_threads(ws)
    keyed = {t.key: t for t in threads}
    assert keyed[sample.thread].count == 2
    assert keyed[sample.thread].importance == "high"
    alone = [t for t in threads if t.thread_id is None]
    assert len(alone) == 1 and alone[0].subject == "CI is flaky"
    assert threads[0].last_at >= threads[-1].last_at

    shown = thread_view(ws, key=sample.thread)
    assert [m.subject for m in shown.messages] == [
        "Kick-off: user authentication",
        "Schema question",
    ]
    assert shown.messages[0].read_by == []
    blue = ws.for_actor("BlueLake")
    assert not any(header.read for header in inbox(blue, agent="BlueLake"))
    with pytest.raises(NotFound):
        thread_view(ws, key="no-such-thread")


def test_outcome_stats_per_strategy_and_bucket(ws: Workspace) -> None:
    stats = views.outcome_stats(ws)
    assert stats.bucket == "day"
    assert [s.strategy for s in stats.strategies] == ["feature", "file", "risk"]
    assert stats.total == sum(s.total for s in stats.strategies) == 28
    for series in stats.strategies:
        assert series.successes == sum(p.successes for p in series.points)
        assert all(0 <= p.success_rate <= 1 and p.mean_duration >= 300 for p in series.points)
    weekly = views.outcome_stats(ws, bucket="week")
    assert all(p.start.weekday() == 0 for s in weekly.strategies for p in s.points)
    assert sum(len(s.points) for s in weekly.strategies) < sum(
        len(s.points) for s in stats.strategies
    )
    with pytest.raises(InvalidInput, match="bucket"):
        views.outcome_stats(ws, bucket="year")


def _outcome_point(day: int, count: int, successes: int, seconds: float) -> OutcomePoint:
    return OutcomePoint(
        start=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day),
        count=count,
        successes=successes,
        success_rate=successes / count,
        mean_duration=seconds,
        median_duration=seconds,
    )


def test_outcome_chart_draws_ticks_labels_and_a_line_per_strategy() -> None:
    """The chart's axes (five grid lines, their ticks), the time labels (about eight, and
    the last), and per strategy a polyline and a point with its tooltip per bucket."""
    import xml.etree.ElementTree as ET

    from hive.serve import svg

    ns = {"svg": "http://www.w3.org/2000/svg"}
    days = range(10)
    series = [
        StrategySeries(
            strategy="a<b",
            total=20,
            successes=10,
            success_rate=0.5,
            points=[_outcome_point(day, 2, day % 3 // 2 * 2, 60.0 * day) for day in days],
        ),
        StrategySeries(
            strategy="file",
            total=2,
            successes=1,
            success_rate=0.5,
            points=[_outcome_point(9, 2, 1, 7200.0)],
        ),
    ]
    stats = OutcomeStats(bucket="day", total=22, strategies=series)

    success = ET.fromstring(str(svg.outcome_chart(stats, measure="success")))
    assert success.get("class") == "chart chart-success"
    grid = success.findall("svg:line", ns)
    assert [line.get("y1") for line in grid] == ["206.0", "158.0", "110.0", "62.0", "14.0"]
    ticks = [text.text for text in success.findall("svg:text", ns)]
    assert ticks[:5] == ["0%", "25%", "50%", "75%", "100%"]
    assert ticks[5:] == [f"01-{day:02}" for day in range(1, 11)]  # 10 buckets: each
    first, second = success.findall("svg:g", ns)
    assert (first.get("data-strategy"), second.get("data-strategy")) == ("a<b", "file")
    polyline = first.find("svg:polyline", ns)
    assert polyline is not None and polyline.get("stroke") == svg.PALETTE[0]
    assert polyline.get("points", "").split()[:3] == ["56.0,206.0", "128.0,206.0", "200.0,14.0"]
    tips = [circle.findtext("svg:title", namespaces=ns) for circle in first]
    assert tips[1:3] == ["a<b 01-01: 0% (0/2 succeeded)", "a<b 01-02: 0% (0/2 succeeded)"]
    assert [circle.get("cx") for circle in second.findall("svg:circle", ns)] == ["704.0"]

    duration = ET.fromstring(str(svg.outcome_chart(stats, measure="duration")))
    ticks = [text.text for text in duration.findall("svg:text", ns)]
    assert ticks[:5] == ["0s", "30m", "60m", "1.5h", "2.0h"]  # the top: 7200s, a nice round one
    tips = [c.findtext("svg:title", namespaces=ns) for c in duration.iter(f"{{{ns['svg']}}}circle")]
    assert tips[2] == "a<b 01-03: 2m (2/2 succeeded)"
    assert tips[-1] == "file 01-10: 2.0h (1/2 succeeded)"

    many = OutcomeStats(
        bucket="month",
        total=20,
        strategies=[
            series[0].model_copy(
                update={"points": [_outcome_point(31 * month, 1, 1, 1) for month in range(20)]}
            )
        ],
    )
    labels = [t.text for t in ET.fromstring(str(svg.outcome_chart(many, measure="success")))]
    assert [label for label in labels if label and label.startswith("20")] == [
        "2026-01",
        "2026-03",
        "2026-05",
        "2026-07",
        "2026-09",
        "2026-11",
        "2027-01",
        "2027-03",
        "2027-05",
        "2027-07",
        "2027-08",
    ]  # every second month (20 buckets // 8), and the last
    empty = OutcomeStats(bucket="day", total=0, strategies=[])
    assert str(svg.outcome_chart(empty, measure="success")) == (
        '<p class="muted">no outcomes recorded yet</p>'
    )


def test_release_for_holder_needs_a_coordinator(ws: Workspace, sample: Sample) -> None:
    with pytest.raises(PermissionDenied, match="coordinator"):  # a name is not the role
        release_for_holder(ws.for_actor("coordinator"), reservation_id=sample.active_reservation)
    set_coordinators(sample.root, ["coordinator"])
    with pytest.raises(PermissionDenied, match="coordinator"):
        release_for_holder(ws, reservation_id=sample.active_reservation)
    coordinator = ws.for_actor("coordinator")
    released = release_for_holder(coordinator, reservation_id=sample.active_reservation)
    assert [r.id for r in released.released] == [sample.active_reservation]
    message = git(sample.root, "log", "-1", "--format=%B")
    assert message.startswith("hive: release BlueLake src/models/** (by coordinator)")
    assert f"Hive-Released: BlueLake #{sample.active_reservation} src/models/**" in message
    assert "Hive-Agent: coordinator" in message
    assert "Hive-Override: coordinator (coordinator) release the reservation" in message
    assert sample.active_reservation not in [r.id for r in list_reservations(ws)]

    granted = release_for_holder(ws, reservation_id=sample.stale_reservation, as_coordinator=True)
    assert granted.released[0].agent == "GreenField"
    assert "Hive-Agent: Test User" in git(sample.root, "log", "-1", "--format=%B")
    assert not (sample.root / ".hive" / "reservations" / "greenfield.yaml").exists()
    assert git(sample.root, "status", "--porcelain") == ""
    with pytest.raises(NotFound):
        release_for_holder(coordinator, reservation_id=999)


def test_state_token_moves_with_commits_and_mail(ws: Workspace, sample: Sample) -> None:
    before = views.state_token(ws)
    assert views.state_token(ws) == before
    other = Workspace(str(sample.root), actor="RedStone")
    create_cell(other, title="made elsewhere")
    after_cell = views.state_token(ws)
    assert after_cell != before
    send_message(other, to=["coordinator"], subject="ping", body="pong")
    assert views.state_token(ws) != after_cell


def test_is_loopback() -> None:
    from hive.serve.app import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("[::1]") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert not is_loopback("example.com")


# ------------------------------------------------------------------ HTTP


@pytest.fixture
def server(sample: Sample) -> Iterator[BackgroundServer]:
    with serving(sample.root, allow_write=True) as running:
        yield running


def test_pages_render_over_http(server: BackgroundServer, sample: Sample) -> None:
    pages = {
        "/": ["Password hashing service", 'data-status="in_progress"'],
        "/?type=bug": ["Login button misaligned"],
        "/epics": [sample.epic, "Add user authentication"],
        f"/epics/{sample.epic}": ['class="graph"', "Session tokens"],
        f"/cells/{sample.subtasks[0]}": ["users table drafted", 'class="diff"', "hive: start"],
        "/reservations": ["GreenField", "stale: expired", "src/models/**"],
        "/mail": ["Kick-off: user authentication", "CI is flaky", "Retried twice."],
        f"/mail?thread={sample.thread}": ["Schema question", "store them lower-cased"],
        "/outcomes": ['class="chart chart-success"', 'data-strategy="feature"'],
    }
    for path, wanted in pages.items():
        status, headers, body = request(server.url + path)
        assert status == 200, path
        assert body.startswith("<!doctype html>"), path
        assert headers["X-Hive-Version"], path
        for text in wanted:
            assert text in body, (path, text)
    assert "Login button" not in request(server.url + "/?type=task")[2]
    status, _, fragment = request(server.url + "/", headers={"X-Hive-Fragment": "1"})
    assert status == 200 and "<html" not in fragment and "Password hashing" in fragment


def test_json_api_matches_the_views(server: BackgroundServer, sample: Sample) -> None:
    status, _, body = request(server.url + "/api/board?type=bug")
    assert status == 200
    board = json.loads(body)
    assert [c["id"] for col in board["columns"] for c in col["cells"]] == [sample.bug]
    epic = json.loads(request(server.url + f"/api/epic?id={sample.epic}")[2])
    assert len(epic["edges"]) == 5
    missing = request(server.url + "/api/cell?id=hv-nope")
    assert missing[0] == 404 and json.loads(missing[2])["code"] == "not_found"


def test_a_partial_id_in_a_url_is_sent_to_the_cells_own_address(
    server: BackgroundServer, sample: Sample
) -> None:
    """/cells/<prefix> (as 'hive show' takes one) redirects to the full id: the page a
    browser keeps open is not broken later by a new cell sharing the prefix."""
    bug = sample.bug
    for given, wanted in (
        (f"/cells/{bug[:-2]}", f"/cells/{bug}"),
        (f"/cells/{bug.upper()}?x=1", f"/cells/{bug}?x=1"),
        (f"/epics/{sample.epic[:-1]}", f"/epics/{sample.epic}"),
    ):
        status, headers, _ = request(server.url + given)
        assert status == 302 and headers["location"] == wanted, (given, status)
        status, _, body = request(server.url + wanted)
        assert status == 200 and bug.split("-")[0] in body
    assert request(server.url + f"/cells/{bug}")[0] == 200  # the full id: no redirect
    ambiguous = request(server.url + "/cells/hv-")
    assert ambiguous[0] == 400 and "ambiguous" in ambiguous[2].lower()


def test_error_pages_say_what_is_wrong(server: BackgroundServer) -> None:
    status, _, body = request(server.url + "/cells/hv-nope")
    assert status == 404 and "no cell matches id &#39;hv-nope&#39;" in body
    status, _, body = request(server.url + "/?priority=9")
    assert status == 400 and "invalid priority" in body
    status, _, body = request(server.url + "/?page=x")
    assert status == 400 and "page must be a whole number" in body
    status, _, body = request(server.url + "/cells/")  # no route: the error page, not text
    assert status == 404 and body.startswith("<!doctype html>") and "no page /cells/" in body
    status, headers, body = request(server.url + "/api/actions/claim")  # a GET
    assert status == 405 and json.loads(body)["code"] == "invalid_input"
    assert headers["Allow"] == "POST"
    status, _, body = request(server.url + "/api/nope")  # no such view
    assert status == 404 and json.loads(body) == {
        "error": "no view 'nope'",
        "code": "not_found",
    }
    status, _, body = request(server.url + "/api/nope/deeper")  # no route under /api/: JSON
    assert (
        status == 404 and json.loads(body)["error"] == "no page /api/nope/deeper: the board is at /"
    )
    status, headers, body = request(server.url + "/static/nope.css")  # plain text, no page
    assert status == 404 and headers["content-type"].startswith("text/plain")
    assert body == "no page /static/nope.css: the board is at /"
    page = request(server.url + "/")[2]  # the icon is there (no 404 in the console)
    icon = page.split('<link rel="icon" href="', 1)[1].split('"', 1)[0]
    status, headers, body = request(server.url + icon)
    assert status == 200 and body.startswith("<svg")


def test_cell_page_shows_what_hive_show_shows(server: BackgroundServer, sample: Sample) -> None:
    """Design, acceptance criteria, comments and recorded merge conflicts are on the
    cell page (as 'hive show' prints them), the people's text escaped."""
    from hive.domain.annotate import add_comment
    from hive.domain.cells import show_cell
    from hive.models.cell import MergeConflict
    from hive.store.cells import encode_cell
    from hive.store.layout import cell_path

    ws = Workspace(str(sample.root), actor="Test User")
    add_comment(ws, cell_id=sample.chore, text="<b>pin</b> the versions")
    cell = show_cell(ws, cell_id=sample.chore).model_copy(
        update={
            "design": "use <table> & pip-tools",
            "acceptance_criteria": "CI green on **3.11**",
            "conflicts": [MergeConflict(field="priority", kept=3, other=1)],
        }
    )
    (sample.root / cell_path(cell.id)).write_bytes(encode_cell(cell))  # as a merge leaves it
    git(sample.root, "commit", "-q", "-am", "merge with a conflict")
    status, _, body = request(f"{server.url}/cells/{sample.chore}")
    assert status == 200
    for text in (
        "use &lt;table&gt; &amp; pip-tools",
        "CI green on **3.11**",
        "&lt;b&gt;pin&lt;/b&gt; the versions",
        'id="conflicts"',
        "priority: kept <b>3</b>, other <b>1</b>",
        f"hive resolve {sample.chore}",
    ):
        assert text in body, text
    assert "<b>pin</b>" not in body


# A title that reads one way and means another ("Trojan Source"): a right-to-left
# override and isolates reorder it, zero-width characters hide in it.
TROJAN = "ok\u202e\u2066 nimda\u2069\u2066 // x\u200b\u2060\ufeff"
TROJAN_SHOWN = (  # as the page's HTML writes "<U+202E>"
    "ok&lt;U+202E&gt;&lt;U+2066&gt; nimda&lt;U+2069&gt;&lt;U+2066&gt;"
    " // x&lt;U+200B&gt;&lt;U+2060&gt;&lt;U+FEFF&gt;"
)


def test_pages_show_bidi_controls_and_invisible_characters_by_their_code_points(
    server: BackgroundServer, sample: Sample
) -> None:
    """HTML escaping leaves a right-to-left override in place, where it reorders what
    a reviewer reads: every page shows it as '<U+202E>' (as the terminal does), while a
    form's values stay exact (a filter by that assignee still finds the cell) and so
    does the JSON API. (hive refuses such a label or assignee; this cell file is edited
    by hand, as one from another tool or clone may be.)"""
    import re

    from hive.domain.annotate import add_comment
    from hive.text import INVISIBLE_CHARS

    ws = Workspace(str(sample.root), actor="Test User")
    cell = create_cell(
        ws,
        title=f"title {TROJAN}",
        description=f"description {TROJAN}\nline two",
        labels=["label-x"],
        assignee="someone-x",
    )
    path = next((sample.root / ".hive" / "cells").rglob(f"{cell.id}.yaml"))
    text = path.read_text().replace("label-x", json.dumps(f"label {TROJAN}"))
    path.write_text(text.replace("someone-x", json.dumps(f"someone{TROJAN}")))
    git(sample.root, "commit", "-qam", "labels and assignee edited by hand", "--no-verify")
    add_comment(ws, cell_id=cell.id, text=f"comment {TROJAN}")
    for path, wanted in {
        "/": [f"title {TROJAN_SHOWN}", f"label {TROJAN_SHOWN}", f"@someone{TROJAN_SHOWN}"],
        f"/cells/{cell.id}": [
            f"title {TROJAN_SHOWN}",
            f"description {TROJAN_SHOWN}\nline two",
            f"comment {TROJAN_SHOWN}",
        ],
        "/?q=nimda&type=task": [f"title {TROJAN_SHOWN}"],
    }.items():
        status, _, body = request(server.url + path)
        assert status == 200, path
        for text in wanted:
            assert text in body, (path, text)
        # only the values a form sends back hold them, exactly (the board's filters)
        values = re.findall(r'value="([^"]*)"', body)
        if path.startswith("/?"):
            assert f"someone{TROJAN}" in values and f"label {TROJAN}" in values, path
        shown = re.sub(r'value="[^"]*"', "", body)
        assert INVISIBLE_CHARS.isdisjoint(shown), (path, shown)
    found = request(server.url + "/?assignee=" + quote(f"someone{TROJAN}"))[2]
    assert f"title {TROJAN_SHOWN}" in found
    exact = json.loads(request(f"{server.url}/api/cell?id={cell.id}")[2])
    assert exact["cell"]["title"] == f"title {TROJAN}"


def test_the_boards_script_shows_text_as_the_server_does() -> None:
    """hive.js shows assignees, labels and errors it is sent as JSON with the same
    characters replaced as the server's pages and the terminal (``UNSHOWN_CHARS``)."""
    import re
    from importlib import resources

    from hive.text import UNSHOWN_CHARS

    script = (resources.files("hive.serve") / "static" / "hive.js").read_text()
    found = re.search(r"const UNSHOWN = /\[(.*?)\]/gu;", script)
    assert found, "hive.js has no UNSHOWN pattern"
    pattern = re.compile("[" + re.sub(r"\\u\{(\w+)\}", r"\\U000\1", found.group(1)) + "]")
    # the basic plane, the shorthand and musical format controls' blocks and the tag
    # characters' block hold every one of them
    blocks = ((0, 0x10000), (0x1BC00, 0x1BD00), (0x1D100, 0x1D200), (0xE0000, 0xE0100))
    codes = [code for start, end in blocks for code in range(start, end)]
    matched = {char for char in map(chr, codes) if pattern.match(char)}
    assert matched == UNSHOWN_CHARS


def test_a_description_s_line_breaks_of_every_kind_are_laid_out_as_lines(
    server: BackgroundServer, sample: Sample
) -> None:
    """U+2028, U+2029, NEL, a lone CR, VT and FF in a description (pasted text keeps
    them) were shown as '?': the page lays each out as a line break, as ``hive show``
    does, and the JSON API keeps them exactly."""
    ws = Workspace(str(sample.root), actor="Test User")
    pasted = "one\u2028two\u2029three\x85four\r\nfive\rsix\x0bseven\x0ceight"
    cell = create_cell(ws, title="pasted", description=pasted)
    status, _, body = request(f"{server.url}/cells/{cell.id}")
    assert status == 200
    assert "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight" in body, body
    exact = json.loads(request(f"{server.url}/api/cell?id={cell.id}")[2])
    assert exact["cell"]["description"] == pasted


def test_a_diff_cut_on_the_cell_page_says_so_and_how_to_see_it_all(
    server: BackgroundServer, sample: Sample
) -> None:
    """A commit of the cell with a diff longer than the page shows (4,000 lines): the
    page says it is cut, above the diff (the diff scrolls: a line at its end went
    unseen), with the commands that show all of it; a short diff says nothing."""
    big = sample.root / "src" / "generated.py"
    big.parent.mkdir(exist_ok=True)
    big.write_text("".join(f"line_{n} = {n}\n" for n in range(5000)))
    git(sample.root, "add", str(big))
    git(sample.root, "commit", "-q", "-m", f"generate\n\nHive-Cell: {sample.chore}")
    sha = git(sample.root, "rev-parse", "HEAD").strip()
    shown = git(sample.root, "show", "--format=", sha).count("\n")
    status, _, body = request(f"{server.url}/cells/{sample.chore}")
    assert status == 200
    notice = (
        f"Only the first 4000 lines of this diff are shown; {shown - 4000} more are not."
        f" All of it: <code>git show {sha[:12]}</code>, or every commit of the cell:"
        f" <code>hive review {sample.chore} --per commit</code>"
    )
    assert body.count(notice) == 1 and "· diff cut" in body
    assert body.index(notice) < body.index("line_3900 = 3900")
    # who made each commit, in hive review's words (a trailer written by hand: git's)
    author = git(sample.root, "log", "-1", "--format=%an &lt;%ae&gt;").strip()
    assert f"· by {author} with git (no Hive-Committer trailer names an agent) ·" in body
    assert "· by hive (create, for " in body
    assert "line_4500" not in body
    short = request(f"{server.url}/cells/{sample.subtasks[0]}")[2]
    assert 'class="diff"' in short and "diff-cut" not in short


def test_board_says_which_cell_file_it_cannot_read(
    server: BackgroundServer, sample: Sample
) -> None:
    """A corrupt cell file is not silently missing from the board (hive list warns)."""
    from hive.store.layout import cell_path

    broken = cell_path(sample.chore)
    (sample.root / broken).write_text("id: [unclosed\n")
    git(sample.root, "commit", "-q", "--no-verify", "-am", "a bad merge")
    status, _, body = request(server.url + "/")
    assert status == 200 and 'id="total">9<' in body and "Export board as CSV" in body
    assert f"its file cannot be read: {broken}:1: malformed YAML" in body
    board = json.loads(request(server.url + "/api/board")[2])
    assert [p.split(":", 1)[0] for p in board["problems"]] == [broken]
    status, _, body = request(f"{server.url}/cells/{sample.chore}")  # not a server error
    assert status == 409 and 'data-code="corrupt_file"' in body and broken in body


def test_mail_thread_links_to_its_cell_only_when_there_is_one(
    server: BackgroundServer, sample: Sample
) -> None:
    coordinator = Workspace(str(sample.root), actor="coordinator")
    send_message(coordinator, to=["BlueLake"], subject="Plan", body="-", thread_id="release-v2")
    body = request(server.url + "/mail?thread=release-v2")[2]
    assert "thread release-v2</h2>" in body and 'href="/cells/release-v2"' not in body
    body = request(f"{server.url}/mail?thread={sample.thread}")[2]
    assert f'thread <a href="/cells/{sample.thread}">{sample.thread}</a>' in body


def test_epic_graph_marks_blockers_that_are_not_subtasks(
    server: BackgroundServer, sample: Sample
) -> None:
    from hive.domain.cells import add_dependency

    ws = Workspace(str(sample.root), actor="Test User")
    add_dependency(ws, cell_id=sample.subtasks[3], target=sample.feature)
    body = request(f"{server.url}/epics/{sample.epic}")[2]
    assert f'class="node outside" data-id="{sample.feature}"' in body
    assert "Export board as CSV (not a subtask of this epic)" in body
    for subtask in sample.subtasks:
        assert f'class="node" data-id="{subtask}"' in body


def test_a_repository_that_goes_away_under_the_server_is_a_clear_error(
    server: BackgroundServer, sample: Sample
) -> None:
    """.git moved away while serving (then back): every view, /api/version included,
    says so with a status and a message, and the board comes back with it."""
    git_dir = sample.root / ".git"
    away = sample.root.parent / "git-away"
    git_dir.rename(away)
    try:
        for path in ("/", "/mail", "/api/board", "/api/version"):
            status, _, body = request(server.url + path)
            assert status == 409, (path, body)
            assert "No git repository was found" in body, path
            if path.startswith("/api/"):
                assert json.loads(body)["code"] == "not_a_git_repository"
    finally:
        away.rename(git_dir)
    assert request(server.url + "/")[0] == 200
    assert json.loads(request(server.url + "/api/version")[2])["version"]


def test_an_empty_hive_says_what_to_do(tmp_path: Path) -> None:
    from hive.domain.setup import init_hive

    root = make_repo(tmp_path / "empty")
    init_hive(Workspace(str(root), actor="Test User"), prefix="hv")
    with serving(root) as running:
        board = request(running.url + "/")[2]
        assert 'id="nothing"' in board and "hive create TITLE" in board
        filtered = request(running.url + "/?type=bug&q=x")[2]
        assert "No cell matches these filters" in filtered
        epics = request(running.url + "/epics")[2]
        assert "no epics yet" in epics and "<table" not in epics
        outcomes = request(running.url + "/outcomes")[2]
        assert "no outcomes recorded yet" in outcomes and "<table" not in outcomes


def _token(server: BackgroundServer) -> str:
    body = request(server.url + "/")[2]
    return body.split('name="hive-token" content="', 1)[1].split('"', 1)[0]


def test_actions_need_the_token(server: BackgroundServer, sample: Sample) -> None:
    url = server.url + "/api/actions/claim"
    before = head_commit(sample.root)
    for headers in ({}, {"X-Hive-Token": "wrong"}):
        status, _, body = request(url, data={"cell_id": sample.feature}, headers=headers)
        assert status == 403 and json.loads(body)["code"] == "permission_denied"
    status, _, _ = request(
        url,
        data={"cell_id": sample.feature},
        headers={"X-Hive-Token": _token(server), "Origin": "http://evil.example"},
    )
    assert status == 403
    assert head_commit(sample.root) == before  # nothing was written

    status, _, body = request(
        url, data={"cell_id": sample.feature}, headers={"X-Hive-Token": _token(server)}
    )
    assert status == 200
    answer = json.loads(body)
    assert answer["ok"] and answer["result"]["status"] == "in_progress"
    assert answer["commit"] == head_commit(sample.root)
    message = git(sample.root, "log", "-1", "--format=%s%n%b")
    assert message.startswith(f"hive: start {sample.feature}")
    assert "Hive-Agent: Test User" in message


def test_form_actions_without_script_redirect_back(
    server: BackgroundServer, sample: Sample
) -> None:
    page = f"{server.url}/cells/{sample.chore}"
    status, headers, _ = request(
        server.url + "/api/actions/note",
        data={"cell_id": sample.chore, "text": "checked by hand", "token": _token(server)},
        headers={"Accept": "text/html", "Referer": page},
        form=True,
    )
    assert status == 303 and headers["location"] == f"/cells/{sample.chore}"
    assert "checked by hand" in request(page)[2]
    status, _, body = request(
        server.url + "/api/actions/close",
        data={"cell_id": sample.epic, "token": _token(server)},
        form=True,
    )
    assert status == 409 and "open subtasks" in json.loads(body)["error"]
    status, _, body = request(  # the same without script: a page that says so, and the way back
        server.url + "/api/actions/close",
        data={"cell_id": sample.epic, "token": _token(server)},
        headers={"Accept": "text/html", "Referer": page},
        form=True,
    )
    assert status == 409 and body.startswith("<!doctype html>") and "open subtasks" in body
    assert f'<a href="/cells/{sample.chore}">back to the page</a>' in body


def test_bad_requests_get_a_status_and_a_message_never_a_500(
    server: BackgroundServer, sample: Sample
) -> None:
    """Query parameters and action fields a user can get wrong: 4xx with the problem
    named (JSON under /api/), nothing written."""
    before = head_commit(sample.root)
    for path in ("/?page=%C2%B2", "/?per_page=%C2%B2"):  # '²' is a digit to str.isdigit
        status, _, body = request(server.url + path)
        assert status == 400 and "must be a whole number" in body, path
    for path, shown in (
        ("/api/board?page=x", "'x'"),
        ("/api/board?per_page=%C2%B2", "'²'"),
        ("/api/board?per_page=-1", "'-1'"),  # -1 is a whole number: the rule says no sign
    ):
        status, _, body = request(server.url + path)
        assert status == 400, path
        assert json.loads(body) == {
            "error": f"{path.split('?')[1].split('=')[0]} must be a whole number without a "
            f"sign, got {shown}",
            "code": "invalid_input",
        }
    token = {"X-Hive-Token": _token(server)}
    actions = server.url + "/api/actions/"
    status, _, body = request(actions + "release", data={"reservation_id": "²"}, headers=token)
    assert status == 400 and "reservation_id must be a whole number" in json.loads(body)["error"]
    # another agent's claimed cell: a close is refused as 'hive close' refuses it
    status, _, body = request(actions + "close", data={"cell_id": sample.bug}, headers=token)
    answer = json.loads(body)
    assert status == 403 and answer["code"] == "not_owner", body
    assert "claimed by RedStone" in answer["error"]
    # a field that is not text is refused, not stored as its Python repr
    status, _, body = request(
        actions + "note", data={"cell_id": sample.chore, "text": {"a": 1}}, headers=token
    )
    assert status == 400 and json.loads(body)["error"] == "field 'text' must be text, got dict"
    boundary = "hiveboundary"
    upload = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="cell_id"\r\n\r\n'
        f'{sample.chore}\r\n--{boundary}\r\nContent-Disposition: form-data; name="text";'
        f' filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n'
    )
    multipart = {**token, "Content-Type": f"multipart/form-data; boundary={boundary}"}
    for body_text, wanted in ((upload, "got UploadFile"), ("garbage", "not a valid form")):
        req = urllib.request.Request(
            actions + "note", data=body_text.encode(), headers=multipart, method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        assert refused.value.code == 400
        answer = json.loads(refused.value.read().decode())
        assert answer["code"] == "invalid_input" and wanted in answer["error"], answer
    assert head_commit(sample.root) == before  # nothing was written
    shown = json.loads(request(server.url + f"/api/cell?id={sample.chore}")[2])
    assert shown["cell"]["notes"] == ""


def test_a_body_declared_too_large_is_refused_before_it_is_read(
    server: BackgroundServer,
) -> None:
    """An action whose Content-Length is over the limit is answered at once (400, the
    reason), without the server waiting for (and holding) the whole body."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(server.url)
    # a server that waited for the body would never answer: the socket's timeout is only a
    # failure's, long enough for a loaded machine
    with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
        sock.sendall(
            b"POST /api/actions/note HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 100000000\r\nConnection: close\r\n\r\ncell_id=x&text="
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)  # a server waiting for 100 MB times out here
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:200]
    assert json.loads(body) == {
        "error": "request body is too large (over 65536 bytes)",
        "code": "invalid_input",
    }


def test_a_person_adds_a_note_to_a_cell_an_agent_has_claimed(
    server: BackgroundServer, sample: Sample
) -> None:
    """The person watching the swarm notes on a cell RedStone works on: one commit,
    recorded as their override; closing it stays RedStone's (only a forced close)."""
    token = {"X-Hive-Token": _token(server)}
    status, _, body = request(
        server.url + "/api/actions/note",
        data={"cell_id": sample.bug, "text": "check the iPhone SE too"},
        headers=token,
    )
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert message.startswith(f"hive: update {sample.bug}") and "Hive-Agent: Test User" in message
    assert "Hive-Override: Test User (person)" in message
    assert "of RedStone: a note added from the board (hive serve)" in message
    page = request(server.url + f"/cells/{sample.bug}")[2]
    assert "check the iPhone SE too" in page and 'id="assignee">RedStone' in page
    assert 'id="close"' not in page and "only RedStone closes it" in page
    assert 'id="close"' in request(server.url + f"/cells/{sample.chore}")[2]  # unclaimed
    assert git(sample.root, "status", "--porcelain") == ""


def test_a_forced_close_from_the_board_is_recorded_as_the_cli_records_it(
    server: BackgroundServer, sample: Sample
) -> None:
    """What 'hive close --force [--reason WHY]' does, the board does: a cell RedStone
    has claimed is closed by the watching person only forced (a plain close refused,
    nothing written); the person's force alone is enough, as at the CLI (the board
    demanded a reason), recorded as "(no reason given)"; a reason given is recorded;
    a cell waiting on an open blocker too."""
    from hive.store.layout import cell_path

    close = server.url + "/api/actions/close"
    token = {"X-Hive-Token": _token(server)}
    page = request(server.url + f"/cells/{sample.bug}")[2]
    assert 'id="force-close"' in page and 'name="force" value="1"' in page
    assert 'name="reason" required' not in page and f"hive close {sample.bug} --force<" in page
    assert 'id="close-force"' in request(server.url + f"/cells/{sample.chore}")[2]
    before = head_commit(sample.root)
    status, _, body = request(close, data={"cell_id": sample.bug}, headers=token)
    assert status == 403 and json.loads(body)["code"] == "not_owner", body
    assert head_commit(sample.root) == before
    status, _, body = request(close, data={"cell_id": sample.bug, "force": "1"}, headers=token)
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert message.startswith(f"hive: close {sample.bug}")
    assert "Hive-Override: Test User (person)" in message and "of RedStone" in message
    assert message.rstrip().endswith("(no reason given)"), message
    cell = git(sample.root, "show", f"HEAD:{cell_path(sample.bug)}")
    assert "status: closed" in cell
    blocked = {"cell_id": sample.subtasks[1], "force": "on", "reason": "done another way"}
    assert request(close, data={"cell_id": sample.subtasks[1]}, headers=token)[0] == 409
    status, _, body = request(close, data=blocked, headers=token)
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert "despite open blockers" in message and "done another way" in message
    assert git(sample.root, "status", "--porcelain") == ""


def test_a_coordinator_serving_the_board_gives_a_reason_to_force_a_close(
    sample: Sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served as a coordinator agent (HIVE_AGENT_TOKEN), the board acts for an agent,
    and an agent says why it overrides (issue 11): the reason is asked for on the page,
    a forced close without one is refused (400), nothing written; with one, recorded."""
    from hive.serve.app import ServeConfig
    from hive.serve.runner import BackgroundServer

    set_coordinators(sample.root, ["Boss"])
    monkeypatch.setenv("HIVE_AGENT", "Boss")
    monkeypatch.setenv("HIVE_AGENT_TOKEN", agent_env(sample.root, "Boss")["HIVE_AGENT_TOKEN"])
    before = head_commit(sample.root)
    config = ServeConfig(root=str(sample.root), actor="Boss", allow_write=True)
    token = {"X-Hive-Token": config.token}
    with BackgroundServer(config) as running:
        page = request(running.url + f"/cells/{sample.bug}")[2]
        assert 'name="reason" required' in page
        close = running.url + "/api/actions/close"
        status, _, body = request(close, data={"cell_id": sample.bug, "force": "1"}, headers=token)
        assert status == 400 and "needs a reason" in json.loads(body)["error"], body
        assert head_commit(sample.root) == before
        forced = {"cell_id": sample.bug, "force": "1", "reason": "RedStone is gone"}
        status, _, body = request(close, data=forced, headers=token)
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert "Hive-Override: Boss (coordinator)" in message and "RedStone is gone" in message


def test_an_agent_serving_may_not_note_on_another_agents_cell(
    sample: Sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served as an agent (HIVE_AGENT_TOKEN) that is no coordinator: the note on
    RedStone's cell is refused (403, not_owner), nothing written."""
    from hive.serve.app import ServeConfig
    from hive.serve.runner import BackgroundServer

    monkeypatch.setenv("HIVE_AGENT", "BlueLake")
    monkeypatch.setenv("HIVE_AGENT_TOKEN", agent_env(sample.root, "BlueLake")["HIVE_AGENT_TOKEN"])
    before = head_commit(sample.root)
    config = ServeConfig(root=str(sample.root), actor="BlueLake", allow_write=True)
    with BackgroundServer(config) as running:
        status, _, body = request(
            running.url + "/api/actions/note",
            data={"cell_id": sample.bug, "text": "mine"},
            headers={"X-Hive-Token": config.token},
        )
    answer = json.loads(body)
    assert status == 403 and answer["code"] == "not_owner", body
    assert "BlueLake may not override RedStone's ownership" in answer["error"]
    assert head_commit(sample.root) == before


def test_release_action_releases_another_agents_reservation(
    server: BackgroundServer, sample: Sample
) -> None:
    status, _, body = request(
        server.url + "/api/actions/release",
        data={"reservation_id": str(sample.stale_reservation)},
        headers={"X-Hive-Token": _token(server)},
    )
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert "Hive-Released: GreenField" in message and "Hive-Agent: Test User" in message


def test_release_action_releases_only_stale_reservations(
    server: BackgroundServer, sample: Sample
) -> None:
    """The board releases a stale reservation (expired, or its cell closed), as the
    issue says; one its holder may still be using is refused, nothing written."""
    url = server.url + "/api/actions/release"
    token = {"X-Hive-Token": _token(server)}
    before = head_commit(sample.root)
    status, _, body = request(
        url, data={"reservation_id": str(sample.active_reservation)}, headers=token
    )
    answer = json.loads(body)
    assert status == 409 and answer["code"] == "conflict", body
    assert (
        f"reservation #{sample.active_reservation} src/models/** of BlueLake is not stale"
        in (answer["error"])
    )
    assert "hive release --agent BlueLake" in answer["error"]
    assert head_commit(sample.root) == before
    page = request(server.url + "/reservations")[2]
    row = page.split(f'<tr data-id="{sample.active_reservation}"', 1)[1].split("</tr>", 1)[0]
    assert "button" not in row  # no Release offered for it
    stale_row = page.split(f'<tr data-id="{sample.stale_reservation}"', 1)[1].split("</tr>")[0]
    assert 'class="release"' in stale_row

    # RedStone's reservation for the bug turns stale when the bug is closed
    from hive.domain.cells import close_cell

    red = Workspace(str(sample.root), actor="RedStone")
    held = next(r for r in list_reservations(red) if r.agent == "RedStone")
    close_cell(red, cell_id=sample.bug, reason="fixed")
    status, _, body = request(url, data={"reservation_id": str(held.id)}, headers=token)
    assert status == 200, body
    message = git(sample.root, "log", "-1", "--format=%B")
    assert f"Hive-Released: RedStone #{held.id} src/ui/*.css" in message
    assert "a stale reservation (cell closed)" in message  # the override says why

    status, _, body = request(
        url, data={"reservation_id": str(sample.stale_reservation)}, headers=token
    )
    assert status == 200, body
    assert "a stale reservation (expired)" in git(sample.root, "log", "-1", "--format=%B")


def test_actions_are_commits_even_in_staging_mode(
    sample: Sample, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HIVE_AUTOCOMMIT=0 in the environment of 'hive serve' does not turn its actions
    into changes staged in the user's index: each is a normal hive commit, and the
    commit the answer names is that one."""
    monkeypatch.setenv("HIVE_AUTOCOMMIT", "0")
    before = head_commit(sample.root)
    with serving(sample.root, allow_write=True) as running:
        status, _, body = request(
            running.url + "/api/actions/note",
            data={"cell_id": sample.chore, "text": "from the board"},
            headers={"X-Hive-Token": _token(running)},
        )
        assert status == 200, body
        after = head_commit(sample.root)
        assert after != before and json.loads(body)["commit"] == after
        assert git(sample.root, "status", "--porcelain") == ""  # nothing left staged
        message = git(sample.root, "log", "-1", "--format=%B")
        assert message.startswith(f"hive: update {sample.chore}")
        assert "Hive-Agent: Test User" in message
        assert "from the board" in request(running.url + f"/cells/{sample.chore}")[2]


def test_read_only_server_refuses_actions(sample: Sample) -> None:
    from hive.serve.app import ServeConfig
    from hive.serve.runner import BackgroundServer

    config = ServeConfig(root=str(sample.root), actor="Test User")
    with BackgroundServer(config) as running:
        body = request(running.url + "/")[2]
        assert "hive-token" not in body and 'action="/api/actions' not in body
        status, _, answer = request(
            running.url + "/api/actions/claim",
            data={"cell_id": sample.feature, "token": config.token},
            headers={"X-Hive-Token": config.token},
        )
        assert status == 403 and "read-only" in json.loads(answer)["error"]


def test_other_hosts_are_refused(server: BackgroundServer) -> None:
    status, _, body = request(server.url + "/", headers={"Host": "attacker.example:80"})
    assert status == 403 and "unknown host" in body
    assert request(server.url + "/", headers={"Host": "localhost"})[0] == 200


def test_events_report_a_cli_change(server: BackgroundServer, sample: Sample) -> None:
    seen: list[str] = []

    def listen() -> None:
        with urllib.request.urlopen(server.url + "/events", timeout=30) as stream:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    seen.append(line[6:])
                    if len(seen) == 2:
                        return

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    deadline = time.monotonic() + 60  # waits for a state: a minute, as on a loaded machine
    while not seen and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen, "no first event"
    made = run_hive(
        ["-C", str(sample.root), "create", "Made through the CLI"], module="hive.cli.main"
    )
    assert made.returncode == 0
    # at once: the server polls every 250 ms, and what it does to tell the stream (its
    # thread, in this process) is counted in CPU seconds, which a loaded machine does not
    # stretch as it does the wall-clock time
    assert server.app.state.watcher.interval <= 0.25
    changed_at = time.process_time()
    reader.join(timeout=60)
    assert len(seen) == 2 and seen[1] != seen[0]
    assert time.process_time() - changed_at < 1.0
    assert json.loads(request(server.url + "/api/version")[2])["version"] == seen[1]


# ------------------------------------------------------------------ the command


def test_serve_refuses_other_hosts_without_the_flag(sample: Sample) -> None:
    done = run_hive(
        ["-C", str(sample.root), "serve", "--host", "0.0.0.0", "--port", "0"],
        module="hive.cli.main",
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr and "--allow-remote" in done.stderr
    assert "Traceback" not in done.stderr
    as_json = run_hive(
        ["-C", str(sample.root), "serve", "--host", "0.0.0.0", "--port", "0", "--json"],
        module="hive.cli.main",
    )
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["code"] == "invalid_input"


def test_serve_on_a_port_in_use_names_the_next_step(sample: Sample) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = run_hive(["-C", str(sample.root), "serve", "--port", port], module="hive.cli.main")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
        " (choose another with --port N, or --port 0 for a free one)\n"
    )


def test_serve_json_prints_its_address_on_one_line(sample: Sample) -> None:
    process = _serve(sample.root, "--json")
    try:
        assert process.stdout is not None
        started = json.loads(process.stdout.readline())
        assert started["url"] == f"http://127.0.0.1:{started['port']}/"
        assert started["write"] is False and started["actor"] is None
        assert request(started["url"])[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=120)


def test_serve_acts_only_as_an_identity_it_can_prove(sample: Sample) -> None:
    """``--actor NAME`` made the board act as agent NAME without its credential: its
    claims and commits were NAME's. A name alone is refused, as for every command."""
    from hive.domain.identity import issue_credential

    quill = issue_credential(Workspace(str(sample.root), from_env=False), name="Quill")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    serve = ["serve", "--allow-write", "--port", "0"]
    head = git(sample.root, "rev-parse", "HEAD")
    for args, env in (
        (["--actor", "Quill"], clean),
        ([], {**clean, "HIVE_AGENT": "Quill"}),
    ):
        try:  # a server that starts serves until stopped: a subprocess, with a limit
            refused = subprocess.run(
                hive_command(["-C", str(sample.root), *args, *serve]),
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired as served:
            pytest.fail(f"served as Quill without its credential: {served.stdout!r}")
        assert refused.returncode == 5, (args, refused.stdout, refused.stderr)
        assert "acting as Quill needs its credential" in refused.stderr
    assert git(sample.root, "rev-parse", "HEAD") == head
    process = subprocess.Popen(
        hive_command(["-C", str(sample.root), "--actor", "Quill", *serve, "--json"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**clean, "PYTHONUNBUFFERED": "1", "HIVE_AGENT_TOKEN": quill.token},
    )
    try:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["actor"] == "Quill"  # proven
    finally:
        process.terminate()
        process.wait(timeout=120)


def test_serve_outside_a_hive_is_a_clear_error(tmp_path: Path) -> None:
    done = run_hive(["-C", str(tmp_path), "serve", "--port", "0"], module="hive.cli.main")
    assert done.returncode == 2 and "not inside a git repository" in done.stderr


def _serve(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        hive_command(["-C", str(root), "serve", "--port", "0", *args]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _check_printed_url(root: Path, prefix: str, *args: str) -> str:
    """Start ``hive serve ARGS``, check its first line starts with ``prefix`` and that
    the URL it prints serves the board; the line."""
    process = _serve(root, *args)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(prefix), line
        status, _, body = request(line.split()[2])
        assert status == 200 and "Add user authentication" in body
        return line
    finally:
        process.terminate()
        process.wait(timeout=120)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_stops_cleanly_on_sigterm_as_on_ctrl_c(sample: Sample, signum: int) -> None:
    """SIGTERM (``kill``, a service manager) stops ``hive serve`` as Ctrl-C does: the
    open event stream ended by the server, exit 0, nothing on stderr. uvicorn raised
    the signal again after its graceful shutdown, and SIGTERM killed the process (143)."""
    process = subprocess.Popen(
        hive_command(["-C", str(sample.root), "serve", "--port", "0", "--json"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["url"]
        with urllib.request.urlopen(url + "events", timeout=60) as stream:  # held open
            assert stream.status == 200
            process.send_signal(signum)
            out, err = process.communicate(timeout=60)
            stream.read()  # ended by the server (left open: a timeout error here)
    finally:
        process.kill()
        process.wait()
    assert (process.returncode, out, err) == (0, "", "")


def test_serve_command_prints_its_url_and_serves(sample: Sample) -> None:
    line = _check_printed_url(sample.root, "hive serve: http://127.0.0.1:")
    assert "read-only" in line


def test_serve_prints_a_url_that_works_for_an_ipv6_host_given_in_brackets(
    sample: Sample,
) -> None:
    """--host [::1] (as in a URL) and ::1 print the same usable URL, not http://[[::1]]."""
    for host in ("[::1]", "::1"):
        _check_printed_url(sample.root, "hive serve: http://[::1]:", "--host", host)


def test_serve_refuses_an_empty_host(sample: Sample) -> None:
    done = subprocess.run(
        hive_command(["-C", str(sample.root), "serve", "--host", " ", "--port", "0"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --host needs an address (for example 127.0.0.1)"


def test_serve_warns_when_listening_beyond_loopback(sample: Sample) -> None:
    process = _serve(sample.root, "--host", "0.0.0.0", "--allow-remote", "--allow-write")
    try:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        assert "read-write as" in line
        warning = process.stderr.readline()
        assert warning.startswith("warning: hive serve is listening on 0.0.0.0:")
        assert "--allow-write" in warning
        port = line.split(":")[-1].split("/")[0]
        assert request(f"http://127.0.0.1:{port}/epics")[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=120)


def test_cells_listed_by_the_board_are_the_cli_cells(ws: Workspace) -> None:
    board = views.board(ws, per_page=200)
    on_board = sorted(c.id for col in board.columns for c in col.cells)
    assert on_board == sorted(c.id for c in list_cells(ws, status="all"))


def _hold(ws: Workspace, agent: str, number: int, pattern: str, *, hours: float) -> None:
    """``agent`` holds reservation ``number`` (as a sync of two clones can leave it:
    ids are unique per agent, so another agent may hold the same number)."""
    from datetime import timedelta

    from hive.domain.reservations import encode_file, reservation_path
    from hive.git.repo import Change
    from hive.models import utc_now
    from hive.models.reservation import Reservation, ReservationFile

    now = utc_now()
    held = Reservation(
        id=number,
        agent=agent,
        path_pattern=pattern,
        reason="made in another clone",
        created_at=now - timedelta(hours=2),
        expires_at=now + timedelta(hours=hours),
    )
    change = Change(
        reservation_path(agent), encode_file(ReservationFile(agent=agent, reservations=[held]))
    )
    ws.write_files(lambda snap: ([change], f"hive: reserve {pattern} for {agent}\n", None))


def test_a_reservation_number_two_agents_hold_is_released_for_the_one_named(
    server: BackgroundServer, sample: Sample
) -> None:
    number = sample.stale_reservation  # GreenField's, expired
    ws = Workspace(str(sample.root), actor="Test User")
    _hold(ws, "OrangeHill", number, "src/other/**", hours=4)  # active, the same number
    url = server.url + "/api/actions/release"
    token = {"X-Hive-Token": _token(server)}
    before = git(sample.root, "rev-parse", "HEAD")
    status, _, body = request(url, data={"reservation_id": str(number)}, headers=token)
    answer = json.loads(body)
    assert status == 400 and answer["code"] == "ambiguous_id", body
    assert "GreenField's" in answer["error"] and "OrangeHill's" in answer["error"]
    assert git(sample.root, "rev-parse", "HEAD") == before
    page = request(server.url + "/reservations")[2]
    assert '<input type="hidden" name="agent" value="GreenField">' in page  # the form says whose
    status, _, body = request(
        url, data={"reservation_id": str(number), "agent": "GreenField"}, headers=token
    )
    assert status == 200, body
    assert f"Hive-Released: GreenField #{number}" in git(sample.root, "log", "-1", "--format=%B")
    left = [(r.agent, r.id) for r in list_reservations(ws) if r.id == number]
    assert left == [("OrangeHill", number)]
    status, _, body = request(
        url, data={"reservation_id": str(number), "agent": "OrangeHill"}, headers=token
    )
    assert status == 409 and "of OrangeHill is not stale" in json.loads(body)["error"]
    with pytest.raises(NotFound, match="of Nobody"):
        release_for_holder(ws, reservation_id=number, agent="Nobody", as_coordinator=True)


def test_an_interrupt_before_the_event_loop_runs_leaves_no_coroutine_never_awaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C (or SIGTERM, raised as Ctrl-C) after ``Server.run`` made its coroutine and
    before the event loop ran it (uvicorn sets up the loop in between): ``hive serve``
    stops, and says nothing (it printed ``RuntimeWarning: coroutine 'Server.serve' was
    never awaited``, a flaky failure of the signal test in test_lean_entry.py)."""
    import gc
    import warnings

    from hive.serve.runner import server_for

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never served")

    def interrupted() -> Any:
        raise KeyboardInterrupt

    server = server_for(app)
    monkeypatch.setattr(server.config, "get_loop_factory", interrupted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stopped = False
        try:
            server.run(sockets=[])
        except KeyboardInterrupt:
            stopped = True
        del server
        gc.collect()
    assert stopped
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
