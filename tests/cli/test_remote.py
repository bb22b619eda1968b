"""`memverbs auth`, `connect` and `disconnect` (in process) against a real `memverbs serve --http` on 127.0.0.1.

Keyring storage runs on a real file-based backend from PyPI (keyrings.alt's
PlaintextKeyring, chosen explicitly the way a user would), in throwaway XDG
folders: nothing touches this machine's own keyring.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import init_home
from runcli import CliResult, run_cli

from benchmarks.http_load import RemoteServer, make_token
from memverbs.cli.main import main
from memverbs.remote.record import RemoteError, normalise_url
from memverbs.remote.vault import TokenVault

PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"


def run(env: dict, *args: str, stdin: str | None = None) -> CliResult:
    proc = run_cli(*args, env=env, stdin=stdin)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def server_home(tmp_path_factory) -> Path:
    return init_home(tmp_path_factory.mktemp("srv") / "home").root


@pytest.fixture(scope="module")
def server_env(server_home) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON_KEYRING", "XDG_"))}
    env["MEMVERBS_HOME"] = str(server_home)
    return env


@pytest.fixture(scope="module")
def server(server_home, server_env):
    with RemoteServer(server_home, env=server_env) as srv:
        yield srv


@pytest.fixture
def client_env(tmp_path, server_env) -> dict:
    """A second machine: its own home and its own (empty) XDG folders for keyring files."""
    env = dict(server_env)
    env["MEMVERBS_HOME"] = str(tmp_path / "client-home")
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    return env


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def auth(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["auth", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_auth_create_list_revoke(capsys, monkeypatch, server_home):
    monkeypatch.setenv("MEMVERBS_HOME", str(server_home))
    code, token, err = auth(capsys, "create", "ci", "--scopes", "read", "--surface", "verbs")
    token = token.strip()
    assert code == 0 and token.startswith("mvb_") and len(token) == 47  # alone on stdout, for $(…)
    assert "only time it is shown" in err
    listed = json.loads(auth(capsys, "list", "--json")[1])
    row = next(r for r in listed if r["name"] == "ci")
    assert (row["scopes"], row["surface"], row["client_id"], row["hint"]) == ("read", "verbs", "token:ci", token[:8] + "…")
    assert token not in json.dumps(listed)
    # only the hash is kept: the token itself is in no file of the server's home
    assert files_containing(server_home, token) == []
    assert files_containing(server_home, hashlib.sha256(token.encode()).hexdigest())
    code, _, err = auth(capsys, "create", "ci")
    assert code == 1 and "already called 'ci'" in err
    assert auth(capsys, "create", "bad name!")[0] == 2
    assert auth(capsys, "create", "x", "--scopes", "admin")[0] == 2
    assert auth(capsys, "revoke", "ci")[0] == 0
    assert auth(capsys, "revoke", "ci")[0] == 1
    assert "ci " not in auth(capsys, "list")[1]
    revoked = json.loads(auth(capsys, "list", "--all", "--json")[1])
    assert next(r for r in revoked if r["name"] == "ci")["revoked_at"]


def test_connect_keeps_the_token_in_a_real_keyring_backend(server, server_env, client_env, tmp_path):
    token = make_token(server.home, "laptop")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": PLAINTEXT}
    connected = run(env, "connect", server.url + "/", stdin=token + "\n")  # normalised: no trailing slash
    assert connected.returncode == 0, connected.stderr
    assert "warning" not in connected.stderr  # piped in: nothing on the command line to warn about
    assert "client token:laptop" in connected.stdout and PLAINTEXT in connected.stdout
    # a separate process reads it back through keyring: it really is in the backend's file
    read_back = subprocess.run(
        [sys.executable, "-c", f"import keyring; print(keyring.get_password('memverbs', {server.url!r}))"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert read_back.stdout.strip() == token, read_back.stderr
    record = json.loads((tmp_path / "client-home" / "remote.json").read_text())
    assert (record["url"], record["token_store"], record["client_id"]) == (server.url, "keyring", "token:laptop")
    assert files_containing(tmp_path / "client-home", token) == []  # never in memverbs's own files
    # later commands find the token in the keyring by URL
    tested = run(env, "auth", "test", server.url)
    assert tested.returncode == 0 and "accepts the token" in tested.stdout, tested.stderr

    gone = run(env, "disconnect")
    assert gone.returncode == 0 and "removed from the keyring" in gone.stdout
    read_back = subprocess.run(
        [sys.executable, "-c", f"import keyring; print(keyring.get_password('memverbs', {server.url!r}))"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert read_back.stdout.strip() == "None"
    assert not (tmp_path / "client-home" / "remote.json").exists()


def test_connect_without_a_keyring_backend_stores_the_token_nowhere(server, server_env, client_env, tmp_path):
    token = make_token(server.home, "headless")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    connected = run(env, "connect", server.url, "--token", token)
    assert connected.returncode == 0, connected.stderr
    assert "NOT stored" in connected.stderr
    assert f"export MEMVERBS_REMOTE_TOKEN={shlex.quote(token)}" in connected.stderr  # exactly what to run
    assert json.loads((tmp_path / "client-home" / "remote.json").read_text())["token_store"] == "env"
    assert files_containing(tmp_path, token) == []
    # the env var is the way in from then on
    tested = run({**env, "MEMVERBS_REMOTE_TOKEN": token}, "auth", "test", server.url)
    assert tested.returncode == 0, tested.stderr


def test_a_remote_only_machine_checks_and_uses_the_remote_brain(server, client_env, tmp_path):
    token = make_token(server.home, "remote-only")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "MEMVERBS_REMOTE_TOKEN": token}
    assert run(env, "connect", server.url, "--token", token).returncode == 0
    assert not (tmp_path / "client-home" / "brain.db").exists()

    doctor = run(env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 0, doctor.stdout
    assert checks["brain"]["status"] == "ok" and "uses the remote brain" in checks["brain"]["detail"]
    assert checks["remote brain"]["status"] == "ok" and "client token:remote-only" in checks["remote brain"]["detail"]

    saved = run(env, "--remote", "remember", "Dana ships on Fridays", "--provenance", "t", "--entity", "people/dana")
    assert saved.returncode == 0 and "about people/dana" in saved.stdout, saved.stderr
    recalled = run(env, "recall", "--entity", "people/dana", "--remote")
    assert "Dana ships on Fridays" in recalled.stdout, recalled.stderr
    assert "lane      token:remote-only" in run({**env, "MEMVERBS_CLI_REMOTE": "true"}, "whoami").stdout
    # Private memory stays out of reach over the wire, whoever asks.
    run(env, "--remote", "remember", "Dana's secret", "--provenance", "t", "--entity", "people/dana",
        "--visibility", "private")
    assert "secret" not in run(env, "--remote", "recall", "--entity", "people/dana").stdout
    # Commands that read a brain directly say so instead of failing on the missing local brain.
    browse = run(env, "--remote", "entities")
    assert browse.returncode == 1 and "local brain only" in browse.stderr and "fix:" in browse.stderr

    run(env, "disconnect")
    gone = run(env, "--remote", "recall")
    assert gone.returncode == 1 and "not connected to a remote brain" in gone.stderr


def test_keyring_never_silently_falls_back_to_a_plaintext_file(monkeypatch, tmp_path):
    import keyring
    from keyrings.alt.file import PlaintextKeyring

    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    previous = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())  # what keyring picks by itself with only keyrings.alt around
    try:
        stored = TokenVault().store("https://brain.example.com/mcp", "mvb_secret")
    finally:
        keyring.set_keyring(previous)
    assert not stored.ok and "not a secure secret store" in stored.reason
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_a_token_on_the_command_line_still_works_and_is_warned_about(server, client_env):
    token = make_token(server.home, "scripted")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": PLAINTEXT}
    connected = run(env, "connect", server.url, "--token", token)
    assert connected.returncode == 0 and "visible" not in connected.stdout, connected.stderr
    assert "--token puts the token on the command line" in connected.stderr and "`ps`" in connected.stderr
    tested = run(env, "auth", "test", server.url, "--token", token)
    assert tested.returncode == 0 and "--token puts the token on the command line" in tested.stderr
    # `--token -` is stdin, said explicitly: no warning.
    tested = run(env, "auth", "test", server.url, "--token", "-", stdin=token)
    assert tested.returncode == 0 and "warning" not in tested.stderr, tested.stderr


def test_auth_test_reads_a_token_nobody_stored_from_stdin(server, client_env):
    token = make_token(server.home, "piped")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    tested = run(env, "auth", "test", server.url, stdin=token)
    assert tested.returncode == 0 and "client token:piped" in tested.stdout and tested.stderr == "", tested.stderr
    nothing = run(env, "auth", "test", server.url, stdin="")
    assert nothing.returncode == 2 and "no token to test" in nothing.stderr


@pytest.mark.parametrize("piped", ["mvb_a mvb_b", "mvb_a\nmvb_b\n"])
def test_stdin_with_more_than_a_token_is_a_usage_error(client_env, piped):
    refused = run(client_env, "connect", "https://brain.example.com/mcp", stdin=piped)
    assert refused.returncode == 2 and "stdin holds more than a token" in refused.stderr and "fix:" in refused.stderr


def test_connect_at_a_terminal_asks_for_the_token_without_echoing_it(server, client_env, tmp_path, memverbs_cmd):
    """A real terminal (a pseudo-terminal as stdin, in a session of its own so getpass has no other
    /dev/tty to open): connect prompts, the typed token is not echoed back, and it is stored."""
    import pty
    import select
    import time

    token = make_token(server.home, "typed")
    env = {**client_env, "PYTHON_KEYRING_BACKEND": PLAINTEXT}
    master, slave = pty.openpty()
    proc = subprocess.Popen([*memverbs_cmd, "connect", server.url], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    os.close(slave)
    try:
        prompt = b""
        deadline = time.monotonic() + 30
        while b"not echoed" not in prompt and time.monotonic() < deadline:
            ready = select.select([proc.stderr, master], [], [], 1)[0]
            if proc.stderr in ready:
                prompt += os.read(proc.stderr.fileno(), 4096)
            if master in ready:
                prompt += os.read(master, 4096)
        assert b"token for " + server.url.encode() in prompt, prompt
        os.write(master, token.encode() + b"\n")
        out, err = proc.communicate(timeout=60)
        echoed = b""
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            echoed += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, err
    assert b"client token:typed" in out and token.encode() not in echoed and token.encode() not in err
    assert json.loads((tmp_path / "client-home" / "remote.json").read_text())["client_id"] == "token:typed"


def test_connect_refuses_a_bad_token_and_stores_nothing(server, client_env, tmp_path):
    env = {**client_env, "PYTHON_KEYRING_BACKEND": PLAINTEXT}
    refused = run(env, "connect", server.url, "--token", "mvb_" + "n" * 43)
    assert refused.returncode == 1 and "refused the token (401" in refused.stderr
    assert not (tmp_path / "client-home").exists() and not (tmp_path / "xdg-data").exists()


@pytest.mark.parametrize(
    ("raw", "url", "warns"),
    [
        ("https://Brain.Example.com", "https://brain.example.com/mcp", False),
        ("https://brain.example.com:443/mcp/", "https://brain.example.com/mcp", False),
        ("https://example.com/team/mcp", "https://example.com/team/mcp", False),
        ("http://127.0.0.1:3131/mcp", "http://127.0.0.1:3131/mcp", False),
        ("http://[::1]:3131", "http://[::1]:3131/mcp", False),
        ("http://localhost:3131/mcp", "http://localhost:3131/mcp", False),
        ("http://brain.example.com/mcp", "http://brain.example.com/mcp", True),
        ("http://10.0.0.5:80/mcp", "http://10.0.0.5/mcp", True),
    ],
)
def test_urls_are_normalised(raw, url, warns):
    got, warnings = normalise_url(raw)
    assert got == url and bool(warnings) is warns


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("brain.example.com/mcp", "scheme"),
        ("ftp://brain.example.com/mcp", "http(s)"),
        ("https://me:secret@brain.example.com/mcp", "credentials"),
        ("https://brain.example.com/mcp?token=mvb_x", "query"),
        ("https://brain.example.com/mcp#frag", "query"),
        ("https://brain.example.com/api", "/mcp"),
        ("https:///mcp", "no host"),
    ],
)
def test_bad_urls_are_refused_with_the_fix(raw, why):
    with pytest.raises(RemoteError) as exc:
        normalise_url(raw)
    assert why in exc.value.message and exc.value.fix
