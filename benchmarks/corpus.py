"""The gate corpus (BENCHMARKS.md §1), seeded in bulk straight into a brain file.

Seeding goes through SQL, not the verbs: 200K pages through put_page would
measure the writer, not the readers. The rows are exactly what the verbs would
have written (same columns, same derived values), and the brain is created by
the real migrations, so every index and trigger the verbs rely on is there.
Seeded brains are cached by size under benchmarks/.cache/ and reused.
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from memverbs.server.brain.sqlite import SqliteBrain
from memverbs.server.brain.sqlite_pages import reverse
from memverbs.server.names import normalize_alias

CACHE = Path(__file__).resolve().parent / ".cache"
SOURCE = "default"
TARGETS = 50


@dataclass(frozen=True)
class Size:
    name: str
    pages: int
    links: int
    aliases: int
    facts: int


SIZES = {
    "smoke": Size("smoke", 300, 1_500, 450, 1_600),
    "20k": Size("20k", 20_000, 100_000, 30_000, 40_000),
    "200k": Size("200k", 200_000, 1_000_000, 300_000, 400_000),
}


def progress(label: str, done: int, total: int, started: float) -> None:
    if not sys.stderr.isatty() and done not in (0, total):
        return
    pct = 100 * done // max(total, 1)
    print(f"\r  seeding {label}: {done:>9,}/{total:,} ({pct:3d}%) {time.monotonic() - started:6.1f}s", end="", file=sys.stderr)
    if done == total:
        print(file=sys.stderr)


def seed(path: Path, size: Size, now_ms: int) -> None:
    """Write the corpus into a fresh brain at `path`."""
    if path.exists():
        path.unlink()
    brain = SqliteBrain.open(path, create=True)
    db = brain.db
    started = time.monotonic()
    db.execute("PRAGMA synchronous = OFF")  # a benchmark corpus, rebuilt on demand
    with brain.write():
        pages = []
        for i in range(TARGETS):
            slug = f"people/target-person-{i}"
            body = f"# Target Person {i}\nRuns area {i} at a-company. Synthetic perf-corpus entity."
            summary = f"Synthetic target {i} for the entity-card latency gate."
            pages.append((SOURCE, slug, reverse(slug), f"Target Person {i}", "person", body,
                          f'{{"title": "Target Person {i}", "type": "person", "summary": "{summary}"}}', summary, now_ms, now_ms))
        for n in range(1, size.pages + 1):
            slug = f"filler/page-{n}"
            pages.append((SOURCE, slug, reverse(slug), f"Filler {n}", "note", "# Filler", "{}", None, now_ms, now_ms))
            if n % 20_000 == 0:
                progress("pages", n, size.pages, started)
        db.executemany(
            "INSERT INTO pages (source_id, slug, slug_rev, title, type, body, frontmatter, summary, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            pages,
        )
        progress("pages", size.pages, size.pages, started)

        per = size.links // size.pages
        links = []
        for n in range(1, size.pages + 1):
            for k in range(1, per + 1):
                to = ((n * 7919 * k) % size.pages) + 1
                if to != n:
                    links.append((SOURCE, f"filler/page-{n}", f"filler/page-{to}", "mentions", "mentions", now_ms))
        for i in range(TARGETS):
            for j in range(40):
                links.append((SOURCE, f"people/target-person-{i}", f"filler/page-{(i * 40 + j) % size.pages + 1}", "works_at", "markdown", now_ms))
        db.executemany(
            "INSERT OR IGNORE INTO links (source_id, from_slug, to_slug, link_type, link_source, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            links,
        )
        progress("links", len(links), len(links), started)

        aliases = [(SOURCE, f"filler/page-{(n % size.pages) + 1}", f"alias noise {n}", f"alias noise {n}") for n in range(size.aliases)]
        for i in range(TARGETS):
            for alias in (f"tp{i}", f"target alias {i}"):
                aliases.append((SOURCE, f"people/target-person-{i}", alias, normalize_alias(alias)))
        db.executemany(
            "INSERT OR IGNORE INTO aliases (source_id, slug, alias, alias_norm, origin) VALUES (?, ?, ?, ?, 'manual')", aliases
        )
        progress("aliases", len(aliases), len(aliases), started)

        facts = []
        noise = size.facts - 1_000
        for n in range(noise):
            text = f"noise fact {n}"
            # Spread recording times over the past 30 days so "recent" arms are realistic.
            at = now_ms - (n * 2_592_000_000) // max(noise, 1) - 86_400_000
            facts.append((SOURCE, text, text, "fact", f"filler/page-{(n % size.pages) + 1}", "world", "bench", at, at))
        for i in range(TARGETS):
            for g in range(1, 21):
                text = f"target fact {g} about person {i}"
                kind = "commitment" if g % 5 == 0 else "fact"
                at = now_ms - (i * 20 + g) * 60_000
                facts.append((SOURCE, text, text, kind, f"people/target-person-{i}", "world", "bench", at, at))
        db.executemany(
            "INSERT INTO facts (source_id, fact, fact_norm, kind, entity_slug, visibility, provenance, valid_from, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            facts,
        )
        progress("facts", len(facts), len(facts), started)
    db.execute("PRAGMA optimize")
    db.execute("ANALYZE")
    brain.close()


def seeded_home(size: Size, now_ms: int, fresh: bool = False) -> Path:
    """A MEMVERBS_HOME holding the seeded brain, cached between runs."""
    home = CACHE / f"home-{size.name}"
    brain = home / "brain.db"
    marker = home / ".seeded"
    if fresh or not marker.exists():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        seed(brain, size, now_ms)
        marker.write_text(str(now_ms))
    return home


def working_copy(size: Size, now_ms: int, dest: Path) -> Path:
    """A private copy of the cached brain for a run that writes (delta moves pages, remember adds facts)."""
    src = seeded_home(size, now_ms)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copy2(src / "brain.db", dest / "brain.db")
    return dest
