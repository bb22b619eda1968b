"""The gate corpus (BENCHMARKS.md §1), grown the way a user grows a brain: through the tools.

Every row comes from a tool call — put_page, add_link, remember — on a brain
`memverbs init` would create; nothing else touches the file (no ANALYZE, no
bulk SQL, no index or statistics step the product never runs itself), so the
benchmarks measure the product, not a brain the benchmark tuned. The same
`grow` feeds any MCP server through its tools (benchmarks/side_by_side.py).

The corpus shape per size: PAGES filler pages, 5 `mentions` links per filler
(add_link), 1.5 noise aliases per filler (frontmatter `aliases:`), 2 facts per
filler less 1,000 (remember), and 50 target people with two aliases, 40
`works_at` links and 20 facts each (every 5th a commitment). Grown brains are
cached by size under benchmarks/.cache/ and reused.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
SOURCE = "default"
TARGETS = 50
LINKS_PER_PAGE = 5

# Bump when the shape or the growth changes: cached brains of another version are regrown.
VERSION = "grown-2"


@dataclass(frozen=True)
class Size:
    name: str
    pages: int
    links: int
    aliases: int
    facts: int
    targets: int = TARGETS  # smoke runs use fewer (8 at least: a pack asks for 8 distinct targets)


def size_of(name: str, pages: int, targets: int = TARGETS) -> Size:
    # FACTS includes the targets' 20 each (BENCHMARKS.md §1); small sizes keep at least as many noise facts as pages.
    return Size(name, pages, pages * LINKS_PER_PAGE, pages * 3 // 2, max(pages * 2, targets * 20 + pages), targets)


SIZES = {
    "smoke": size_of("smoke", 300),
    "1k": size_of("1k", 1_000),
    "20k": size_of("20k", 20_000),
    "40k": size_of("40k", 40_000),  # 40× the 1k brain: the pack's growth target (benchmarks/pack_growth.py)
    "200k": size_of("200k", 200_000),
}

Call = Callable[[str, dict], dict]


def progress(label: str, done: int, total: int, started: float) -> None:
    if not sys.stderr.isatty() and done not in (0, total):
        return
    pct = 100 * done // max(total, 1)
    print(f"\r  growing {label}: {done:>9,}/{total:,} ({pct:3d}%) {time.monotonic() - started:6.1f}s", end="", file=sys.stderr)
    if done == total:
        print(file=sys.stderr)


def _page(title: str, type_: str, body: str, **frontmatter) -> str:
    lines = ["---", f"title: {title}", f"type: {type_}"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in frontmatter.items()]
    return "\n".join([*lines, "---", body, ""])


def target_page(i: int, pages: int) -> str:
    return _page(
        f"Target Person {i}", "person", f"# Target Person {i}\nRuns area {i} at a-company. Synthetic perf-corpus entity.",
        summary=f"Synthetic target {i} for the entity-card latency gate.",
        aliases=[f"tp{i}", f"target alias {i}"],
        links={"works_at": [f"filler/page-{(i * 40 + j) % pages + 1}" for j in range(40)]},
    )


def filler_aliases(n: int, size: Size) -> list[str]:
    """The noise aliases `alias noise {m}` that point at filler n: m ≡ n−1 (mod PAGES)."""
    return [f"alias noise {m}" for m in range(n - 1, size.aliases, size.pages)]


def grow(call: Call, size: Size, *, every: int = 5_000) -> dict:
    """Grow the corpus through `call(tool, arguments)`; returns how many calls of each tool it made."""
    counts = {"put_page": 0, "add_link": 0, "remember": 0}
    started = time.monotonic()

    def do(tool: str, args: dict) -> None:
        body = call(tool, args)
        if tool == "remember" and body.get("status") != "inserted":
            raise RuntimeError(f"remember did not insert: {body}")
        counts[tool] += 1

    for n in range(1, size.pages + 1):
        aliases = filler_aliases(n, size)
        content = _page(f"Filler {n}", "note", "# Filler", **({"aliases": aliases} if aliases else {}))
        do("put_page", {"slug": f"filler/page-{n}", "content": content})
        if n % every == 0:
            progress("pages", n, size.pages, started)
    for i in range(size.targets):
        do("put_page", {"slug": f"people/target-person-{i}", "content": target_page(i, size.pages)})
    progress("pages", size.pages, size.pages, started)

    for n in range(1, size.pages + 1):
        for k in range(1, LINKS_PER_PAGE + 1):
            to = ((n * 7919 * k) % size.pages) + 1
            if to != n:
                do("add_link", {"from": f"filler/page-{n}", "to": f"filler/page-{to}", "link_type": "mentions",
                                "link_source": "mentions"})
        if n % every == 0:
            progress("links", n, size.pages, started)
    progress("links", size.pages, size.pages, started)

    noise = size.facts - size.targets * 20
    for n in range(noise):
        do("remember", {"fact": f"noise fact {n}", "entity": f"filler/page-{(n % size.pages) + 1}", "provenance": "bench"})
        if n % every == 0:
            progress("facts", n, size.facts, started)
    for i in range(size.targets):
        for g in range(1, 21):
            do("remember", {"fact": f"target fact {g} about person {i}", "entity": f"people/target-person-{i}",
                            "provenance": "bench", "kind": "commitment" if g % 5 == 0 else "fact"})
    progress("facts", size.facts, size.facts, started)
    return counts


def in_process(home: Path) -> tuple[Call, Callable[[], None]]:
    """A `call` through memverbs's own dispatcher (the trusted local caller, as the CLI is)."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(home))

    dispatcher = runtime.local_dispatcher()

    def call(tool: str, args: dict) -> dict:
        outcome = dispatcher.call(tool, args)
        if outcome.is_error:
            raise RuntimeError(f"{tool} failed while growing the corpus: {outcome.body}")
        return outcome.body

    return call, runtime.close


