"""`memverbs ui` without a browser: the bind rule, page rendering safety, the visibility rewrite."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from memverbs.server.pages.markdown import declared_visibility, split_frontmatter
from memverbs.ui import markdown
from memverbs.ui.app import with_visibility
from memverbs.ui.links import Link, web_link
from memverbs.ui.server import BindRefused, check_bind, is_loopback


def test_loopback_addresses_are_recognised():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.5.6.7", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com", ""))


def test_a_non_loopback_bind_is_refused_unless_asked():
    for host in ("0.0.0.0", "::", "10.0.0.1"):
        try:
            check_bind(host, allow_remote=False)
        except BindRefused as exc:
            assert "--allow-non-loopback" in exc.fix
        else:
            raise AssertionError(f"{host} was allowed")
        check_bind(host, allow_remote=True)


def test_the_cli_refuses_a_non_loopback_host_with_a_fix(memverbs_cmd, env):
    done = subprocess.run([*memverbs_cmd, "ui", "--no-open", "--host", "0.0.0.0"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert "refusing to serve the inspector on 0.0.0.0" in done.stderr and "fix:" in done.stderr
    assert "Traceback" not in done.stderr


class _EveryLinkAPage:
    """Links that resolve every target to a page named by it (hostile names included): the href path."""

    def wiki(self, target, *, embed=False):
        return Link(markdown.page_href(target), "page", target)

    def markdown(self, url, *, image=False):
        return web_link(url, image=image) or Link(markdown.page_href(url), "page", url)


def test_wikilinks_fences_and_private_rows_render():
    html = markdown.render("# T\n\nSee [[people/bob-example|Bob]].\n\n<!-- facts -->\n- [private] secret\n- open\n<!-- /facts -->\n",
                           _EveryLinkAPage())
    assert '<a class="wikilink page" href="/page/people/bob-example" title="people/bob-example">Bob</a>' in html
    assert 'class="fence fence-facts"' in html and '<li class="private"><span class="badge badge-private">private</span> secret</li>' in html
    # Without a page to resolve them against, a wikilink is its label, never a guessed address.
    assert '<span class="wikilink">Bob</span>' in markdown.render("See [[people/bob-example|Bob]].")


def test_numbered_lists_and_task_lists():
    html = markdown.render("1. one\n2. two\n\n3) three\n- [x] done\n- loose\n")
    assert '<ol start="1"><li>one</li><li>two</li></ol>' in html and '<ol start="3"><li>three</li></ol>' in html
    assert '<ul><li class="task task-done">' in html and "<li>loose</li></ul>" in html


_ALLOWED = {"p", "ul", "ol", "li", "a", "code", "pre", "strong", "em", "h2", "h3", "h4", "h5", "h6", "section", "span"}


_PIECES = [*list("<>\"'&[]()|#*`-/:!= \nabcjsvcript"), "javascript:", "<script>", "[[", "]]", "](", "<!-- facts -->", "<!-- /facts -->", "onerror=", "- [private] ", "```\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))
def test_no_page_can_inject_markup(text):
    """Whatever a page holds, the inspector's HTML has only its own tags and attributes, and no script links."""
    for links in (None, _EveryLinkAPage()):
        seen = _Tags()
        seen.feed(markdown.render(text, links))
        seen.close()
        assert seen.tags <= _ALLOWED
        assert seen.attrs <= {"class", "href", "aria-label", "title", "rel", "start", "aria-hidden"}
        assert not any(h.strip().lower().startswith(("javascript", "data", "vbscript")) for h in seen.hrefs)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.add(name)
            if name == "href":
                self.hrefs.append(value or "")


@given(st.sampled_from(["", "---\ntype: person\n---\n", "---\nvisibility: world\ntype: x\n---\n", "---\r\nVisibility: Private\r\n---\r\n"]),
       st.text(max_size=60).filter(lambda t: not t.startswith("---")),
       st.sampled_from(["world", "private"]))
def test_the_visibility_rewrite_sets_exactly_the_visibility(head, body, visibility):
    out = with_visibility(head + body, visibility)
    fm, _rest = split_frontmatter(out)
    assert declared_visibility(fm) == visibility
    assert out.endswith(body)


