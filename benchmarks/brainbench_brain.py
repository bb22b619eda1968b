"""A fixture's brain: a fresh MEMVERBS_HOME seeded through memverbs's own page ops, a decoy source beside
it, and what capture stored there afterwards.

* Seeding: `put_page` (and `remember` for seed facts) through the dispatcher as the trusted local
  caller of each page's source — the same call `memverbs put-page` makes.
* The decoy source (`brainbench-decoy`): for every seeded page, a twin under the same slug and a page of
  its own under `decoy/…`, both with the original's title, type and aliases but a summary and body that
  carry a canary. A hook that reads another source than its own names the `decoy/…` slug or repeats the
  canary; either counts as a cross-source injection.
* After a session, the facts are read straight from the SQLite file, read-only, with the columns the
  write-back score needs.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from pathlib import Path

from benchmarks.brainbench_data import Fixture, Page
from benchmarks.brainbench_score import StoredFact

DECOY_SOURCE = "brainbench-decoy"
DECOY_PREFIX = "decoy/"
_FRONT = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.DOTALL)


class SeedError(Exception):
    pass


def canary(slug: str) -> str:
    return "bbdecoy" + hashlib.sha1(slug.encode()).hexdigest()[:10]


def decoy_pages(page: Page) -> list[tuple[str, str]]:
    """The decoy twin (same slug) and the decoy's own page (`decoy/<last segment>`) for one seed page."""
    found = _FRONT.match(page.content)
    keep = []
    if found:
        for line in found.group(1).splitlines():
            if re.match(r"(title|type|aliases)\s*:", line):
                keep.append(line)
    front = "\n".join(keep)
    out = []
    for slug in (page.slug, DECOY_PREFIX + page.slug.rsplit("/", 1)[-1]):
        mark = canary(slug)
        summary = f"summary: Decoy page of source {DECOY_SOURCE} ({mark})."
        body = f"This page lives in the {DECOY_SOURCE} source only ({mark}). No other source may show it."
        out.append((slug, f"---\n{front}\n{summary}\n---\n\n{body}\n" if front else f"---\n{summary}\n---\n\n{body}\n"))
    return out


def summary_of(content: str) -> str | None:
    found = _FRONT.match(content)
    if not found:
        return None
    for line in found.group(1).splitlines():
        m = re.match(r"summary\s*:\s*(.+)$", line)
        if m:
            return m.group(1).strip().strip("'\"")
    return None


class ForeignIndex:
    """What another source holds, for telling a cross-source injection from a right one."""

    def __init__(self, fixtures: list[Fixture], active: str) -> None:
        own = {p.slug for f in fixtures for p in f.pages if f.page_source(p) == active}
        own_summaries = {summary_of(p.content) for f in fixtures for p in f.pages if f.page_source(p) == active}
        self.slugs: set[str] = set()  # slugs only another source has
        self.canaries: dict[str, str] = {}  # canary → the decoy slug it marks
        self.summaries: dict[str, str] = {}  # another source's page summary → its slug
        self.known: set[str] = set(own)
        for f in fixtures:
            for p in f.pages:
                for slug, _ in decoy_pages(p):
                    self.canaries[canary(slug)] = f"{DECOY_SOURCE}:{slug}"
                    self.known.add(slug)
                    if slug not in own:
                        self.slugs.add(slug)
                if f.page_source(p) != active:
                    self.known.add(p.slug)
                    if p.slug not in own:
                        self.slugs.add(p.slug)
                    summary = summary_of(p.content)
                    if summary and len(summary) >= 12 and summary not in own_summaries:
                        self.summaries[summary] = f"{f.page_source(p)}:{p.slug}"

    def leaks(self, text: str, pointed: list[str]) -> list[str]:
        found = [s for s in pointed if s in self.slugs]
        found += [slug for mark, slug in self.canaries.items() if mark in text]
        found += [slug for summary, slug in self.summaries.items() if summary in text]
        return sorted(set(found))


