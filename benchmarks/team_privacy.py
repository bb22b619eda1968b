"""A team on one Postgres, tried through every door: what each person can read of another's private
material, and what each can change of another's rows.

    python -m benchmarks.team_privacy            # a throwaway pgserver; writes its RESULTS.md section
    python -m benchmarks.team_privacy --no-write

Three people on one brain — `owner` (the role that owns the tables: a plain CREATEROLE role, not a
superuser), `bob` and `carol`, each added with `memverbs people add NAME --create-role` and each with
a home of their own logged in as their role — on two hosts (owner and bob on host-a, carol on
host-b: `MEMVERBS_HOST`). Each person writes every kind of private material through their own CLI,
each piece carrying a marker of its kind and its writer (`zz<kind><who>q`):

    fact      a private fact                      page     a private page (its text)
    slug      the private page's slug             version  an earlier text of the private page (its history)
    audit     why a private fact was restored     move     why private facts were refiled
    conflict  the brain's side of a sync conflict of a private note
    folder    a synced folder's path              file     a synced note's file name
    failure   a synced file that fails to apply   token    an access token's name
    fence     a [private] row in a world page's text, and in that page's history

Then every read path each person has (`READ_PATHS`: the verbs through their CLI and through a
read:private token of theirs, the CLI's commands, the inspector over loopback HTTP, an export of the
notes, and plain SQL as their role) is searched for the others' markers: a marker found is a leak.
And every write a person could attempt on another's rows (`WRITES`: plain SQL as their role, and
memverbs's own commands) is tried and checked against the victim's rows as a superuser sees them:
one that changed them outside the team's rules is a foreign write. What the team's rules allow — a
teammate rewriting a world page (the text it replaced kept in the page's history) — is reported as
such, not counted.

The plain SQL row for the `fence` material is the documented exception (docs/postgres.md): a world
page's text is one world row, so a SQL session reads its `[private]` rows whole. memverbs cuts them
on every other path.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.team import KINDS, PEOPLE, Team, build, marker, seed
from benchmarks.team_reads import Leaks, leaks, read_inspector
from benchmarks.team_writes import WriteResult, conflict_of, writes

__all__ = ["Team", "build", "conflict_of", "leaks", "marker", "read_inspector", "run", "seed", "writes"]
BEGIN, END = "<!-- team-privacy:begin -->", "<!-- team-privacy:end -->"


def table(found: Leaks, results: list[WriteResult]) -> str:
    pairs = len(PEOPLE) * (len(PEOPLE) - 1)
    head = "| read path | " + " | ".join(KINDS) + " |\n|---|" + "---|" * len(KINDS) + "\n"
    rows = "".join(
        f"| {path} | " + " | ".join(
            str(n) + (f" (+{found.designed[path][kind]} by design)" if found.designed[path][kind] else "")
            for kind, n in counts.items()
        ) + " |\n"
        for path, counts in found.counts.items()
    )
    writes_head = ("| write attempted on another person's rows | attempts | refused | allowed (a team rule) | foreign |\n"
                   "|---|---|---|---|---|\n")
    writes_rows = "".join(f"| {r.name}{' — ' + r.note if r.note else ''} | {r.attempts} | {r.refused} | {r.allowed} | {r.foreign} |\n"
                          for r in results)
    foreign = sum(r.foreign for r in results)
    return (f"Each cell: of the {pairs} (reader, other person) pairs, how many found the other's marker of that kind.\n\n"
            + head + rows + f"\n**Leaks: {found.total}.**\n\n" + writes_head + writes_rows
            + f"\n**Foreign writes: {foreign}** of {sum(r.attempts for r in results)} attempts.\n")


def markdown(text: str) -> str:
    load = os.getloadavg()[0]
    return "\n".join((
        BEGIN,
        "## A team on one Postgres: every door (`python -m benchmarks.team_privacy`)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} (1-minute load {load:.1f}; no timing is measured here). Three people "
        "on one brain — `owner` (a plain `CREATEROLE` role that owns the tables), `bob` and `carol` (added with "
        "`people add --create-role`) — each with a home logged in as their own role, on two hosts (owner and bob on "
        "host-a, carol on host-b). Each writes every kind of private material through their own CLI and synced "
        "folder; then every read path each has is searched for the others' markers, and every write each could "
        "attempt on another's rows is tried and checked against the victim's rows as a superuser reads them. "
        "The module's docstring lists the materials and paths.",
        "",
        text.rstrip("\n"),
        "",
        "By design, and not counted: plain SQL reads a world page's text whole, its `[private]` rows included "
        "(docs/postgres.md, \"One thing a SQL session reads whole\"); the owner's login reads and administers every "
        "access token (its server checks every bearer; `auth create --for`, `auth revoke`). A teammate rewriting "
        "another's world page is a team rule, counted as allowed when the replaced text is in the page's history.",
        END,
    ))


def run(server: object, tmp: Path) -> tuple[Leaks, list[WriteResult]]:
    team = build(server, tmp)
    seed(team)
    return leaks(team), writes(team)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the tables; do not touch RESULTS.md")
    args = parser.parse_args()
    from postgres import _configure, start_pgserver  # noqa: PLC0415

    server = start_pgserver()
    if server is None:
        print("no pgserver wheel on this machine", file=sys.stderr)
        return 1
    try:
        _configure(server)
        with tempfile.TemporaryDirectory() as tmp:
            found, results = run(server, Path(tmp))
    finally:
        server.stop()  # type: ignore[operator]
    text = table(found, results)
    print(text)
    if not args.no_write:
        from benchmarks.results_file import replace_section  # noqa: PLC0415

        replace_section(BEGIN, END, markdown(text))
    for line in found.seen:
        print(line, file=sys.stderr)
    return 1 if found.total or any(r.foreign for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
