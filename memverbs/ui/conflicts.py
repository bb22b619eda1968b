"""The inspector's sync conflicts: each open one with both sides and a diff, and settling it.

A conflict is a note whose file and page both changed since the last sync: the file won and the
brain's version was kept. The list and each conflict's sides are what `memverbs sync --status`
shows (server/sync/conflicts.py's `describe`); settling one is the same `settle` as
`memverbs sync --resolve NOTE --keep file|brain|both` (InspectorApp.settle_conflict).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memverbs.server.sync.conflicts import cause_of, describe, said
from memverbs.ui.diffs import diff_html
from memverbs.ui.views import e, entity_href, when

if TYPE_CHECKING:
    from memverbs.server.brain.base import Row
    from memverbs.ui.app import InspectorApp

KEEP_LABELS = (
    ("file", "Keep the file", "the file's version stays; the brain's kept version is marked settled"),
    ("brain", "Keep the brain's", "the brain's kept version comes back, into the file too"),
    ("both", "Keep both", "the file gets both, between conflict markers, to edit down by hand"),
)


def conflict_href(conflict_id: int) -> str:
    return f"/conflict/{conflict_id}"


def _open(app: InspectorApp) -> list[Row]:
    return list(app.brain().sync_conflict_rows(app.source))


def conflicts(app: InspectorApp) -> tuple[str, str, str]:
    rows = _open(app)
    lede = ("Notes both sides changed since the last sync (the file won), or that another folder's note holds the slug of "
            "(not applied): the brain's version is kept until you settle it.")
    if not rows:
        return "Conflicts", '<div class="panel"><p class="empty">No open conflicts: every synced note agrees with its page.</p></div>', lede
    lines = "".join(
        f'<tr><td><a class="primary" href="{e(conflict_href(r["id"]))}">#{r["id"]}</a></td>'
        f'<td><span class="mono">{e(r["rel_path"])}</span></td><td><span class="slug">{e(r["slug"])}</span></td>'
        f'<td data-label="folder"><span class="mono">{e(r["root"])}</span></td><td>{when(r["detected_at"])}</td></tr>'
        for r in reversed(rows)
    )
    body = (
        f'<p class="count">{len(rows)} open</p>'
        '<div class="table-wrap"><table class="listing conflicts"><thead><tr><th scope="col">conflict</th><th scope="col">file</th>'
        '<th scope="col">page</th><th scope="col">folder</th><th scope="col">detected</th></tr></thead>'
        f"<tbody>{lines}</tbody></table></div>"
    )
    return "Conflicts", body, lede


def _elsewhere(app: InspectorApp, row: Row) -> str | None:
    """The host of the conflict's folder when that is not this machine: its file is not read here (a path
    here names another file, if any), and it is settled there."""
    from memverbs.server.sync.state import SyncState  # noqa: PLC0415

    folder = next((f for f in SyncState(app.brain(), app.source).folders() if f.id == row["folder_id"]), None)
    return folder.host if folder is not None and not folder.here() else None


def conflict(app: InspectorApp, conflict_id: int) -> tuple[str, str, str] | None:
    """One open conflict: the diff from the brain's kept version to the file now, both sides, and the
    three ways to settle it. None (a 404) when no open conflict has that id."""
    row = next((r for r in _open(app) if r["id"] == conflict_id), None)
    if row is None:
        return None
    sides = describe(row["root"], row, elsewhere=_elsewhere(app, row))
    rel, path = row["rel_path"], os.path.join(row["root"], row["rel_path"])
    if sides["file_content"] is None:
        compared = f'<p class="error" role="alert">The file cannot be read: {e(sides["file_problem"])}.</p>'
    else:
        compared = diff_html(sides["diff"], label=f"from the brain's kept version to the file {rel}")
    file_side = (f'<pre class="source">{e(sides["file_content"])}</pre>' if sides["file_content"] is not None
                 else f'<p class="note">{e(sides["file_problem"])}</p>')
    buttons = "".join(
        f'<li><button type="submit" name="keep" value="{k}"{" class=quiet" if k != "file" else ""}>{e(label)}</button> '
        f'<span class="note">{e(what)}</span></li>'
        for k, label, what in KEEP_LABELS
    )
    body = (
        f'<p class="page-meta"><span class="mono">{e(path)}</span> · page <a class="slug" href="{e(entity_href(row["slug"]))}">{e(row["slug"])}</a>'
        f' · detected {when(row["detected_at"])}</p>'
        '<section class="panel" aria-labelledby="diff-h"><h2 id="diff-h">What differs</h2>'
        '<p class="note">From the brain\'s kept version (<code>-</code>) to the file as it is now (<code>+</code>).</p>'
        f"{compared}</section>"
        '<section class="panel settle" aria-labelledby="settle-h"><h2 id="settle-h">Settle it</h2>'
        '<form method="post" action="/resolve">'
        f'<input type="hidden" name="id" value="{row["id"]}"><ul class="keep">{buttons}</ul></form>'
        f'<p class="note">The same as <code>memverbs sync --resolve {e(rel)} --keep file|brain|both</code>; '
        "the text a choice replaces stays in the page's history.</p></section>"
        '<h2>Both sides</h2>'
        f'<details><summary>the brain\'s kept version ({len(sides["brain_content"].encode()):,} bytes)</summary>'
        f'<pre class="source">{e(sides["brain_content"])}</pre></details>'
        f"<details><summary>the file now</summary>{file_side}</details>"
    )
    what = said(cause_of(row), row["slug"])
    return f"Conflict #{row['id']}: {rel}", body, f"{what[0].upper()}{what[1:]}. Choose which text the note holds from now on."
