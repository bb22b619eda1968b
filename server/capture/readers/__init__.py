"""One reader per harness: its entries in, events out (transcript.py's shapes), authorship decided.

Each reader is a generator over a Transcript: it reads from `t.start`, fills in what the entries
say about the session (id, working directory, start time), yields events, counts what it cannot
read in `t.skipped`, and moves `t.resume_at` past each entry after which it holds nothing
half-read (no tool call waiting for its result, no message half-streamed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from memverbs.server.capture.authorship import split_turn
from memverbs.server.capture.transcript import Event, Pending, Said, Transcript, guarded


def read_entries(t: Transcript, source: Iterable[tuple[dict | None, int]], handle: Callable[[dict], Iterator[Event]],
                 pending: Pending, busy: Callable[[], bool] = lambda: False) -> Iterator[Event]:
    """Each entry of `source` (`(entry, position after it)`) through `handle`, a bad one skipped and
    counted; the resume point moved past each entry after which nothing is half-read (no call in
    `pending`, and not `busy`)."""
    for entry, position in source:
        yield from guarded(t, handle, entry)
        if not pending and not busy():
            t.resume_at = position
    t.settled = not pending and not busy()


def user_turn(text: str, at: str | None) -> Iterator[Said]:
    """A user-role entry's text as events: the harness's pieces first (labelled), then the user's own words."""
    turn = split_turn(text)
    for label, piece in turn.harness:
        yield Said("harness", piece, at, label)
    if turn.own:
        yield Said("user", turn.own, at)
