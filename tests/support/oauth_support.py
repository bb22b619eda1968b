"""Driving the OAuth endpoints of a real `serve --http` with plain HTTP, as a client and as its owner."""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

CALLBACK = "http://127.0.0.1:9/callback"  # loopback: registrable by default; never contacted


def clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home)
    return env


def approval_code(memverbs_cmd: list[str], home: Path) -> str:
    proc = subprocess.run([*memverbs_cmd, "auth", "approve"], env=clean_env(home), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def query(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@dataclass
class Client:
    base: str
    client_id: str
    redirect_uri: str = CALLBACK

    @classmethod
    def register(cls, base: str, *, name: str = "test client", redirect_uri: str = CALLBACK) -> Client:
        response = httpx.post(f"{base}/register", json={"client_name": name, "redirect_uris": [redirect_uri],
                                                        "token_endpoint_auth_method": "none"}, timeout=30)
        assert response.status_code == 201, response.text
        return cls(base, response.json()["client_id"], redirect_uri)

    def authorize(self, challenge: str, **extra: str) -> httpx.Response:
        params = {"response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
                  "code_challenge": challenge, "code_challenge_method": "S256", "state": "st-1",
                  "resource": f"{self.base}/mcp", **extra}
        return httpx.get(f"{self.base}/authorize?{urlencode(params)}", timeout=30)

    def consent(self, location: str, secret: str, *, scopes: tuple[str, ...] = ("read", "write"), surface: str = "full",
                decision: str = "approve") -> httpx.Response:
        request_id = query(location)["request"]
        form = {"request": request_id, "decision": decision, "surface": surface, "owner_secret": secret,
                "scope": list(scopes)}
        return httpx.post(f"{self.base}/consent", data=form, timeout=30)

    def code(self, secret: str, challenge: str, **kw) -> str:
        asked = self.authorize(challenge, **{k: v for k, v in kw.items() if k == "scope"})
        assert asked.status_code == 302, asked.text
        answered = self.consent(asked.headers["location"], secret, **{k: v for k, v in kw.items() if k != "scope"})
        assert answered.status_code == 303, answered.text
        got = query(answered.headers["location"])
        assert got["state"] == "st-1" and got["iss"] == self.base, got
        return got["code"]

    def token(self, **form: str) -> httpx.Response:
        return httpx.post(f"{self.base}/token", data={"client_id": self.client_id, **form}, timeout=30)

    def exchange(self, code: str, verifier: str | None, **extra: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri, **extra}
        if verifier is not None:
            form["code_verifier"] = verifier
        return self.token(**form)

    def refresh(self, refresh_token: str, **extra: str) -> httpx.Response:
        return self.token(grant_type="refresh_token", refresh_token=refresh_token, **extra)

    def tokens(self, secret: str, **kw) -> dict:
        verifier, challenge = pkce()
        response = self.exchange(self.code(secret, challenge, **kw), verifier)
        assert response.status_code == 200, response.text
        return response.json()


def oauth_grant(brain, source: str, *, client_id: str = "privacy-client", scopes: str = "read,write", surface: str = "full"):
    """The `Grant` a live OAuth access token gives, issued straight into the brain (what consent and /token do)."""
    from memverbs.server.oauth import credentials
    from memverbs.server.timeparse import now_ms

    ref = brain.oauth_add_client(client_id=client_id, name=client_id, metadata="{}", secret_hash=None,
                                 lane=credentials.lane_for(client_id), now=now_ms())
    token = credentials.mint("access")
    brain.oauth_exchange(None, [{"client_ref": ref, "kind": "access", "token_hash": credentials.digest(token), "family": None,
                                 "scopes": scopes, "surface": surface, "source_id": source,
                                 "resource": "http://127.0.0.1:3131/mcp", "expires_at": now_ms() + 3_600_000}], now_ms())
    return credentials.grant_from(brain.oauth_credential("access", credentials.digest(token)))


def oauth_dispatcher(runtime, ceiling: str = "full", **grant_kw):
    """An OAuth caller's dispatcher, built exactly as `serve --http` builds it from the gate's grant."""
    from memverbs.server.protocol.surfaces import narrower

    grant = oauth_grant(runtime.brain(), runtime.source, **grant_kw)
    return runtime.mcp_dispatcher(narrower(ceiling, grant.surface), grant.caller(), usage_client=grant.client_id)


class InProcessServer:
    """`serve --http` with OAuth on, in this process on a loopback port (uvicorn in a thread), so a test
    can reach its limits' state and shrink them; `base` is its issuer, `url` its /mcp."""

    def __init__(self, runtime, *, workers: int | None = None) -> None:
        import socket

        from memverbs.server.oauth.server import configure
        from memverbs.server.transport import http as http_module
        from memverbs.server.transport import http_limits

        self.runtime = runtime
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(512)
        port = self.sock.getsockname()[1]
        self.base, self.url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/mcp"
        oauth, _ = configure(runtime.settings, "full", runtime.source, "", self.url)
        self.app = http_module.RemoteBrainApp(runtime, "full", oauth=oauth)
        self._workers = (http_module, workers)
        self._limits = http_limits

    def __enter__(self) -> InProcessServer:
        import threading
        import time

        import uvicorn

        module, workers = self._workers
        self._saved_workers = module.WORKERS
        if workers is not None:
            module.WORKERS = workers  # read by the app's lifespan, when it starts
        config = uvicorn.Config(self.app, lifespan="on", log_level="warning", http=self._limits.HeadDeadlineProtocol,
                                limit_concurrency=self._limits.MAX_CONNECTIONS)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        self.app.brains.close_all()
        self._workers[0].WORKERS = self._saved_workers

    @property
    def oauth(self):
        assert self.app.oauth is not None
        return self.app.oauth

    def approval_code(self) -> str:
        from memverbs.server.oauth import owner

        return owner.new_approval_code(self.runtime.brain())
