"""Inline SVG for the web views: an epic's dependency graph and the outcome charts.

Drawn on the server as plain SVG markup (no script, no external assets), so a
page is complete as soon as it arrives and works offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from markupsafe import Markup, escape

from hive.models import Cell
from hive.models.views import Edge, OutcomePoint, OutcomeStats, StrategySeries

NODE_W = 214
NODE_H = 46
GAP_X = 70
GAP_Y = 18
PAD = 40
MAX_NODES = 400
PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")


def _attr(value: object) -> str:
    return str(escape(str(value)))


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


# ------------------------------------------------------------------ dependency graph


def layers(cells: Sequence[Cell], edges: Sequence[Edge]) -> dict[str, int]:
    """Each cell's column: one right of everything it waits for (``blocks`` edges)."""
    ids = {cell.id for cell in cells}
    waits: dict[str, list[str]] = {cell.id: [] for cell in cells}
    for edge in edges:
        if edge.type == "blocks" and edge.source in ids and edge.target in ids:
            waits[edge.source].append(edge.target)
    depth: dict[str, int] = {}

    def visit(node: str, trail: frozenset[str]) -> int:
        if node in depth:
            return depth[node]
        if node in trail:  # a cycle (doctor reports it): cut it here
            return 0
        below = [visit(t, trail | {node}) for t in waits[node]]
        depth[node] = 1 + max(below) if below else 0
        return depth[node]

    for cell in cells:
        visit(cell.id, frozenset())
    return depth


def dependency_graph(
    cells: Sequence[Cell], edges: Sequence[Edge], outside: Sequence[Cell] = ()
) -> Markup:
    """Subtasks as boxes in columns (a box waits for the boxes left of it), arrows
    from what blocks to what waits; each box links to its cell page. ``outside``:
    blockers that are not subtasks, drawn dashed and labelled as such."""
    cells = [*cells, *outside]
    others = {cell.id for cell in outside}
    if not cells:
        return Markup('<p class="muted">no subtasks</p>')
    if len(cells) > MAX_NODES:
        return Markup(f'<p class="muted">{len(cells)} subtasks: too many to draw</p>')
    column = layers(cells, edges)
    rows: dict[int, int] = {}
    where: dict[str, tuple[int, int]] = {}
    for cell in sorted(cells, key=lambda c: (column[c.id], c.priority, c.created_at, c.id)):
        row = rows.get(column[cell.id], 0)
        rows[column[cell.id]] = row + 1
        x = PAD + column[cell.id] * (NODE_W + GAP_X)
        where[cell.id] = (x, PAD + row * (NODE_H + GAP_Y))
    width = PAD * 2 + (max(column.values()) + 1) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + max(rows.values()) * (NODE_H + GAP_Y) - GAP_Y
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="dependency graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#64748b"/></marker></defs>',
    ]
    parts += [_edge(edge, where) for edge in edges if edge.source in where and edge.target in where]
    parts += [_node(cell, *where[cell.id], outside=cell.id in others) for cell in cells]
    parts.append("</svg>")
    return Markup("".join(parts))


def _edge(edge: Edge, where: dict[str, tuple[int, int]]) -> str:
    tx, ty = where[edge.target]
    sx, sy = where[edge.source]
    x1, y1 = tx + NODE_W, ty + NODE_H / 2
    x2, y2 = sx, sy + NODE_H / 2
    if x2 <= x1:  # same column (related, or a cycle): curve around the right side
        x2 = sx + NODE_W
        bend = max(x1, x2) + GAP_X / 2
        path = f"M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}"
    elif x2 - x1 > GAP_X * 1.5 and abs(y2 - y1) < NODE_H:  # skips a column: arc over it
        lift = min(y1, y2) - (NODE_H / 2 + 10) / 0.75  # the curve peaks 3/4 of the way up
        path = f"M{x1},{y1} C{x1 + GAP_X},{lift} {x2 - GAP_X},{lift} {x2},{y2}"
    elif x2 - x1 > GAP_X * 1.5:  # skips a column between rows: along the gap above the
        lane = min(ty, sy) - GAP_Y / 2  # higher box, not through the boxes in between
        a, b = x1 + GAP_X / 2, x2 - GAP_X / 2
        path = (
            f"M{x1},{y1} C{a},{y1} {a},{lane} {x1 + GAP_X},{lane} L{x2 - GAP_X},{lane} "
            f"C{b},{lane} {b},{y2} {x2},{y2}"
        )
    else:
        middle = (x1 + x2) / 2
        path = f"M{x1},{y1} C{middle},{y1} {middle},{y2} {x2},{y2}"
    dash = ' stroke-dasharray="4 3"' if edge.type != "blocks" else ""
    return (
        f'<path class="edge edge-{_attr(edge.type)}" d="{path}" fill="none" stroke="#64748b" '
        f'stroke-width="1.4"{dash} marker-end="url(#arrow)" data-source="{_attr(edge.source)}" '
        f'data-target="{_attr(edge.target)}"><title>{_attr(edge.source)} {_attr(edge.type)} '
        f"on {_attr(edge.target)}</title></path>"
    )


def _node(cell: Cell, x: int, y: int, *, outside: bool = False) -> str:
    kind = "node outside" if outside else "node"
    tip = f"{cell.title} (not a subtask of this epic)" if outside else cell.title
    return (
        f'<a href="/cells/{_attr(cell.id)}" class="{kind}" data-id="{_attr(cell.id)}">'
        f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" '
        f'class="status-{_attr(cell.status)}"/>'
        f'<text x="{x + 8}" y="{y + 17}" class="node-id">{_attr(cell.id)} · '
        f"{_attr(cell.status.replace('_', ' '))}</text>"
        f'<text x="{x + 8}" y="{y + 35}" class="node-title">{_attr(_clip(cell.title, 26))}'
        f"</text><title>{_attr(tip)}</title></a>"
    )