def test_the_entity_window_pages_through_every_entity(runtime, local):
    """Paged in SQL, the windows add up to `memverbs entities` (by slug), counts and all."""
    from memverbs.server.timeparse import now_ms

    for i in range(7):
        local.ok("remember", fact=f"fact {i}", entity=f"people/p{i % 4}", provenance="t",
                 visibility="private" if i % 3 == 0 else "world")
    for slug in ("people/p1", "projects/alpha", "topics/zeta"):
        local.ok("put_page", slug=slug, content=f"# Title of {slug}\n\nbody\n")
    gone = local.ok("remember", fact="gone soon", entity="topics/zeta", provenance="t")
    local.ok("forget", id=gone["id"], reason="test")
    brain, now = runtime.brain(), now_ms()
    everything = {r["slug"]: dict(r) for r in brain.entities(runtime.source, now)}
    seen: list[dict] = []
    for offset in range(0, 20, 3):
        total, rows = brain.entity_window(runtime.source, now, offset=offset, limit=3)
        assert total == len(everything)
        seen += [dict(r) for r in rows]
    assert [r["slug"] for r in seen] == sorted(everything)
    for r in seen:
        want = everything[r["slug"]]
        assert {k: r[k] for k in ("has_page", "facts", "active", "private", "title")} == {
            k: want[k] for k in ("has_page", "facts", "active", "private", "title")}
    total, rows = brain.entity_window(runtime.source, now, search="TITLE OF PROJ")
    assert total == 1 and rows[0]["slug"] == "projects/alpha"


def test_the_change_feed_is_the_newest_changes_by_their_latest_moment(runtime, local):
    """Read moment by moment, the feed equals sorting every fact by its latest change: remembered,
    expired, restored or visibility changed."""
    ids = [local.ok("remember", fact=f"feed fact {i}", entity=f"people/f{i % 3}", provenance="t")["id"] for i in range(12)]
    for fid in (ids[0], ids[4], ids[5]):
        local.ok("forget", id=fid, reason="test")
    brain = runtime.brain()
    import time

    from memverbs.server.timeparse import now_ms

    time.sleep(0.005)  # each edit in a later millisecond than the last forget, so the order is known
    brain.restore_fact(runtime.source, int(ids[4]), reason="test", actor="test", now=now_ms())
    time.sleep(0.005)
    brain.set_fact_visibility(runtime.source, int(ids[2]), "private", widen=False, reason="test", actor="test", now=now_ms())
    every = brain.fact_changes(runtime.source, 0, limit=1000)
    assert len(every) == 12

    def latest(r) -> int:
        edits = [a["at"] for a in brain.fact_trail(r["id"])["audit"]]
        return max(r["created_at"], r["expired_at"] or 0, *edits)

    assert all(r["changed_at"] == latest(r) for r in every)
    naive = sorted(every, key=lambda r: (latest(r), r["id"]), reverse=True)
    assert [r["id"] for r in naive[:2]] == [int(ids[2]), int(ids[4])]  # the edits are the newest changes
    for limit in (1, 2, 3, 5, 8, 12):
        assert [r["id"] for r in brain.fact_changes(runtime.source, 0, limit=limit)] == [r["id"] for r in naive[:limit]]
    cut = naive[3]["changed_at"]
    assert {r["id"] for r in brain.fact_changes(runtime.source, cut)} == {r["id"] for r in naive if r["changed_at"] >= cut}
    assert {r["id"] for r in brain.fact_changes(runtime.source, 0, entity="people/f1")} == {
        r["id"] for r in naive if r["entity_slug"] == "people/f1"}


