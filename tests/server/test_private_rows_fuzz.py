"""Property: random pages with random private facts-fence rows never leak them to an untrusted reader.

Each example writes a few pages (world or private) whose facts fences hold random rows: world
rows, and private rows (`- [private]` in any case, any bullet) with continuation lines, `[[links]]`
and markdown links to existing or missing pages, and dated lines that become timeline entries
when the fence sits under a Timeline heading; newlines are LF or CRLF. Every line of a private
row carries a token (`privtok…`), and a private page's prose another (`pagetok…`). Then every
read tool is called as an untrusted caller, with `search.remote_private_pages` off and on, and an
untrusted write-back of what it read is tried. Asserted, independently of the parser (the
generator knows which links it wrote in world text):

* no private-row token appears in any reply (no private-page token either, unless opened);
* a linked page's backlink count and in-edges are exactly the world text's links to it;
* no reply is `internal`, and an untrusted write-back loses no private row for the owner.

`python -m benchmarks.privacy_fuzz` runs it long and records the figures in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Callable

import pytest
from helpers import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.errors import ERROR_CODES

EXAMPLES = int(os.environ.get("MEMVERBS_PRIVACY_FUZZ_EXAMPLES", "12"))
TARGETS = 3
WORDS = ["apple", "zebra", "orbit", "lantern", "quartz", "meadow"]
Reader = Callable[[str, dict], tuple[dict, bool]]


class Tally:
    def __init__(self) -> None:
        self.examples = 0
        self.calls = 0
        self.outcomes: Counter = Counter()
        self.leaks: list[str] = []

    def reply(self, body: dict, is_error: bool, *, forbidden: tuple[str, ...], what: str) -> None:
        self.calls += 1
        code = body.get("error", "?") if is_error else "ok"
        assert code == "ok" or (code in ERROR_CODES and code != "internal"), (what, body)
        self.outcomes[code] += 1
        text = json.dumps(body).lower()
        for token in forbidden:
            if token in text:
                self.leaks.append(f"{what}: {token}")
        assert not self.leaks, self.leaks


_counter = itertools.count()


@st.composite
def page_set(draw, prefix: str):
    """{slug: (markdown, visibility)}, the world links to each target, and every private-row token."""
    pages: dict[str, tuple[str, str]] = {}
    world_links: dict[str, set[str]] = {f"{prefix}/t{k}": set() for k in range(TARGETS)}
    tokens: list[str] = []
    page_tokens: list[str] = []
    for i in range(draw(st.integers(1, 3))):
        slug = f"{prefix}/p{i}"
        visibility = draw(st.sampled_from(["world", "world", "private"]))
        nl = draw(st.sampled_from(["\n", "\r\n"]))
        word = lambda: draw(st.sampled_from(WORDS))  # noqa: E731
        lines = [f"# Page {i}", f"Prose about {word()} and {word()}."]
        if visibility == "private":
            page_tokens.append(f"pagetok{prefix.replace('/', '')}p{i}")
            lines.append(f"Private page prose {page_tokens[-1]}.")
        under_timeline = draw(st.booleans())
        if under_timeline:
            lines += ["## Timeline", f"- 2026-0{draw(st.integers(1, 9))}-1{draw(st.integers(0, 9))}: world {word()} event"]
        lines.append("<!-- facts -->")
        for kind in draw(st.lists(st.sampled_from(["world", "private", "private"]), min_size=1, max_size=5)):
            target = f"{prefix}/t{draw(st.integers(0, TARGETS - 1))}"
            if kind == "world":
                linked = draw(st.booleans())
                lines.append(f"- world row {word()}" + (f" with [[{target}]]" if linked else ""))
                if linked and visibility == "world":
                    world_links[target].add(slug)
                continue
            tok = f"privtok{next(_counter)}"
            tokens.append(tok)
            marker = draw(st.sampled_from(["[private]", "[Private]", "[PRIVATE]"]))
            bullet = draw(st.sampled_from(["-", "*", "+"]))
            link = draw(st.sampled_from(["", f" [[{target}]]", f" [[hush/{tok}]]", f" [{tok}](hush/{tok}.md)", f" [[{target}|{tok}]]"]))
            lines.append(f"{bullet} {marker} {tok} {word()}{link}")
            for _ in range(draw(st.integers(0, 2))):
                lines.append(draw(st.sampled_from([
                    f"  - 2026-05-0{draw(st.integers(1, 9))}: {tok} dated {word()}",
                    f"  {tok} more about [[{target}]]",
                    f"    {tok} deeper {word()}",
                ])))
        lines.append("<!-- /facts -->")
        if draw(st.booleans()):
            lines.append(f"After the fence: {word()}.")
        head = f"---{nl}visibility: {visibility}{nl}---{nl}"
        pages[slug] = (head + nl.join(lines) + nl, visibility)
    return pages, world_links, tokens, page_tokens


def reads(pages: dict, targets: list[str]) -> list[tuple[str, dict]]:
    slugs = list(pages)
    everything = ",".join(slugs + targets)
    out: list[tuple[str, dict]] = [
        ("list_pages", {"limit": 500}),
        ("whoami", {}),
        ("recall", {}),
        ("context_pack", {"entities": everything, "include_private": True}),
        ("delta", {"since": "1970-01-01T00:00:00Z", "entities": everything, "include_private": True}),
        ("synthesize", {"question": "What do the notes say about zebra?"}),
    ]
    for slug in slugs + targets:
        out += [("get_page", {"slug": slug}), ("entity", {"name": slug}), ("recall", {"entity": slug})]
    for query in ["privtok", "world row", "zebra apple", "orbit lantern quartz", "dated", "deeper meadow", "hush", "more about"]:
        out += [("search", {"query": query, "limit": 50}), ("recall", {"query": query, "limit": 50})]
    return out


def check_example(local: Client, readers: dict[str, Reader], generated, tally: Tally) -> None:
    pages, world_links, tokens, page_tokens = generated
    tally.examples += 1
    for slug in world_links:
        local.ok("put_page", slug=slug, content=f"# Target {slug.rsplit('/', 1)[-1]}\n")
    for slug, (content, _) in pages.items():
        local.ok("put_page", slug=slug, content=content)
    targets = list(world_links)
    for name, read in readers.items():
        opened = name.endswith("opened")
        forbidden = tuple(tokens) + (() if opened else tuple(page_tokens))
        for tool, params in reads(pages, targets):
            body, is_error = read(tool, params)
            tally.reply(body, is_error, forbidden=forbidden, what=f"{name} {tool} {params}")
        for target, froms in world_links.items():
            body, is_error = read("entity", {"name": target})
            card = body["card"]
            visible = {s for s in froms if opened or pages[s][1] == "world"}
            if opened:  # a private page's world-view links count for a reader that may see it
                visible |= {s for s, (c, v) in pages.items() if v == "private" and f"[[{target}]]" in _world_text(c)}
            assert card["backlink_count"] == len(visible), (name, target, card, visible)
            assert {e["slug"] for e in card["edges"] if e["direction"] == "in"} == visible, (name, target, card)
    # An untrusted write-back of what it read: the owner keeps every private row, the world view stays sealed.
    write = readers.get("stdio") or readers["dispatcher"]
    for slug, (_, visibility) in pages.items():
        if visibility != "world":
            continue
        seen, _ = write("get_page", {"slug": slug})
        body, is_error = write("put_page", {"slug": slug, "content": seen["body"] + "\nAn untrusted edit.\n"})
        tally.reply(body, is_error, forbidden=tuple(tokens), what=f"write-back {slug}")
        owner = local.ok("get_page", slug=slug)["body"]
        assert all(tok in owner for tok in tokens if tok in pages[slug][0]), (slug, owner)
        again, _ = write("get_page", {"slug": slug})
        tally.reply(again, False, forbidden=tuple(tokens), what=f"after write-back {slug}")


def _world_text(content: str) -> str:
    """The generator's own idea of a page's world text: every line that carries no private-row token."""
    return "\n".join(line for line in content.splitlines() if "privtok" not in line)


def dispatcher_reader(client: Client) -> Reader:
    return lambda tool, params: client(tool, **params)


@pytest.fixture
def readers(runtime, monkeypatch) -> dict[str, Reader]:
    closed = Client(runtime.mcp_dispatcher("full"))
    monkeypatch.setenv("MEMVERBS_REMOTE_PRIVATE_PAGES", "1")
    opened = Client(runtime.mcp_dispatcher("full"))
    monkeypatch.delenv("MEMVERBS_REMOTE_PRIVATE_PAGES")
    return {"dispatcher": dispatcher_reader(closed), "dispatcher opened": dispatcher_reader(opened)}


def fuzz_dispatcher(local: Client, readers: dict[str, Reader], examples: int) -> Tally:
    tally = Tally()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data):
        check_example(local, readers, data.draw(page_set(f"ex{next(_counter)}")), tally)

    one()
    return tally


def test_no_private_row_reaches_an_untrusted_reader(local, readers):
    tally = fuzz_dispatcher(local, readers, EXAMPLES)
    assert tally.examples >= 1 and tally.leaks == [] and "internal" not in tally.outcomes


def stdio_reader(peer) -> Reader:
    def read(tool: str, params: dict) -> tuple[dict, bool]:
        result = peer.call(tool, params)
        return json.loads(result["content"][0]["text"]), bool(result.get("isError"))

    return read


def fuzz_stdio(memverbs_cmd: list[str], env: dict, local: Client, examples: int) -> Tally:
    from rawmcp import RawMcp

    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "full"], env)
    peer.handshake()
    try:
        readers = {"stdio": stdio_reader(peer)}
        tally = Tally()

        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.data())
        def one(data):
            check_example(local, readers, data.draw(page_set(f"io{next(_counter)}")), tally)

        one()
    finally:
        peer.close()
    return tally


@pytest.mark.sqlite_only
def test_no_private_row_reaches_a_real_stdio_client(memverbs_cmd, env, local):
    tally = fuzz_stdio(memverbs_cmd, env, local, max(2, EXAMPLES // 4))
    assert tally.examples >= 1 and tally.leaks == [] and "internal" not in tally.outcomes