# ------------------------------------------------------------------ outcome charts


@dataclass
class Frame:
    """A chart's plotting area and its x positions (one per time bucket)."""

    width: int = 720
    height: int = 240
    left: int = 56
    right: int = 16
    top: int = 14
    bottom: int = 34

    def x_of(self, index: int, count: int) -> float:
        inner = self.width - self.left - self.right
        return self.left + (inner / 2 if count == 1 else inner * index / (count - 1))

    def y_of(self, value: float, top_value: float) -> float:
        inner = self.height - self.top - self.bottom
        share = value / top_value if top_value else 0
        return self.top + inner * (1 - share)


def _nice_top(value: float) -> float:
    if value <= 0:
        return 1.0
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800):
        if value <= step * 4:
            return float(step * 4)
    return float(value * 1.1)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def _label(moment: datetime, bucket: str) -> str:
    return moment.strftime("%Y-%m" if bucket == "month" else "%m-%d")


def outcome_chart(stats: OutcomeStats, *, measure: str) -> Markup:
    """A line per strategy over the time buckets: ``success`` (rate, 0-100 %) or
    ``duration`` (mean seconds)."""
    starts = sorted({p.start for s in stats.strategies for p in s.points})
    if not starts:
        return Markup('<p class="muted">no outcomes recorded yet</p>')
    chart = _Chart(Frame(), measure, stats.bucket, starts, _chart_top(stats, measure))
    parts = [chart.opening(), *chart.grid(), *chart.time_labels()]
    for number, series in enumerate(stats.strategies):
        parts += chart.series(series, PALETTE[number % len(PALETTE)])
    parts.append("</svg>")
    return Markup("".join(parts))


def _chart_top(stats: OutcomeStats, measure: str) -> float:
    """The value at the top of the chart: 100 %, or a round duration over the longest mean."""
    if measure == "success":
        return 1.0
    return _nice_top(max(p.mean_duration for s in stats.strategies for p in s.points))


@dataclass
class _Chart:
    """One outcome chart being drawn: its frame, what it measures and its time buckets."""

    frame: Frame
    measure: str  # success or duration
    bucket: str
    starts: list[datetime]
    top: float
    position: dict[datetime, int] = field(init=False)  # a bucket's index in starts

    def __post_init__(self) -> None:
        self.position = {start: i for i, start in enumerate(self.starts)}

    def opening(self) -> str:
        frame, measure = self.frame, self.measure
        return (
            f'<svg class="chart chart-{measure}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{frame.width}" height="{frame.height}" viewBox="0 0 {frame.width} '
            f'{frame.height}" role="img" aria-label="{measure} per strategy over time">'
        )

    def ticks(self) -> list[tuple[float, str]]:
        """The five values the grid lines are drawn at, and their labels."""
        if self.measure == "success":
            return [(v / 4, f"{v * 25}%") for v in range(5)]
        return [(self.top * v / 4, _duration(self.top * v / 4)) for v in range(5)]

    def grid(self) -> list[str]:
        frame = self.frame
        lines = []
        for value, text in self.ticks():
            y = frame.y_of(value, self.top)
            lines.append(
                f'<line x1="{frame.left}" x2="{frame.width - frame.right}" y1="{y:.1f}" '
                f'y2="{y:.1f}" class="grid"/><text x="{frame.left - 6}" y="{y + 4:.1f}" '
                f'class="tick" text-anchor="end">{text}</text>'
            )
        return lines

    def time_labels(self) -> list[str]:
        """About eight bucket labels under the chart, and always the last one."""
        starts = self.starts
        step = max(1, len(starts) // 8)
        return [
            f'<text x="{self.frame.x_of(index, len(starts)):.1f}" y="{self.frame.height - 12}" '
            f'class="tick" text-anchor="middle">{_label(start, self.bucket)}</text>'
            for index, start in enumerate(starts)
            if index % step == 0 or index == len(starts) - 1
        ]

    def series(self, series: StrategySeries, colour: str) -> list[str]:
        """A strategy's line, and a point with its tooltip per bucket it has."""
        points = [self.point(series.strategy, point) for point in series.points]
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
        return [
            f'<g class="series" data-strategy="{_attr(series.strategy)}">'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>',
            *(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                f"<title>{_attr(tip)}</title></circle>"
                for x, y, tip in points
            ),
            "</g>",
        ]

    def point(self, strategy: str, point: OutcomePoint) -> tuple[float, float, str]:
        """Where ``point`` is drawn, and its tooltip."""
        success = self.measure == "success"
        value = point.success_rate if success else point.mean_duration
        x = self.frame.x_of(self.position[point.start], len(self.starts))
        y = self.frame.y_of(value, self.top)
        shown = f"{value:.0%}" if success else _duration(value)
        when = _label(point.start, self.bucket)
        return x, y, f"{strategy} {when}: {shown} ({point.successes}/{point.count} succeeded)"


def legend(stats: OutcomeStats) -> Markup:
    items = [
        f'<span class="legend-item"><i style="background:{PALETTE[n % len(PALETTE)]}"></i>'
        f"{_attr(s.strategy)} ({s.successes}/{s.total}, {s.success_rate:.0%})</span>"
        for n, s in enumerate(stats.strategies)
    ]
    return Markup('<div class="legend">' + "".join(items) + "</div>")
