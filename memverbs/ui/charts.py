"""The Health view's charts: inline SVG drawn on the server, no script and no chart library.

Each chart says its numbers in text as well (`aria-label`, and a table under the latency chart),
so a screen reader, a text browser and a test read the same values the bars and lines show.
"""

from __future__ import annotations

from html import escape
from statistics import median

from memverbs.server.timeparse import parse_instant

SERIES = 8  # distinct colours (ui.css `.series-N`); later series repeat them dashed


def _e(value: object) -> str:
    return escape("" if value is None else str(value))


def bar_chart(title: str, values: dict[str, int]) -> str:
    """A horizontal bar chart as inline SVG, its numbers also in text for screen readers."""
    if not values:
        return ""
    top = max(values.values()) or 1
    row_h, label_w, bar_w = 22, 170, 320
    bars = []
    for i, (label, value) in enumerate(values.items()):
        y = i * row_h
        w = max(1, round(bar_w * value / top))
        bars.append(
            f'<text x="0" y="{y + 15}" class="chart-label">{_e(label)}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w}" height="{row_h - 8}" class="chart-bar"></rect>'
            f'<text x="{label_w + w + 6}" y="{y + 15}" class="chart-value">{value}</text>'
        )
    height = row_h * len(values)
    return (
        f'<figure class="chart"><figcaption>{_e(title)}</figcaption>'
        f'<svg role="img" aria-label="{_e(title)}: ' + _e(", ".join(f"{k} {v}" for k, v in values.items()))
        + f'" viewBox="0 0 {label_w + bar_w + 60} {height}" width="100%" preserveAspectRatio="xMinYMin meet">'
        + "".join(bars) + "</svg></figure>"
    )


def latency_buckets(events: list[dict], *, limit: int = 30) -> tuple[str, list[str], dict[str, dict[str, list[float]]]]:
    """The usage log's latencies per verb per time bucket: (unit, buckets oldest first, verb → bucket → ms).

    Buckets are days, or hours when all the calls span two days at most (a new install's log would
    otherwise be one point). Only buckets with calls are kept, the newest `limit` of them.
    """
    timed = [ev for ev in events if isinstance(ev.get("latency_ms"), (int, float)) and len(ev["ts"]) >= 13]
    if not timed:
        return "day", [], {}
    moments = [parse_instant(ev["ts"]) or 0 for ev in timed]
    hourly = max(moments) - min(moments) <= 2 * 86_400_000
    unit, width = ("hour", 13) if hourly else ("day", 10)
    series: dict[str, dict[str, list[float]]] = {}
    for ev in timed:
        series.setdefault(ev["verb"], {}).setdefault(ev["ts"][:width], []).append(float(ev["latency_ms"]))
    buckets = sorted({b for per in series.values() for b in per})[-limit:]
    series = {verb: {b: per[b] for b in buckets if b in per} for verb, per in sorted(series.items())}  # oldest first
    return unit, buckets, {verb: per for verb, per in series.items() if per}


def _label(bucket: str, unit: str) -> str:
    return bucket[5:10] + (f" {bucket[11:13]}h" if unit == "hour" else "")