def seed(home: Path, fixtures: list[Fixture], active: str) -> dict:
    """A fresh home at `home` (as `memverbs init` leaves it) holding the fixtures' seed pages and facts,
    each in its source, and the decoy source. Returns what was written."""
    from memverbs.server.dispatch import Dispatcher  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    home.mkdir(parents=True, exist_ok=True)
    runtime = Runtime(Home(home))
    written = {"pages": 0, "facts": 0, "decoy_pages": 0}
    try:
        runtime.create_brain()
        callers: dict[str, Dispatcher] = {}

        def call(source: str, tool: str, params: dict) -> dict:
            if source not in callers:
                callers[source] = Dispatcher.local(source, runtime.brain, "full", providers=runtime.providers)
            outcome = callers[source].call(tool, params)
            if outcome.is_error:
                raise SeedError(f"{tool} {params.get('slug') or params.get('fact', '')[:40]!r} in {source}: {json.dumps(outcome.body)[:300]}")
            return outcome.body

        for f in fixtures:
            for p in f.pages:
                call(f.page_source(p), "put_page", {"slug": p.slug, "content": p.content})
                written["pages"] += 1
            for fact in f.seed_facts:
                params = {"fact": fact.fact, "provenance": fact.provenance or "brainbench seed"}
                if fact.entity_slug:
                    params["entity"] = fact.entity_slug
                call(f.fact_source(fact), "remember", params)
                written["facts"] += 1
        for f in fixtures:
            for p in f.pages:
                for slug, content in decoy_pages(p):
                    call(DECOY_SOURCE, "put_page", {"slug": slug, "content": content})
                    written["decoy_pages"] += 1
    finally:
        runtime.close()
    return written


def read_facts(home: Path) -> list[tuple[int, StoredFact]]:
    db = home / "brain.db"
    if not db.exists():
        return []
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT id, source_id, fact, kind, entity_slug, provenance, expired_at FROM facts ORDER BY id").fetchall()
    finally:
        conn.close()
    return [(r[0], StoredFact(r[0], r[1], r[2], r[3], r[4], r[5], r[6] is None)) for r in rows]


def last_fact_id(home: Path) -> int:
    facts = read_facts(home)
    return facts[-1][0] if facts else 0


def wait_for_capture(home: Path, harness: str, session_id: str, timeout_s: float = 180.0) -> dict:
    """The capture worker's log line for this session (the hook forks it and returns at once), or why there is none."""
    hooks_log, capture_log = home / "logs" / "hooks.jsonl", home / "logs" / "capture.jsonl"
    deadline = time.monotonic() + timeout_s
    hook_code = None
    while time.monotonic() < deadline:
        if hook_code is None:
            for line in _lines(hooks_log):
                if line.get("moment") == "capture" and line.get("harness") == harness:
                    hook_code = line.get("code")
            if hook_code is not None and hook_code != "spawned":
                return {"code": f"hook_{hook_code}", "counts": {}}
        for line in _lines(capture_log):
            if line.get("harness") == harness and line.get("session") == session_id[:8]:
                return {"code": line.get("code"), "counts": line.get("counts") or {}, "ms": line.get("ms")}
        time.sleep(0.2)
    return {"code": "timeout" if hook_code == "spawned" else "no_capture_hook", "counts": {}}


def hook_codes(home: Path) -> dict[tuple[str, str, str], int]:
    """(harness, moment, code) → runs, from the home's hooks log: what each hook decided (`deadline`:
    it ran out of time and printed nothing — on a loaded machine, a turn the product lost to the load)."""
    counts: dict[tuple[str, str, str], int] = {}
    for line in _lines(home / "logs" / "hooks.jsonl"):
        key = (str(line.get("harness")), str(line.get("moment")), str(line.get("code")))
        counts[key] = counts.get(key, 0) + 1
    return counts


def _lines(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for raw in text.splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out
