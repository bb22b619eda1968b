"""The inspector's state and actions: one local runtime, read and written as the CLI does.

One brain connection serves every request, behind a lock (the HTTP server is threaded,
SQLite's connection is not meant to be shared concurrently). Reads and writes go through
the runtime's local dispatcher — the trusted caller the CLI and the hooks use — or the brain's browse
reads and audited edits (`move_facts`, `restore_fact`, `set_fact_visibility`), exactly as
`memverbs entities`, `history`, `move-facts`, `restore-fact` and `fact-visibility` do.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memverbs.server.errors import FactEditRefused, MemverbsError
from memverbs.server.projects import here
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    pass

PREVIEW_SESSION = "memverbs-ui-preview"


class ActionError(MemverbsError):
    """An action the inspector refuses: the message says what and how to fix it."""


class InspectorApp:
    def __init__(self) -> None:
        # The quick reading of the config, as the CLI's local commands and the hooks start.
        self.runtime = Runtime.quick()
        self.lock = threading.RLock()

    # -- what views read ----------------------------------------------------------------

    @property
    def home(self):
        return self.runtime.home

    @property
    def source(self) -> str:
        return self.runtime.source

    def brain(self):
        return self.runtime.brain()

    def call(self, tool: str, params: dict) -> tuple[bool, dict]:
        """A tool call through the local dispatcher, in the project the inspector runs in, as the CLI's
        (lane 'local', full surface, not usage-logged)."""
        outcome = self.runtime.local_dispatcher(project=here()).call(tool, params)
        return outcome.is_error, outcome.body

    def pack_preview(self, harness: str, cwd: str = "") -> dict:
        """What `memverbs hook session-start --harness H` would print for a new session now, started in
        `cwd` (a working directory: its project chooses the pack, as the payload's cwd does for the hook).

        The pack is what server/verbs/readout.py reads out at a session's start, through the same trusted
        caller, with the same adapter: only the session id is the inspector's own and no session is
        given, so the preview banks nothing and moves no cursor. `text` is what the model reads (the
        adapter's cut of the pack), `output` the hook's exact stdout (for Claude Code, that text inside JSON).
        """
        from memverbs.hooks.adapters import ADAPTERS, cap  # noqa: PLC0415
        from memverbs.hooks.events import Harness, HookEvent, Moment  # noqa: PLC0415
        from memverbs.server.projects import find_project  # noqa: PLC0415
        from memverbs.server.quickconfig import quick_settings  # noqa: PLC0415
        from memverbs.server.verbs import readout  # noqa: PLC0415

        settings = quick_settings(self.home)
        project = find_project(cwd) if cwd.strip() else None
        ask = readout.Ask(readout.START, PREVIEW_SESSION, configured=settings.hook_entities, user=settings.hook_user)
        with self.lock:
            side = readout.LocalSide(self.runtime.local_dispatcher(project=project), self.source, refused=_refused)
            out = readout.read_out(side, ask)
        body = out.body
        adapter = ADAPTERS[Harness(harness)]
        event = HookEvent(Harness(harness), Moment.SESSION_START, PREVIEW_SESSION, cwd=cwd or None)
        output = adapter.render(body["text"], event) if body["text"] else ""
        return {"entities": body["entities"], "body": body, "output": output,
                "text": cap(body["text"], adapter.max_chars), "project": out.aside.get("project")}

    def project_roots(self) -> list[tuple[str, str]]:
        """(slug, where it was last seen) of every project the brain knows: the preview's choices."""
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        return [(str(r["slug"]), str(r["root"])) for r in self.brain().projects(self.source, now_ms())]

    # -- actions ------------------------------------------------------------------------

    def forget(self, fact_id: str, reason: str) -> str:
        if not reason.strip():
            raise ActionError("say why: the reason is kept in the fact's audit trail")
        is_error, body = self.call("forget", {"id": fact_id.strip().lstrip("#"), "reason": reason.strip()})
        if is_error:
            raise ActionError(f"{body.get('message')} {body.get('suggestion') or ''}".strip())
        return f"fact #{body['id']} forgotten" if body["expired"] else f"fact #{body['id']} was already forgotten"

    def move(self, old: str, new: str, reason: str) -> str:
        """`memverbs move-facts OLD NEW`: the same checks and the same audited brain write."""
        from memverbs.server.names import looks_like_slug, slug_of_name  # noqa: PLC0415

        old = old.strip()
        new = new.strip() if looks_like_slug(new.strip()) else slug_of_name(new)
        if not new:
            raise ActionError("the target has no slug in it: pass one such as people/alice-example")
        if old == new:
            raise ActionError("the facts are already filed there: pick another entity")
        moved = self.brain().move_facts(self.source, old, new, reason.strip() or "memverbs ui", now_ms())
        if not moved:
            raise ActionError(f"no facts are filed under {old}")
        dups = sum(1 for _, status in moved if status == "duplicate")
        note = (f" ({dups} restated a fact already there and {'was' if dups == 1 else 'were'} expired as "
                f"{'a duplicate' if dups == 1 else 'duplicates'})") if dups else ""
        return f"moved {len(moved)} fact{'' if len(moved) == 1 else 's'} from {old} to {new}{note}"

    def restore(self, fact_id: str, reason: str) -> str:
        """`memverbs restore-fact ID --reason R`: the same rules and the same audited brain write."""
        from memverbs.server.brain.fact_edits import local_actor  # noqa: PLC0415

        fid = _fact_id(fact_id)
        if not reason.strip():
            raise ActionError("say why it holds again: the reason is kept in the fact's audit trail")
        try:
            self.brain().restore_fact(self.source, fid, reason=reason.strip(), actor=local_actor("memverbs ui"), now=now_ms())
        except FactEditRefused as exc:
            raise ActionError(f"{exc.message} [{exc.code}]. {exc.fix}") from exc
        return f"fact #{fid} restored"

    def set_fact_visibility(self, fact_id: str, visibility: str, *, widen: bool, reason: str = "") -> str:
        """`memverbs fact-visibility ID VIS [--widen]`: world only when the page's confirmation said so."""
        from memverbs.server.brain.fact_edits import local_actor  # noqa: PLC0415

        fid = _fact_id(fact_id)
        try:
            changed = self.brain().set_fact_visibility(
                self.source, fid, visibility, widen=widen, reason=reason.strip() or "no reason given",
                actor=local_actor("memverbs ui"), now=now_ms(),
            )
        except FactEditRefused as exc:
            raise ActionError(f"{exc.message} [{exc.code}]. {exc.fix}") from exc
        return f"fact #{fid} is {visibility} now" if changed else f"fact #{fid} was already {visibility}"

    def put_page(self, slug: str, content: str) -> str:
        is_error, body = self.call("put_page", {"slug": slug, "content": content})
        if is_error:
            raise ActionError(f"{body.get('message')} {body.get('suggestion') or ''}".strip())
        return f"{body['status']} {body['slug']}"

    def page_source(self, slug: str) -> str | None:
        """The page as its markdown file reads (what the editor shows and a visibility change rewrites)."""
        from memverbs.server.sync.render import readable_source  # noqa: PLC0415

        row = self.brain().page(self.source, slug)
        if row is None:
            return None
        return readable_source(self.brain(), row)  # another person's private rows sealed, kept by a save

    def set_page_visibility(self, slug: str, visibility: str) -> str:
        """Rewrite the page's `visibility:` frontmatter line and save it with put_page."""
        if visibility not in ("world", "private"):
            raise ActionError("visibility is world or private")
        source = self.page_source(slug)
        if source is None:
            raise ActionError(f'no page with slug "{slug}"')
        return self.put_page(slug, with_visibility(source, visibility))

    def restore_version(self, slug: str, version: str) -> str:
        """`memverbs page-restore SLUG VERSION`: a put_page of the kept text (its links, search and a synced
        file's write-back follow; the text it replaces is kept in turn)."""
        slug = slug.strip()
        if not version.strip().isdigit():
            raise ActionError(f'"{version}" is not a version number: pick one the page\'s history lists')
        row = self.brain().page_version(self.source, slug, int(version))
        if row is None:
            raise ActionError(f"{slug} has no version {version}: the page's history lists the versions kept")
        self.put_page(slug, row["markdown"])
        return f"restored {slug} to version {row['version']}; the text it replaced is kept in the history"

    def settle_conflict(self, conflict_id: str, keep: str) -> str:
        """`memverbs sync --resolve #ID --keep file|brain|both`: the same settle, through the same trusted caller."""
        from memverbs.server.sync.conflicts import settle  # noqa: PLC0415

        ident = conflict_id.strip().lstrip("#")
        if not ident.isdigit():
            raise ActionError(f'"{conflict_id}" is not a conflict id: pick one the Conflicts view lists')
        try:
            settled = settle(self.runtime.local_dispatcher(), self.brain(), self.source, "#" + ident, keep)
        except MemverbsError as exc:
            raise ActionError(f"{exc.message} {getattr(exc, 'fix', '') or ''}".strip()) from exc
        return f"settled {', '.join(f'#{i}' for i in settled.ids)}: {settled.done}"

    def revoke_client(self, client_id: str) -> str:
        """End an OAuth client at once (`memverbs auth clients --revoke`): its next request is refused."""
        from memverbs.server.timeparse import now_ms  # noqa: PLC0415

        row = self.brain().oauth_client(client_id.strip())
        if row is None:
            raise ActionError(f'no live OAuth client "{client_id}"')
        self.brain().oauth_revoke_client(row["id"], now_ms())
        return f"client {row['name']} revoked: its next request is refused"

    def close(self) -> None:
        self.runtime.close()


def _fact_id(raw: str) -> int:
    from memverbs.server.brain.fact_edits import parse_fact_ref  # noqa: PLC0415

    fact_id = parse_fact_ref(raw)
    if fact_id is None:
        raise ActionError(f'"{raw}" is not a fact id: pass the number a fact row shows (#42)')
    return fact_id


def with_visibility(source: str, visibility: str) -> str:
    """The page source with its frontmatter declaring exactly `visibility` (server/pages/markdown.py's
    rewrite: every visibility key, in any case, replaced by one, the result parsed back to check),
    or ActionError when the frontmatter cannot be rewritten without changing what else it says."""
    from memverbs.server.pages.markdown import with_visibility as rewritten  # noqa: PLC0415 - only this action parses pages

    out = rewritten(source, visibility)
    if out is None:
        raise ActionError(
            f"cannot make this page {visibility} safely: its frontmatter's visibility is written in a way this "
            "rewrite does not change (across lines, or inside a {…} mapping); edit the page and set "
            f"visibility: {visibility} on a line of its own"
        )
    return out


def _refused(body: dict) -> ActionError:
    """A verb the pack preview called said no: its message and the fix, as the inspector shows an error."""
    return ActionError(f"{body.get('message')} {body.get('suggestion') or ''}".strip())