def latency_over_time(events: list[dict]) -> str:
    """Median latency of each verb per day (or hour) as a line chart, with its numbers in a table."""
    unit, buckets, series = latency_buckets(events)
    if not buckets:
        return ""
    title = f"median latency per verb per {unit} (ms)"
    w, h, left, bottom, top_pad = 640, 220, 48, 40, 10
    plot_w, plot_h = w - left - 10, h - bottom - top_pad
    medians = {verb: {b: median(ms) for b, ms in per.items()} for verb, per in series.items()}
    peak = max(v for per in medians.values() for v in per.values()) or 1.0
    # x is time itself, so a quiet week looks like a gap, not like the next day.
    at = {b: parse_instant(b + ("T00:00:00Z" if unit == "day" else ":00:00Z")) or 0 for b in buckets}
    t0, span = at[buckets[0]], (at[buckets[-1]] - at[buckets[0]]) or 1
    x_of = {b: left + (plot_w * (at[b] - t0) / span if len(buckets) > 1 else plot_w / 2) for b in buckets}

    def y_of(ms: float) -> float:
        return top_pad + plot_h * (1 - ms / peak)

    parts = [
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{w - 10}" y2="{top_pad + plot_h}" class="chart-axis"></line>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" class="chart-axis"></line>',
        f'<text x="{left - 6}" y="{top_pad + 10}" text-anchor="end" class="chart-label">{round(peak)}</text>',
        f'<text x="{left - 6}" y="{top_pad + plot_h}" text-anchor="end" class="chart-label">0</text>',
    ]
    shown: list[str] = []
    for b in buckets:  # time labels at least 80 px apart, so they never overlap; the last one always
        if shown and x_of[b] - x_of[shown[-1]] < 80:
            if b != buckets[-1]:
                continue
            if len(shown) > 1:
                shown.pop()  # the last one takes the place of its too-close neighbour
        shown.append(b)
    for b in shown:
        anchor = "end" if x_of[b] > w - 50 else "middle"
        parts.append(f'<text x="{x_of[b]:.1f}" y="{h - 14}" text-anchor="{anchor}" class="chart-label">{_e(_label(b, unit))}</text>')
    legend = []
    for n, (verb, per) in enumerate(medians.items()):
        cls = f"series-{n % SERIES}" + (" dashed" if n >= SERIES else "")
        # A line joins only neighbouring days (or hours) with calls: across a span with none it would
        # draw values nobody measured. A lone bucket is its dot.
        for run in _runs([b for b in buckets if b in per], at, _STEP_MS[unit]):
            if len(run) < 2:
                continue
            points = " ".join(f"{x_of[b]:.1f},{y_of(per[b]):.1f}" for b in run)
            parts.append(f'<polyline points="{points}" class="chart-line {cls}"><title>{_e(verb)}</title></polyline>')
        parts += [
            f'<circle cx="{x_of[b]:.1f}" cy="{y_of(per[b]):.1f}" r="3" class="chart-dot {cls}">'
            f"<title>{_e(verb)} {_e(b)}: {round(per[b])} ms</title></circle>"
            for b in buckets if b in per
        ]
        legend.append(f'<li><span class="swatch {cls}" aria-hidden="true"></span>{_e(verb)}</li>')
    said = "; ".join(f"{verb} " + ", ".join(f"{_label(b, unit)} {round(ms)}" for b, ms in per.items()) for verb, per in medians.items())
    rows = "".join(
        f'<tr><th scope="row">{_e(verb)}</th><td>{_e(b)}</td><td>{len(series[verb][b])}</td><td>{round(ms)}</td>'
        f"<td>{round(_p95(series[verb][b]))}</td></tr>"
        for verb, per in medians.items() for b, ms in per.items()
    )
    return (
        f'<figure class="chart chart-lines" id="latency-over-time"><figcaption>{_e(title)}</figcaption>'
        f'<svg role="img" aria-label="{_e(title)}: {_e(said)}" viewBox="0 0 {w} {h}" width="100%" '
        f'preserveAspectRatio="xMinYMin meet">{"".join(parts)}</svg>'
        f'<ul class="legend">{"".join(legend)}</ul>'
        f'<details><summary>the numbers</summary><table><thead><tr><th scope="col">verb</th><th scope="col">{unit}</th>'
        '<th scope="col">calls</th><th scope="col">median ms</th><th scope="col">p95 ms</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></details></figure>"
    )


_STEP_MS = {"day": 86_400_000, "hour": 3_600_000}


def _runs(buckets: list[str], at: dict[str, int], step_ms: int) -> list[list[str]]:
    """`buckets` (in time order) cut wherever the next one is more than one step later."""
    runs: list[list[str]] = []
    for b in buckets:
        if runs and at[b] - at[runs[-1][-1]] <= step_ms:
            runs[-1].append(b)
        else:
            runs.append([b])
    return runs


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
