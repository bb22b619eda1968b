"""`memverbs ui`: the inspector's HTTP server (standard library only, loopback by default).

Trust: the inspector is the trusted local caller, so it shows private material. Only the
person who started it may use it: the printed URL carries a per-run token that works once —
the first load trades it for a session secret of its own in a SameSite=Strict, HttpOnly
cookie, and every later request needs that cookie. A URL seen since (in `ps` while the
browser starts, in the browser's history, on the terminal) opens nothing. The Host header
must name the address it listens on (no DNS rebinding); a POST must come from the
inspector's own origin (no cross-site form). A non-loopback bind is refused unless asked for
explicitly.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import sys
import threading
import traceback
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

from memverbs.server.brain.fact_edits import parse_fact_ref
from memverbs.server.errors import MemverbsError
from memverbs.ui import conflicts, history, views
from memverbs.ui.app import ActionError, InspectorApp

if TYPE_CHECKING:
    from collections.abc import Callable

COOKIE = "memverbs_ui"  # + the port: cookies ignore ports, and two inspectors may run side by side
NAV = (("/timeline", "Timeline"), ("/entities", "Entities"), ("/pack", "Pack preview"), ("/search", "Search"), ("/conflicts", "Conflicts"),
       ("/access", "Access"), ("/health", "Health"))
STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8", "favicon.svg": "image/svg+xml"}
MAX_BODY = 4 * 1024 * 1024


class BindRefused(MemverbsError):
    """`memverbs ui` will not listen on that address (not loopback without --allow-remote)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback(host) and not allow_remote:
        raise BindRefused(
            f"refusing to serve the inspector on {host}: it shows private memory to whoever holds the URL",
            "Keep the default (127.0.0.1), or pass --allow-non-loopback if you really mean to expose it on this network.",
        )


class InspectorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: InspectorApp, token: str) -> None:
        super().__init__(address, Handler)
        self.app, self.token = app, token
        host, port = str(self.server_address[0]), self.server_address[1]  # an IP address: str for AF_INET/AF_INET6
        shown = f"[{host}]" if ":" in host else host
        self.origin_hosts = {f"{shown}:{port}", f"localhost:{port}"} if is_loopback(host) else {f"{shown}:{port}"}
        self.url = f"http://{shown}:{port}/?token={token}"
        self.cookie = f"{COOKIE}_{port}"
        self.session: str | None = None  # the cookie's secret, made when the URL's token is redeemed
        self._redeem_lock = threading.Lock()

    def redeem(self, given: str) -> str | None:
        """The URL's token, once: the first caller that presents it gets the session secret (a new
        random value, so the token itself never opens anything); anyone after gets None."""
        with self._redeem_lock:
            if self.session is not None or not hmac.compare_digest(given.encode(), self.token.encode()):
                return None
            self.session = secrets.token_urlsafe(32)
            return self.session

    def spent(self, given: str) -> bool:
        """Whether `given` is the URL's token, already redeemed (so the refusal can say why)."""
        return self.session is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def in_session(self, cookie_value: str) -> bool:
        session = self.session
        return session is not None and hmac.compare_digest(cookie_value.encode(), session.encode())


