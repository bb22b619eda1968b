"""The inspector's page history: the texts a page's overwrites replaced, a diff, and putting one back.

What `memverbs page-history SLUG` lists and `page-restore SLUG VERSION` does, read from the same
brain operations (`page_versions`, `page_version`); a restore is the same `put_page` of the kept
markdown (InspectorApp.restore_version), so its links, search and a synced file's write-back
follow, and the text it replaces is kept in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from memverbs.ui.diffs import diff_html, unified
from memverbs.ui.views import e, href, private_badge, when

if TYPE_CHECKING:
    from memverbs.ui.app import InspectorApp


def history_href(slug: str, version: int | None = None) -> str:
    return href("/history/" + quote(slug, safe="/"), v=version)


def history(app: InspectorApp, slug: str, q: dict) -> tuple[str, str, str] | None:
    """The versions of `slug`, newest first; with `v`, that version beside the current text. None (a
    404) when the slug has no page, live or deleted, and no history, or `v` names no version."""
    brain = app.brain()
    rows = brain.page_versions(app.source, slug)
    current = brain.page(app.source, slug)
    if not rows and current is None:
        return None
    chosen = None
    asked = (q.get("v") or "").strip()
    if asked:
        if not asked.isdigit():
            return None
        chosen = brain.page_version(app.source, slug, int(asked))
        if chosen is None:
            return None
    state = (f'current text saved {when(current["updated_at"])} · <a href="{e("/page/" + quote(slug, safe="/"))}">the page</a>'
             if current is not None else "the page is deleted: a restore brings it back")
    table = "".join(
        f'<tr{" class=chosen" if chosen is not None and r["version"] == chosen["version"] else ""}>'
        f'<td><a class="primary" href="{e(history_href(slug, r["version"]))}">version {r["version"]}</a></td>'
        f'<td data-label="saved">{when(r["written_at"])}</td><td class="num" data-label="bytes">{r["bytes"]:,}</td>'
        f'<td>{e(r["title"])}</td><td data-label="replaced">{when(r["replaced_at"])}</td>'
        f'<td data-label="by"><span class="mono">{e(r["replaced_by"])}</span></td><td>{e(r["visibility"])} {private_badge(r["visibility"])}</td></tr>'
        for r in rows
    )
    listing = (
        '<div class="table-wrap"><table class="listing history"><thead><tr><th scope="col">version</th><th scope="col">saved</th>'
        '<th scope="col" class="num">bytes</th><th scope="col">title</th><th scope="col">replaced</th><th scope="col">by</th>'
        f'<th scope="col">visibility</th></tr></thead><tbody>{table}</tbody></table></div>'
        if rows else '<p class="empty">No earlier versions: nothing has replaced this page\'s text yet.</p>'
    )
    shown = ""
    if chosen is not None:
        now_text = app.page_source(slug) or ""
        v = chosen["version"]
        diff = unified(now_text, chosen["markdown"], f"{slug} (current)", f"{slug} (version {v})")
        shown = (
            f'<section class="panel version" aria-labelledby="version-h"><h2 id="version-h">Version {v}</h2>'
            f'<p class="note">Saved {when(chosen["written_at"])}, replaced {when(chosen["replaced_at"])} by '
            f'<span class="mono">{e(chosen["replaced_by"])}</span>. The diff is what putting it back would change '
            "(from the current text to this version).</p>"
            + diff_html(diff, label=f"from the current text to version {v}")
            + f'<details><summary>version {v} in full</summary><pre class="source">{e(chosen["markdown"])}</pre></details>'
            '<form method="post" action="/page-restore" class="restore">'
            f'<input type="hidden" name="slug" value="{e(slug)}"><input type="hidden" name="version" value="{v}">'
            f'<button type="submit">Restore version {v}</button></form></section>'
        )
    body = f'<p class="page-meta"><span class="slug">{e(slug)}</span> · {state}</p>' + shown + listing
    lede = "Every save that replaced this page's text kept the text it replaced: who replaced it, and when."
    return f"History of {slug}", body, lede