def test_the_colours_keep_text_contrast_in_both_schemes():
    """WCAG AA (4.5:1) for text on the page background, the private badge, and button labels."""
    from importlib import resources

    css = resources.files("memverbs.ui").joinpath("static", "ui.css").read_text()
    blocks = re.findall(r":root[^{]*\{([^}]*)\}", css)
    schemes = [dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-f]{6})", block)) for block in blocks]
    # light; dark under prefers-color-scheme (unless the toggle chose light); dark chosen with the toggle
    assert len(schemes) == 3
    assert schemes[1] == schemes[2] and schemes[0] != schemes[1]  # the toggle's dark is the system's dark

    def lum(h: str) -> float:
        c = [int(h[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    def ratio(a: str, b: str) -> float:
        hi, lo = sorted((lum(a), lum(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    for v in schemes:
        for name in ("fg", "muted", "accent", "private", "bad", "good"):
            for ground in ("bg", "surface"):  # the page, and the panels and rows on it
                assert ratio(v[name], v[ground]) >= 4.5, (name, ground)
        assert ratio(v["fg"], v["soft"]) >= 4.5 and ratio(v["fg"], v["accent-soft"]) >= 4.5  # chips, the current row
        assert ratio(v["private"], v["private-bg"]) >= 4.5
        assert ratio(v["bg"], v["accent"]) >= 4.5  # button text


def test_the_inspector_is_local_only(memverbs_cmd, env):
    done = subprocess.run([*memverbs_cmd, "--remote", "ui", "--no-open"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "local brain only" in done.stderr and "Traceback" not in done.stderr


def test_no_brain_is_said_with_its_fix(memverbs_cmd, tmp_path):
    import os

    env = {**os.environ, "MEMVERBS_HOME": str(tmp_path / "empty")}
    done = subprocess.run([*memverbs_cmd, "ui", "--no-open"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert "memverbs init" in done.stderr and "Traceback" not in done.stderr


class _App:
    """What the timeline's views read of the inspector: the brain and the source."""

    def __init__(self, runtime) -> None:
        self.runtime, self.source = runtime, runtime.source

    def brain(self):
        return self.runtime.brain()


def test_the_timeline_pages_through_every_change_once_newest_first(runtime, local):
    """Page after page, the timeline is the whole change feed in order, each row at the moment of
    the change that orders it and saying what that change was."""
    import time

    from memverbs.server.timeparse import now_ms
    from memverbs.ui import views

    ids = [local.ok("remember", fact=f"paged fact {i}", entity=f"people/p{i % 3}", provenance="t")["id"] for i in range(23)]
    for slug in ("topics/a", "topics/b"):
        local.ok("put_page", slug=slug, content=f"# {slug}\n\nbody\n")
    time.sleep(0.005)
    local.ok("forget", id=ids[3], reason="test")  # the oldest facts' changes are now among the newest
    time.sleep(0.005)
    runtime.brain().set_fact_visibility(runtime.source, int(ids[5]), "private", widen=False, reason="test", actor="test", now=now_ms())
    app, f = _App(runtime), views.feed_filters({})
    every = views.feed_items(app, f, 0)
    assert len(every) == 25
    assert [i["pos"] for i in every] == sorted((i["pos"] for i in every), reverse=True)
    assert every[0]["key"] == f"fact-{ids[5]}" and every[1]["key"] == f"fact-{ids[3]}"
    assert '<span class="change change-made-private">made private</span>' in every[0]["html"]
    assert '<span class="change change-forgotten">forgotten</span>' in every[1]["html"]
    trail = runtime.brain().fact_trail(int(ids[5]))["audit"]
    assert f'data-at="{trail[-1]["at"]}"' in every[0]["html"]  # the moment shown is the change's
    for size in (1, 4, 7, 25, 30):
        seen, before = [], None
        while True:
            page, before = views.feed_page(app, f, before, size)
            assert len(page) <= size
            seen += [i["key"] for i in page]
            if before is None:
                break
            assert views.Position.parse(before.token()) == before
        assert seen == [i["key"] for i in every], size
    only = views.feed_filters({"entity": "people/p1"})
    page, more = views.feed_page(app, only, None, 3)
    assert more is not None and all("people/p1" in i["html"] for i in page)


def test_every_key_is_documented():
    from pathlib import Path

    from memverbs.ui.views import KEYS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "ui.md").read_text()
    for keys, _ in KEYS:
        assert f"`{keys}`" in doc, keys


def test_an_open_threads_date_is_a_moment_or_a_day_never_raw_iso():
    from memverbs.ui.views import when_text

    assert when_text("2026-12-07T17:43:13.237Z") == '<time datetime="2026-12-07T17:43:13.237Z">2026-12-07 17:43 UTC</time>'
    for day in ("2026-11-18", "2026-11-18T00:00:00.000Z"):  # a dated row: its day, in no zone (ui.js leaves it)
        assert when_text(day) == '<time datetime="2026-11-18" data-day>2026-11-18</time>'
    assert when_text(None) == "" and when_text("soon") == "soon"