class Handler(BaseHTTPRequestHandler):
    server: InspectorServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        pass  # a page view is not worth a line on the terminal

    # -- the gate -----------------------------------------------------------------------

    def _gate(self, query: dict) -> bool:
        if (self.headers.get("Host") or "") not in self.server.origin_hosts:
            self._plain(HTTPStatus.FORBIDDEN, "memverbs ui: unexpected Host header; open the URL `memverbs ui` printed.\n")
            return False
        given = (query.get("token") or [""])[0]
        morsel = SimpleCookie(self.headers.get("Cookie") or "").get(self.server.cookie)
        if morsel is not None and self.server.in_session(morsel.value):
            if given:  # the first URL again, in the browser that holds the session: just drop it from the address bar
                self._to_clean_url(None)
                return False
            return True
        if given:
            session = self.server.redeem(given)
            if session is not None:
                self._to_clean_url(session)
                return False
            if self.server.spent(given):
                self._plain(HTTPStatus.FORBIDDEN, "memverbs ui: this link has been used: it opens the inspector once, in the "
                                                  "browser that opened it first (so a copy seen in `ps` or a browser's history "
                                                  "opens nothing). Go back to that browser, or restart `memverbs ui` for a new link.\n")
                return False
        self._plain(HTTPStatus.FORBIDDEN, "memverbs ui: this inspector needs its token; open the URL `memverbs ui` printed "
                                          "(it ends with ?token=…).\n")
        return False

    def _to_clean_url(self, session: str | None) -> None:
        """Redirect to this address without the token; with `session`, set the cookie that carries it."""
        from urllib.parse import quote  # noqa: PLC0415

        path = urlsplit(self.path).path
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", "/timeline" if path == "/" else quote(unquote(path), safe="/%:"))
        if session is not None:
            self.send_header("Set-Cookie", f"{self.server.cookie}={session}; HttpOnly; SameSite=Strict; Path=/")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _same_origin(self) -> bool:
        origin = self.headers.get("Origin") or self.headers.get("Referer")
        if not origin:
            return False
        return urlsplit(origin).netloc in self.server.origin_hosts

    # -- requests -----------------------------------------------------------------------

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if not self._gate(query):
            return
        q = {k: v[0] for k, v in query.items()}
        path = unquote(url.path)
        try:
            self._get(path, q)
        except Exception as exc:  # noqa: BLE001 - the boundary: a page, never a traceback
            self._failure(exc)

    def do_POST(self):
        url = urlsplit(self.path)
        if not self._gate(parse_qs(url.query)):
            return
        if not self._same_origin():
            self._plain(HTTPStatus.FORBIDDEN, "memverbs ui: a change must come from the inspector's own page.\n")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._plain(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "memverbs ui: the form is too large (4 MiB at most).\n")
            return
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True).items()}
        try:
            self._post(url.path, form)
        except Exception as exc:  # noqa: BLE001 - the boundary: a page, never a traceback
            self._failure(exc)

    def _get(self, path: str, q: dict) -> None:
        app = self.server.app
        if path in ("/", ""):
            return self._redirect("/timeline")
        if path.startswith("/static/"):
            return self._static(path[len("/static/"):])
        if path == "/favicon.ico":  # what a browser asks for before it reads the page's icon link
            return self._static("favicon.svg")
        with app.lock:
            if path == "/api/feed":
                return self._json(views.feed_json(app, q))
            if path == "/timeline":
                return self._page(*views.timeline(app, q), active="/timeline")
            if path == "/entities":
                return self._page(*views.entities(app, q), active="/entities")
            if path.startswith("/entity/"):
                slug = path[len("/entity/"):]
                shown = views.entity(app, slug)
                if shown is None:  # no card, no facts, nothing links to it: a real 404, not an empty view
                    return self._page(*views.no_entity(slug), active="/entities", status=HTTPStatus.NOT_FOUND)
                return self._page(*shown, active="/entities")
            if path.startswith("/page/"):
                slug = path[len("/page/"):]
                found = views.page(app, slug)
                if found:
                    return self._page(*found, active="/entities")
                gone = views.deleted_page(app, slug)
                if gone:
                    return self._page(*gone, active="/entities", status=HTTPStatus.NOT_FOUND)
                # A wikilink to a page not written yet: the entity view shows what is filed under the name
                # (or answers 404 when nothing is).
                return self._redirect(views.entity_href(slug))
            if path.startswith("/edit/"):
                return self._page(*views.edit(app, path[len("/edit/"):]), active="/entities")
            if path.startswith("/fact/"):
                fact_id = parse_fact_ref(path[len("/fact/"):])
                found = views.fact_history(app, fact_id) if fact_id is not None else None
                return self._page(*found, active="/timeline") if found else self._missing("no such fact")
            if path.startswith("/history/"):
                slug = path[len("/history/"):]
                found = history.history(app, slug, q)
                return self._page(*found, active="/entities") if found else self._missing(f"no page {slug} and no history for it")
            if path == "/conflicts":
                return self._page(*conflicts.conflicts(app), active="/conflicts")
            if path.startswith("/conflict/"):
                ident = path[len("/conflict/"):].lstrip("#")
                found = conflicts.conflict(app, int(ident)) if ident.isdigit() else None
                return self._page(*found, active="/conflicts") if found else self._missing(f"no open conflict #{ident}")
            if path == "/pack":
                return self._page(*views.pack(app, q), active="/pack")
            if path == "/search":
                return self._page(*views.search(app, q), active="/search")
            if path == "/health":
                return self._page(*views.health(app), active="/health")
            if path == "/access":
                return self._page(*views.access(app), active="/access")
        return self._missing("no such view")

    def _post(self, path: str, form: dict) -> None:
        app = self.server.app
        confirmed = form.get("confirmed") == "yes"
        with app.lock:
            try:
                if path == "/forget":
                    if not confirmed:
                        return self._confirm(path, form, f"Forget fact #{form.get('id')}? No recall will return it; "
                                             "the audit trail keeps it and your reason.")
                    done, back = app.forget(form.get("id", ""), form.get("reason", "")), _local(form.get("back"))
                elif path == "/restore":
                    if not confirmed:
                        return self._confirm(path, form, f"Restore fact #{form.get('id')}? It shows in recall, cards and packs "
                                             "again (to every MCP caller too, if it is world); its history keeps the expiry it undoes.")
                    done, back = app.restore(form.get("id", ""), form.get("reason", "")), _local(form.get("back"))
                elif path == "/fact-visibility":
                    vis = form.get("visibility", "")
                    if vis == "world" and not confirmed:
                        # Widening asks first; narrowing never needs to.
                        return self._confirm(path, form, f"Make fact #{form.get('id')} world? Every MCP caller (every "
                                             "harness, every remote token) will be able to read it.")
                    back = _local(form.get("back")) or _local(urlsplit(self.headers.get("Referer") or "").path)
                    done = app.set_fact_visibility(form.get("id", ""), vis, widen=confirmed, reason=form.get("reason", ""))
                elif path == "/move":
                    if not confirmed:
                        return self._confirm(path, form, f"Move every fact filed under {form.get('from')} to {form.get('to')}? "
                                             "Restated facts there are expired as duplicates; every move is in the facts' history.")
                    done = app.move(form.get("from", ""), form.get("to", ""), form.get("reason", ""))
                    back = views.entity_href(form.get("to", "").strip())
                elif path == "/page-visibility":
                    vis = form.get("visibility", "")
                    if not confirmed:
                        widen = " Every MCP caller will be able to read it." if vis == "world" else " No MCP caller will read it any more."
                        return self._confirm(path, form, f"Make the page {form.get('slug')} {vis}?{widen}")
                    done, back = app.set_page_visibility(form.get("slug", ""), vis), "/page/" + form.get("slug", "")
                elif path == "/page-restore":
                    slug, version = form.get("slug", ""), form.get("version", "")
                    if not confirmed:
                        return self._confirm(path, form, f"Put version {version} of {slug} back? The current text is kept in "
                                             "the page's history; a synced note's file gets the restored text too.")
                    done, back = app.restore_version(slug, version), "/page/" + slug.strip()
                elif path == "/resolve":
                    keep = form.get("keep", "")
                    if not confirmed:
                        said = {"file": "keep the file's version (the brain's kept version is marked settled, not deleted)",
                                "brain": "put the brain's kept version back, into the page and the file",
                                "both": "write both versions into the file, between conflict markers"}.get(keep, f"keep {keep}")
                        return self._confirm(path, form, f"Settle conflict #{form.get('id')}: {said}? The text it replaces "
                                             "stays in the page's history.")
                    done, back = app.settle_conflict(form.get("id", ""), keep), "/conflicts"
                elif path == "/revoke-client":
                    if not confirmed:
                        return self._confirm(path, form, f"Revoke the OAuth client {form.get('client_id')}? Its next request "
                                             "is refused; it must be approved again to come back.")
                    done, back = app.revoke_client(form.get("client_id", "")), "/access"
                elif path == "/edit":
                    slug = form.get("slug", "")
                    try:
                        done = app.put_page(slug, form.get("content", "").replace("\r\n", "\n"))
                    except ActionError as exc:
                        return self._page(*views.edit(app, slug, form.get("content", ""), str(exc)), active="/entities",
                                          status=HTTPStatus.UNPROCESSABLE_ENTITY)
                    back = "/page/" + slug
                else:
                    return self._missing("no such action")
            except ActionError as exc:
                return self._page("Not done", f'<div class="panel"><p class="error" role="alert">{views.e(exc)}</p><p><a href="/timeline">back to the timeline</a></p></div>',
                                  status=HTTPStatus.UNPROCESSABLE_ENTITY)
        self._redirect((back or "/timeline") + ("&" if "?" in (back or "") else "?") + "done=" + _q(done))

    # -- answers ------------------------------------------------------------------------

    def _confirm(self, path: str, form: dict, question: str) -> None:
        # Where the action was asked from: the confirmed action returns there.
        referer = urlsplit(self.headers.get("Referer") or "")
        back = _local(referer.path) or "/timeline"
        form = {**form, "back": form.get("back") or back}
        fields = "".join(f'<input type="hidden" name="{views.e(k)}" value="{views.e(v)}">' for k, v in form.items() if k != "confirmed")
        body = (
            f'<form method="post" action="{views.e(path)}" class="confirm panel"><p id="question">{views.e(question)}</p>{fields}'
            '<input type="hidden" name="confirmed" value="yes">'
            f'<p class="row"><button type="submit" id="confirm-yes" autofocus>Yes, do it</button> <a href="{views.e(back)}">Cancel</a></p></form>'
        )
        self._page("Confirm", body)

    def _page(self, title: str, body: str, lede: str = "", *, active: str = "", status: HTTPStatus = HTTPStatus.OK) -> None:
        """A whole page: the frame, the view's heading (and `lede`, a line of HTML under it), its body."""
        nav = "".join(
            f'<a href="{href}"{" aria-current=page" if href == active else ""}>{label}</a>' for href, label in NAV
        )
        done = parse_qs(urlsplit(self.path).query).get("done")
        flash = f'<p class="flash" role="status">{views.e(done[0])}</p>' if done else ""
        lede = f'<p class="lede">{lede}</p>' if lede else ""
        html = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="color-scheme" content="light dark">'
            f"<title>{views.e(title)} · memverbs</title>"
            # Not deferred: it sets the chosen theme before the first paint (a small local file).
            '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
            '<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js"></script></head><body>'
            '<a class="skip" href="#main">Skip to content</a>'
            '<header class="top"><p class="brand"><a href="/timeline"><span class="logo" aria-hidden="true">m</span>'
            'memverbs <small>inspector</small></a></p>'
            f'<nav aria-label="views">{nav}</nav>'
            '<div class="tools"><button type="button" id="keys-open" hidden aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">?</button>'
            '<button type="button" id="theme-toggle" hidden aria-label="Switch theme">◐</button></div></header>'
            '<p class="trust">Trusted local view of your brain: private facts and pages are shown, marked '
            '<span class="badge badge-private">private</span>.</p>'
            f'<main id="main"><div class="page-head"><h1>{views.e(title)}</h1>{lede}</div>{flash}{body}</main>'
            f"{views.KEYS_FOOTER}{views.KEYS_DIALOG}</body></html>"
        )
        self._send(status, html.encode(), "text/html; charset=utf-8")

    def _json(self, body: dict) -> None:
        self._send(HTTPStatus.OK, json.dumps(body, ensure_ascii=False).encode(), "application/json")

    def _static(self, name: str) -> None:
        if name not in STATIC:
            return self._missing("no such file")
        data = resources.files("memverbs.ui").joinpath("static", name).read_bytes()
        self._send(HTTPStatus.OK, data, STATIC[name], cache=True)

    def _redirect(self, where: str) -> None:
        from urllib.parse import quote  # noqa: PLC0415

        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", quote(where, safe="/?=&%#:"))  # no header injection through a form field
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _missing(self, what: str) -> None:
        self._page(*views.not_found(what), status=HTTPStatus.NOT_FOUND)

    def _failure(self, exc: Exception) -> None:
        if isinstance(exc, MemverbsError):
            fix = getattr(exc, "fix", None)
            body = f'<p class="error" role="alert">{views.e(exc.message)}</p>' + (f"<p>{views.e(fix)}</p>" if fix else "")
            return self._page("The brain cannot answer", body, status=HTTPStatus.SERVICE_UNAVAILABLE)
        traceback.print_exc(file=sys.stderr)
        self._page("Internal error", f'<p class="error" role="alert">{views.e(type(exc).__name__)}: {views.e(exc)}</p>'
                   "<p>This is a bug in memverbs ui; the traceback is on the terminal that runs it.</p>",
                   status=HTTPStatus.INTERNAL_SERVER_ERROR)

    def _plain(self, status: HTTPStatus, text: str) -> None:
        self._send(status, text.encode(), "text/plain; charset=utf-8")

    def _send(self, status: HTTPStatus, data: bytes, ctype: str, *, cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "max-age=300" if cache else "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
        self.end_headers()
        self.wfile.write(data)


def _local(path: str | None) -> str | None:
    """A path on this inspector, or None: a form field never redirects elsewhere."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return None
    return path.split("?", 1)[0]


def _q(text: str) -> str:
    from urllib.parse import quote  # noqa: PLC0415

    return quote(text, safe="")


def serve(host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False, open_browser: bool = True,
          token: str | None = None, ready: Callable[[InspectorServer], None] | None = None) -> int:
    check_bind(host, allow_remote)
    app = InspectorApp()
    app.brain()  # a missing or broken brain is reported now, with its fix, not on the first page
    server = InspectorServer((host, port), app, token or secrets.token_urlsafe(24))
    print(f"memverbs ui: {server.url}", flush=True)  # noqa: T201 - the command's output: where to point the browser
    print("  (shows private memory: keep this URL to yourself; Ctrl-C stops it)", flush=True)  # noqa: T201
    if ready is not None:
        ready(server)
    if open_browser:
        import webbrowser  # noqa: PLC0415

        webbrowser.open(server.url)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.close()
    return 0