def init_home(home: Path) -> None:
    """What `memverbs init` leaves: a home with an empty, migrated brain."""
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    home.mkdir(parents=True, exist_ok=True)
    runtime = Runtime(Home(home))
    runtime.create_brain()
    runtime.close()


def grow_home(home: Path, size: Size) -> dict:
    """A fresh home at `home` with the corpus grown into it through memverbs's tools."""
    shutil.rmtree(home, ignore_errors=True)
    init_home(home)
    call, close = in_process(home)
    started = time.monotonic()
    try:
        counts = grow(call, size)
    finally:
        close()
    return {"calls": counts, "seconds": round(time.monotonic() - started, 1)}


def grown_home(size: Size, fresh: bool = False) -> Path:
    """A MEMVERBS_HOME holding the grown brain, cached between runs."""
    home = CACHE / f"home-{size.name}"
    marker = home / ".grown"
    try:
        cached = json.loads(marker.read_text())["version"] == VERSION
    except (FileNotFoundError, ValueError, KeyError):
        cached = False
    if fresh or not cached:
        print(f"  growing the {size.name} corpus through the tools (cached for later runs)", file=sys.stderr)
        info = grow_home(home, size)
        marker.write_text(json.dumps({"version": VERSION, **info}))
        settle()
    return home


def settle() -> None:
    """Wait until a corpus grown just now is older than delta's in-flight window.

    A session that starts within that window of a write gets the write delivered by its heartbeats
    (at least once, by design), so a hook benchmark started right after growing found a backlog of
    the whole corpus behind its session cursor: its "unchanged" heartbeats each delivered a batch.
    """
    from memverbs.server.verbs.delta import IN_FLIGHT_LAG_MS  # noqa: PLC0415

    time.sleep(IN_FLIGHT_LAG_MS / 1000 + 0.5)


def growth_info(size: Size) -> dict:
    try:
        return json.loads((CACHE / f"home-{size.name}" / ".grown").read_text())
    except (FileNotFoundError, ValueError):
        return {}


def working_copy(size: Size, dest: Path) -> Path:
    """A private copy of the cached home for a run that writes (delta moves pages, remember adds facts)."""
    src = grown_home(size)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".grown"))
    return dest
