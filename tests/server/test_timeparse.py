"""Instants in and out: the JS Date.toISOString() form, and lenient input."""

import pytest

from memverbs.server.errors import VerbError
from memverbs.server.timeparse import iso, parse_instant, parse_since
from memverbs.server.verbs.ttl import parse_ttl

NOW = parse_instant("2026-08-11T12:00:00Z")


def test_iso_has_milliseconds_and_z():
    assert iso(0) == "1970-01-01T00:00:00.000Z"
    assert iso(parse_instant("2026-08-11T12:34:56.789+02:00")) == "2026-08-11T10:34:56.789Z"


@pytest.mark.parametrize(
    "text",
    ["2026-08-11", "2026-08-11T00:00:00Z", "2026-08-11T00:00Z", "2026-08-11 00:00:00", "Tue, 11 Aug 2026 00:00:00 GMT", "August 11, 2026 00:00:00 GMT"],
)
def test_lenient_absolute_forms(text):
    assert iso(parse_instant(text)) == "2026-08-11T00:00:00.000Z"


@pytest.mark.parametrize("text", ["", "yesterday-ish", "2026-13-01", "not a date", "30d"])
def test_unparseable(text):
    assert parse_instant(text) is None


@pytest.mark.parametrize(
    "text",
    ["9999-12-31T23:59-23:59", "0001-01-01T00:00+23:59", "Fri, 31 Dec 9999 23:59:59 -2359", "10000-01-01", "+010000-01-01"],
)
def test_an_instant_past_the_years_1_to_9999_does_not_parse(text):
    assert parse_instant(text) is None  # was OverflowError out of the datetime arithmetic


@pytest.mark.parametrize("text", ["99999999999d", "99999999999999999999d ago", "999999999999999 hours"])
def test_a_since_before_the_year_1_does_not_parse(text):
    assert parse_since(text, NOW) is None  # was a number too large for any store


def test_relative_since():
    assert parse_since("2 hours ago", NOW) == NOW - 2 * 3600_000
    assert parse_since("30m", NOW) == NOW - 30 * 60_000
    assert parse_since("1 day", NOW) == NOW - 86_400_000
    assert parse_since("3 weeks ago", NOW) is None


def test_ttl_forms():
    assert parse_ttl(None, NOW) is None
    assert parse_ttl("  ", NOW) is None
    assert parse_ttl("30d", NOW) == NOW + 30 * 86_400_000
    assert parse_ttl("30 days", NOW) == NOW + 30 * 86_400_000
    assert parse_ttl("12h", NOW) == NOW + 12 * 3600_000
    assert parse_ttl("2027-01-01T00:00:00Z", NOW) == parse_instant("2027-01-01T00:00:00Z")


def test_ttl_rejects_iso_durations_with_the_shorthand():
    with pytest.raises(VerbError) as exc:
        parse_ttl("P30D", NOW)
    assert exc.value.code == "invalid_params"
    assert exc.value.message == 'ttl "P30D" looks like an ISO-8601 duration, which is not accepted.'
    assert '"30d"' in exc.value.suggestion
    with pytest.raises(VerbError) as exc:
        parse_ttl("PT12H", NOW)
    assert '"12h"' in exc.value.suggestion


def test_ttl_rejects_garbage_and_ago():
    for bad in ("soon", "30 days ago"):
        with pytest.raises(VerbError) as exc:
            parse_ttl(bad, NOW)
        assert exc.value.message == f'Cannot parse ttl "{bad}".'
        assert exc.value.suggestion
