"""The Health view's latency-over-time chart: buckets, medians, and numbers said in text."""

from __future__ import annotations

import re
from itertools import pairwise

from memverbs.ui.charts import latency_buckets, latency_over_time


def event(verb: str, ts: str, ms: float) -> dict:
    return {"verb": verb, "ts": ts, "latency_ms": ms, "ok": True}


SPREAD = [
    event("recall", "2026-11-01T10:00:00.000Z", 10), event("recall", "2026-11-01T11:00:00.000Z", 30),
    event("recall", "2026-11-01T12:00:00.000Z", 20), event("recall", "2026-11-05T09:00:00.000Z", 50),
    event("remember", "2026-11-05T09:30:00.000Z", 4), event("remember", "2026-11-09T09:30:00.000Z", 8),
    {"verb": "delta", "ts": "2026-11-09T09:30:00.000Z"},  # no latency: not drawn
]


def test_days_hold_each_verbs_median_and_a_verb_is_drawn_only_where_it_was_called():
    unit, buckets, series = latency_buckets(SPREAD)
    assert unit == "day" and buckets == ["2026-11-01", "2026-11-05", "2026-11-09"]
    assert set(series) == {"recall", "remember"}
    svg = latency_over_time(SPREAD)
    label = re.search(r'<svg role="img" aria-label="([^"]*)"', svg).group(1)
    assert label == "median latency per verb per day (ms): recall 11-01 20, 11-05 50; remember 11-05 4, 11-09 8"
    assert re.findall(r'<polyline points="([^"]*)"', svg) == []  # no two of a verb's days are neighbours: dots only
    assert len(re.findall(r"<circle ", svg)) == 4
    assert "<td>2026-11-01</td><td>3</td><td>20</td><td>30</td>" in svg  # calls, median, p95 in the table


def test_a_young_log_is_bucketed_by_hour_and_an_empty_one_draws_nothing():
    young = [event("recall", "2026-11-30T09:05:00.000Z", 7), event("recall", "2026-11-30T10:05:00.000Z", 9)]
    unit, buckets, _ = latency_buckets(young)
    assert unit == "hour" and buckets == ["2026-11-30T09", "2026-11-30T10"]
    assert "recall 11-30 09h 7, 11-30 10h 9" in latency_over_time(young)
    assert latency_over_time([]) == "" and latency_over_time([{"verb": "recall", "ts": "2026-11-30T09:00:00Z"}]) == ""


def test_a_verbs_buckets_are_in_time_order_whatever_the_log_order():
    late_first = [event("recall", "2026-11-09T09:00:00.000Z", 9), event("recall", "2026-11-01T09:00:00.000Z", 1)]
    assert "recall 11-01 1, 11-09 9" in latency_over_time(late_first)


def test_only_the_newest_buckets_are_kept():
    many = [event("recall", f"2026-10-{d:02d}T08:00:00.000Z", d) for d in range(1, 32)]
    _, buckets, series = latency_buckets(many, limit=30)
    assert buckets[0] == "2026-10-02" and len(buckets) == 30 and len(series["recall"]) == 30


def test_verbs_past_the_palette_are_dashed_not_dropped():
    logs = [event(f"verb{i}", "2026-11-30T09:00:00.000Z", i + 1) for i in range(10)]
    svg = latency_over_time(logs)
    assert svg.count("<circle") == 10 and svg.count("chart-dot series-0 dashed") == 1


def _lines(svg: str) -> list[list[tuple[float, float]]]:
    return [[tuple(map(float, p.split(","))) for p in points.split()] for points in re.findall(r'<polyline points="([^"]*)"', svg)]


def _dots(svg: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([^"]*)" cy="([^"]*)"', svg)]


def test_the_line_breaks_where_a_verb_had_no_calls():
    days = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-06", "2026-11-07", "2026-11-10"]
    logs = [event("recall", f"{d}T09:00:00.000Z", 10 * (i + 1)) for i, d in enumerate(days)]
    logs.append(event("remember", "2026-11-04T09:00:00.000Z", 5))  # another verb's day does not bridge recall's gap
    svg = latency_over_time(logs)
    lines, dots = _lines(svg), _dots(svg)
    assert [len(line) for line in lines] == [3, 2]  # 11-01..03 and 11-06..07; 11-10 alone is a dot; remember one dot
    assert len(dots) == 7
    recall_dots = sorted(dots)[:3] + sorted(dots)[4:6]  # x is time: remember's 11-04 dot sits fourth
    assert lines[0] == recall_dots[:3] and lines[1] == recall_dots[3:5]  # each segment runs through its own dots
    assert max(x for x, _ in lines[0]) < min(x for x, _ in lines[1])  # nothing drawn across 11-04..05
    # the table is unchanged: one row per verb and day with calls, none for the days without
    rows = re.findall(r'<tr><th scope="row">([^<]*)</th><td>([^<]*)</td><td>(\d+)</td><td>(\d+)</td>', svg)
    assert rows == [("recall", d, "1", str(10 * (i + 1))) for i, d in enumerate(days)] + [("remember", "2026-11-04", "1", "5")]


def test_hours_break_the_same_way():
    hours = ["09", "10", "13"]
    svg = latency_over_time([event("recall", f"2026-11-30T{h}:05:00.000Z", 7) for h in hours])
    assert [len(line) for line in _lines(svg)] == [2] and len(_dots(svg)) == 3


def test_time_labels_never_overlap_even_the_last_one():
    """Labels at least 80 px apart: the newest bucket is always labelled, taking its close neighbour's place."""
    days = [event("recall", f"2026-11-{d:02d}T09:00:00.000Z", 10 + d) for d in range(1, 15)]
    xs = [float(x) for x in re.findall(r'<text x="([0-9.]+)" y="206"', latency_over_time(days))]
    assert xs and all(b - a >= 80 for a, b in pairwise(xs))
    assert "11-14</text>" in latency_over_time(days)
