"""`memverbs connect URL --token T --install …` and `memverbs disconnect`, with the real harness CLIs.

One real `memverbs serve --http` on 127.0.0.1 for the module; each test gets a throwaway
HOME (tests/support/harnesses.py) whose keyring is keyrings.alt's file backend, chosen
explicitly (PYTHON_KEYRING_BACKEND) as a user without a desktop keyring would. The
harness's own check must see the remote brain connected: `claude mcp list` (runs the
headers helper), `codex exec` against a fake model (the tools it offers — `codex mcp list`
connects to nothing), `grok mcp doctor`, `opencode mcp list`, `openclaw mcp probe`.
The token must be in none of the files connect touched, and disconnect must give every
file back byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from fake_model import FakeModel, tool_names
from harnesses import memverbs, require_cli, run, throwaway_home
from helpers import init_home
from openclaw_support import require_openclaw, without_openclaw

from benchmarks.http_load import RemoteServer, make_token
from memverbs.installers import toml_block
from memverbs.installers.jsonc import JsonDoc

# Every test here connects real harnesses (their CLIs, or files they read at start): the e2e tier.
pytestmark = pytest.mark.e2e

PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"
FILE_HARNESSES = ["codex", "grok", "opencode", "openclaw"]  # connect edits their files: no CLI needed to register
# The user's own configs before connect: comments and another server that must survive, byte for byte.
SEEDS = {
    "codex": (".codex/config.toml", '# my codex config\n[mcp_servers.other]\ncommand = "/bin/cat"\nenabled = false\n'),
    "grok": (".grok/config.toml", '# my grok config\n[mcp_servers.other]\ncommand = "/bin/cat"\nenabled = false\n'),
    "opencode": (
        ".config/opencode/opencode.jsonc",
        '{\n  "$schema": "https://opencode.ai/config.json",\n  // mine\n'
        '  "mcp": { "other": { "type": "local", "command": ["/bin/cat"], "enabled": false } },\n}\n',
    ),
    "openclaw": (
        ".openclaw/openclaw.json",
        '// my openclaw config\n{\n  "mcp": {\n    "servers": {\n      "other": { "command": "/bin/cat", "args": [] }, // foreign\n'
        "    },\n  },\n}\n",
    ),
}
API_KEY_VAR = "MEMVERBS_E2E_FAKE_KEY"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = init_home(tmp_path_factory.mktemp("brain-server") / "home").root
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON_KEYRING", "XDG_"))}
    with RemoteServer(home, env=env) as srv:
        yield srv


@pytest.fixture(scope="module")
def token(server) -> str:
    run([memverbs(), "remember", REMOTE_FACT, "--provenance", "t", "--entity", "people/rita"],
        {**os.environ, "MEMVERBS_HOME": str(server.home)})
    return make_token(server.home, "laptop")


REMOTE_FACT = "Rita keeps the remote brain"


def machine(root: Path) -> dict:
    """A throwaway HOME with the user's configs seeded, its keyring a file backend under it."""
    env = throwaway_home(root)
    env = {k: v for k, v in env.items() if not k.startswith(("OPENCLAW_", "GROK_", "PYTHON_KEYRING"))}
    env["PYTHON_KEYRING_BACKEND"] = PLAINTEXT
    home = Path(env["HOME"])
    for relative, text in SEEDS.values():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text)
    # connect installs the opencode plugin; opencode would fetch @opencode-ai/plugin from npm for it
    # unless its config dir says it is there (tests/installers/test_opencode.py, seed_plugin_deps).
    (home / ".config" / "opencode" / "node_modules").mkdir(exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
    (home / ".config" / "opencode" / "package-lock.json").write_text(json.dumps(lock))
    return env


def mv(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = run([memverbs(), *args], env, cwd=Path(env["HOME"]).parent / "project", check=check)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and needle.encode() in p.read_bytes()]


def claude_servers(env: dict) -> dict:
    path = Path(env["HOME"]) / ".claude.json"
    return (json.loads(path.read_text()).get("mcpServers") or {}) if path.exists() else {}


# -- every harness, connected for real ------------------------------------------------------


@pytest.fixture(scope="module")
def connected(tmp_path_factory, server, token):
    """One machine connected with --install for all five (claude only where its CLI is).

    No openclaw on PATH while connecting: its install-ledger call (seconds of Node) is checked with the
    real CLI by test_disconnect_gives_every_file_back_byte_for_byte; `mcp probe` below runs the real one."""
    env = without_openclaw(machine(root := tmp_path_factory.mktemp("connected")), root)
    harnesses = (["claude"] if shutil.which("claude") else []) + FILE_HARNESSES
    out = mv(env, "connect", server.url, "--token", token, "--install", ",".join(harnesses)).stdout
    with_token = {**env, "MEMVERBS_REMOTE_TOKEN": mv(env, "remote-header", "--bare").stdout.strip()}
    assert with_token["MEMVERBS_REMOTE_TOKEN"] == token
    return env, with_token, out


def test_connect_install_writes_the_token_into_no_file(connected, token):
    env, _, out = connected
    home = Path(env["HOME"])
    assert files_containing(home, token) == []
    for harness in FILE_HARNESSES:
        assert f"registered in {harness} as the 'memverbs' MCP server" in out
    assert "http_headers_helper runs `memverbs remote-header`" in out
    assert 'export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"' in out
    record = json.loads((home / ".memverbs" / "remote.json").read_text())
    assert record["harnesses"][-4:] == FILE_HARNESSES and record["token_store"] == "keyring"
    codex = toml_block.parse((home / ".codex" / "config.toml").read_text(), "codex")["mcp_servers"]["memverbs"]
    assert codex["http_headers_helper"].endswith(f"memverbs remote-header {record['url']} --keyring-backend {PLAINTEXT}")
    grok = toml_block.parse((home / ".grok" / "config.toml").read_text(), "grok")["mcp_servers"]["memverbs"]
    assert (grok["url"], grok["bearer_token_env_var"]) == (record["url"], "MEMVERBS_REMOTE_TOKEN")
    opencode = JsonDoc((home / SEEDS["opencode"][0]).read_text()).get(["mcp", "memverbs"])
    assert opencode["headers"] == {"Authorization": "Bearer {env:MEMVERBS_REMOTE_TOKEN}"} and opencode["oauth"] is False
    openclaw = JsonDoc((home / SEEDS["openclaw"][0]).read_text()).get(["mcp", "servers", "memverbs"])
    assert openclaw["headers"] == {"Authorization": "Bearer ${MEMVERBS_REMOTE_TOKEN}"}
    for harness in ["codex", "opencode"]:  # the user's own bytes stay around ours
        assert SEEDS[harness][1].splitlines()[1] in (home / SEEDS[harness][0]).read_text()


def test_claude_runs_the_headers_helper_and_connects(connected, server):
    cli = require_cli("claude")
    env, _, _ = connected
    entry = claude_servers(env)["memverbs"]
    assert entry["type"] == "http" and entry["url"] == server.url and "remote-header" in entry["headersHelper"]
    assert "headers" not in entry
    listed = run([cli, "mcp", "list"], env, timeout=90).stdout  # no token in its environment: the keyring's
    assert f"memverbs: {server.url} (HTTP) - ✔ Connected" in listed, listed


def test_codex_gets_the_tools_through_the_headers_helper(connected):
    """Codex runs the helper with a minimal environment (no PYTHON_KEYRING_BACKEND, no token):
    the tools reach the model only if the helper still finds the keyring's token."""
    cli = require_cli("codex")
    env, _, _ = connected
    with FakeModel() as api:
        provider = f'{{name="e2e", base_url="{api.url}/v1", env_key="{API_KEY_VAR}", wire_api="responses"}}'
        argv = [cli, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
                "--disable", "plugins", "-c", "analytics.enabled=false", "-c", 'model="gpt-e2e"',
                "-c", 'model_provider="e2e"', "-c", f"model_providers.e2e={provider}", "hello"]
        run(argv, {**env, API_KEY_VAR: "sk-e2e-fake"}, cwd=Path(env["HOME"]).parent / "project", timeout=120)
        offered = [tool_names(r.body) for r in api.model_requests()]
        first = api.model_requests()[0]
    assert offered and "mcp__memverbs/remember" in offered[-1], offered
    # The SessionStart hook asked the remote brain for the pack (this machine has no brain).
    assert any(REMOTE_FACT in text for role, text in first.messages() if role == "developer"), first.messages()
    log = [json.loads(line) for line in (Path(env["HOME"]) / ".memverbs" / "logs" / "hooks.jsonl").read_text().splitlines()]
    assert ("codex", "session-start", "ok") in {(e["harness"], e["moment"], e["code"]) for e in log}, log


def test_grok_doctor_connects_with_the_env_var_and_not_without(connected):
    cli = require_cli("grok")
    env, with_token, _ = connected
    doctor = run([cli, "mcp", "doctor", "memverbs", "--json"], with_token, timeout=90)
    server = json.loads(doctor.stdout)["servers"][0]
    assert server["healthy"] is True and server["transport"] == "http", server
    assert any(c["label"] == "16 tools discovered" for c in server["checks"]), server
    refused = run([cli, "mcp", "doctor", "memverbs", "--json"], env, timeout=90, check=False)
    assert refused.returncode == 1 and json.loads(refused.stdout)["healthy_count"] == 0  # no token inline


def test_opencode_lists_it_connected(connected, server):
    cli = require_cli("opencode")
    _, with_token, _ = connected
    listed = run([cli, "mcp", "list"], with_token, cwd=Path(with_token["HOME"]).parent / "project", timeout=90).stdout
    assert "✓ memverbs" in listed and "connected" in listed and server.url in listed, listed


def test_openclaw_probe_connects(connected):
    cli = require_openclaw(dict(os.environ))
    _, with_token, _ = connected
    probe = json.loads(run([cli, "mcp", "probe", "memverbs", "--json"], with_token, timeout=120).stdout)
    assert probe["servers"]["memverbs"]["tools"] == 16 and probe["diagnostics"] == [], probe
    assert "memverbs__remember" in probe["tools"]


def installed_hook_runs(env: dict) -> dict[str, tuple[list[str] | str, dict]]:
    """What each file harness was given to run for its hooks, read back from the files connect wrote:
    Grok's hooks file (a shell command), the lean launcher opencode's and OpenClaw's plugins spawn."""
    home = Path(env["HOME"])
    grok_hooks = json.loads((home / ".grok" / "hooks" / "memverbs.json").read_text())["hooks"]
    plugin = next((home / ".config" / "opencode").rglob("memverbs.js")).read_text()
    opencode_cmd = json.loads(plugin.split("/* memverbs:command */", 1)[1].split("/* end */", 1)[0])
    openclaw_cmd = JsonDoc((home / SEEDS["openclaw"][0]).read_text()).get(["plugins", "entries", "memverbs", "config", "hook"])
    return {
        "grok": (grok_hooks["PostToolUse"][0]["hooks"][0]["command"],
                 {"session_id": "grok-remote-1", "hook_event_name": "PostToolUse", "tool_name": "read_file"}),
        "opencode": ([*opencode_cmd, "session-start", "--harness", "opencode", "--session-id", "oc-remote-1"], {}),
        "openclaw": ([*openclaw_cmd, "session-start", "--harness", "openclaw", "--session-id", "ocl-remote-1"], {}),
    }


@pytest.mark.parametrize("harness", ["grok", "opencode", "openclaw"])
def test_the_hooks_connect_installed_ask_the_remote_brain(connected, server, harness):
    """The hooks connect --install wires into Grok, opencode and OpenClaw get the pack from the remote brain,
    on the token's own cursor lane."""
    from memverbs.server.brain.sqlite import SqliteBrain

    _, with_token, _ = connected
    command, payload = installed_hook_runs(with_token)[harness]
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else command
    proc = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, env=with_token, timeout=60)
    assert proc.returncode == 0 and REMOTE_FACT in proc.stdout, (proc.stdout, proc.stderr)
    memverbs_home = Path(with_token["HOME"]) / ".memverbs"
    log = [json.loads(line) for line in (memverbs_home / "logs" / "hooks.jsonl").read_text().splitlines()]
    assert (log[-1]["harness"], log[-1]["code"]) == (harness, "ok"), log[-3:]
    # This machine has a local brain too (throwaway_home inits one), without the remote fact: the fact
    # and the cursor on the server, on the token's lane, say which brain answered.
    session = payload.get("session_id") or argv[-1]
    brain = SqliteBrain.open(server.home / "brain.db")
    try:
        assert brain.cursor("default", "token:laptop", session) is not None
    finally:
        brain.close()


# -- disconnect gives every file back -------------------------------------------------------


def test_disconnect_gives_every_file_back_byte_for_byte(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    with_claude = shutil.which("claude") is not None
    harnesses = (["claude"] if with_claude else []) + FILE_HARNESSES
    mv(env, "connect", server.url, "--token", token, "--install", ",".join(harnesses))
    assert all((home / ".memverbs" / "integrations" / h / "remote-receipt.json").is_file() for h in harnesses)
    assert files_containing(home, token) == []  # nor did the harness CLIs connect ran (OpenClaw's ledger call) write it
    if with_claude:
        assert "memverbs" in claude_servers(env)

    gone = mv(env, "disconnect").stdout
    assert "token removed from the keyring" in gone
    assert all(f"unregistered from {h}" in gone for h in harnesses)
    for relative, text in SEEDS.values():
        assert (home / relative).read_text() == text, relative
    assert "memverbs" not in claude_servers(env)
    assert not (home / ".memverbs" / "remote.json").exists()
    assert not list((home / ".memverbs" / "integrations").glob("*/remote-receipt.json"))
    assert mv(env, "remote-header", server.url, check=False).returncode == 1  # the keyring entry is gone too


def test_connect_again_keeps_drops_and_repoints_harnesses(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    mv(env, "connect", server.url, "--token", token, "--install", "grok,opencode")
    # --install names exactly the harnesses: grok is taken out again, byte for byte
    out = mv(env, "connect", server.url, "--token", token, "--install", "opencode").stdout
    assert "unregistered from grok" in out
    assert (home / SEEDS["grok"][0]).read_text() == SEEDS["grok"][1]
    # without --install, the registered ones stay (a token rotation does not unwire anything)
    mv(env, "connect", server.url, "--token", token)
    assert json.loads((home / ".memverbs" / "remote.json").read_text())["harnesses"] == ["opencode"]
    assert JsonDoc((home / SEEDS["opencode"][0]).read_text()).get(["mcp", "memverbs", "url"]) == server.url
    mv(env, "disconnect")
    assert (home / SEEDS["opencode"][0]).read_text() == SEEDS["opencode"][1]


# -- one brain per harness, and what is not ours stays ----------------------------------------


def test_a_local_install_and_a_remote_registration_refuse_each_other(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    mv(env, "install", "opencode", "--no-hooks")
    installed = (home / SEEDS["opencode"][0]).read_text()
    refused = mv(env, "connect", server.url, "--token", token, "--install", "grok,opencode", check=False)
    assert refused.returncode == 1 and "memverbs uninstall opencode" in refused.stderr
    # rehearsed first: nothing stored, no harness touched, not even grok before it
    assert (home / SEEDS["opencode"][0]).read_text() == installed
    assert (home / SEEDS["grok"][0]).read_text() == SEEDS["grok"][1]
    assert not (home / ".memverbs" / "remote.json").exists()
    assert not (home / ".local" / "share" / "python_keyring").exists()

    mv(env, "uninstall", "opencode")
    mv(env, "connect", server.url, "--token", token, "--install", "opencode")
    blocked = mv(env, "install", "opencode", check=False)
    assert blocked.returncode == 1 and "memverbs disconnect" in blocked.stderr
    assert JsonDoc((home / SEEDS["opencode"][0]).read_text()).get(["mcp", "memverbs", "type"]) == "remote"


def test_foreign_entries_are_refused_untouched_and_unknown_harnesses_fail_early(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    foreign = SEEDS["openclaw"][1].replace('"other":', '"memverbs":')
    (home / SEEDS["openclaw"][0]).write_text(foreign)
    refused = mv(env, "connect", server.url, "--token", token, "--install", "openclaw", check=False)
    assert refused.returncode == 1 and "did not write" in refused.stderr
    assert (home / SEEDS["openclaw"][0]).read_text() == foreign
    unknown = mv(env, "connect", server.url, "--token", token, "--install", "codex,vim", check=False)
    assert unknown.returncode == 2 and "unknown harness 'vim'" in unknown.stderr
    assert not (home / ".memverbs" / "remote.json").exists()


def test_a_user_replaced_entry_survives_disconnect(tmp_path, server, token):
    env = without_openclaw(machine(tmp_path), tmp_path)  # memverbs's own edit; the disconnect test runs OpenClaw's CLI
    home = Path(env["HOME"])
    mv(env, "connect", server.url, "--token", token, "--install", "openclaw")
    path = home / SEEDS["openclaw"][0]
    theirs = JsonDoc(path.read_text())
    theirs.set(["mcp", "servers", "memverbs"], {"url": "https://elsewhere.example/mcp"})
    path.write_text(theirs.text)
    mv(env, "disconnect")
    assert JsonDoc(path.read_text()).get(["mcp", "servers", "memverbs"]) == {"url": "https://elsewhere.example/mcp"}


# -- without a keyring, and the helper itself ---------------------------------------------------


def test_without_a_keyring_codex_reads_the_env_var_itself(tmp_path, server, token):
    """No keyring: Codex would run the helper without $MEMVERBS_REMOTE_TOKEN (its helper
    environment is minimal), so it gets bearer_token_env_var and reads the variable itself."""
    cli = require_cli("codex")
    env = {**machine(tmp_path), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    out = mv(env, "connect", server.url, "--token", token, "--install", "codex").stdout
    assert "bearer_token_env_var = MEMVERBS_REMOTE_TOKEN" in out
    config = (Path(env["HOME"]) / SEEDS["codex"][0]).read_text()
    server_entry = toml_block.parse(config, "codex")["mcp_servers"]["memverbs"]
    assert server_entry == {"url": server.url, "bearer_token_env_var": "MEMVERBS_REMOTE_TOKEN", "startup_timeout_sec": 30}
    listed = json.loads(run([cli, "mcp", "list", "--json"], env, timeout=60).stdout)
    memverbs_entry = next(s for s in listed if s["name"] == "memverbs")
    assert memverbs_entry["transport"]["bearer_token_env_var"] == "MEMVERBS_REMOTE_TOKEN"
    assert files_containing(Path(env["HOME"]), token) == []


def test_remote_header_prints_the_header_and_nothing_else(tmp_path, server, token):
    env = machine(tmp_path)
    mv(env, "connect", server.url, "--token", token)
    header = mv(env, "remote-header", server.url)
    assert json.loads(header.stdout) == {"Authorization": f"Bearer {token}"} and header.stderr == ""
    assert json.loads(mv(env, "remote-header").stdout) == {"Authorization": f"Bearer {token}"}  # the connected URL
    assert mv(env, "remote-header", "--bare").stdout == token + "\n"
    override = mv({**env, "MEMVERBS_REMOTE_TOKEN": "mvb_override"}, "remote-header", "--bare").stdout
    assert override == "mvb_override\n"
    missing = mv(env, "remote-header", "https://other.example/mcp", check=False)
    assert missing.returncode == 1 and missing.stdout == "" and "no token for https://other.example/mcp" in missing.stderr
    # a harness that hides the user's environment from its helper (Codex): the helper names the backend itself
    bare_env = {k: v for k, v in env.items() if k != "PYTHON_KEYRING_BACKEND"}
    assert mv(bare_env, "remote-header", server.url, check=False).returncode == 1
    named = mv(bare_env, "remote-header", server.url, "--keyring-backend", PLAINTEXT)
    assert json.loads(named.stdout) == {"Authorization": f"Bearer {token}"}


def test_the_helper_finds_the_session_bus_a_minimal_environment_lacks(tmp_path, monkeypatch):
    """Codex runs the helper without DBUS_SESSION_BUS_ADDRESS; the Secret Service backend needs it."""
    from memverbs.server.brain.password import find_session_bus as _find_session_bus

    bus = tmp_path / "bus"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(bus))
    try:
        monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
        _find_session_bus()
        assert os.environ["DBUS_SESSION_BUS_ADDRESS"] == f"unix:path={bus}"
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/mine")
        _find_session_bus()
        assert os.environ["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=/mine"  # a real address is never replaced
    finally:
        listener.close()


def test_doctor_checks_each_remote_registration(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    mv(env, "connect", server.url, "--token", token, "--install", "codex,opencode")

    def remote_rows() -> dict:
        checks = json.loads(mv(env, "doctor", "--json", check=False).stdout)["checks"]
        return {c["name"]: c for c in checks if c["name"].startswith("remote:")}

    rows = remote_rows()
    assert {name: row["status"] for name, row in rows.items()} == {"remote:codex": "ok", "remote:opencode": "ok"}
    for name in ("remote:codex", "remote:opencode"):  # which brain each harness's hooks use: every one has hooks now
        assert "hooks on the remote brain" in rows[name]["detail"]
    (home / SEEDS["opencode"][0]).write_text(SEEDS["opencode"][1])  # someone took our entry out
    broken = remote_rows()["remote:opencode"]
    assert broken["status"] == "fail" and "missing" in broken["detail"] and "--install opencode" in broken["fix"]


def test_a_disconnect_that_cannot_finish_keeps_what_it_needs_to_retry(tmp_path, server, token):
    env = machine(tmp_path)
    home = Path(env["HOME"])
    mv(env, "connect", server.url, "--token", token, "--install", "grok,opencode")
    opencode = home / SEEDS["opencode"][0]
    registered = opencode.read_text()
    opencode.write_text(registered + "}}} not json")
    failed = mv(env, "disconnect", check=False)
    assert failed.returncode == 1 and "could not unregister opencode" in failed.stderr and "does not parse" in failed.stderr
    assert (home / SEEDS["grok"][0]).read_text() == SEEDS["grok"][1]  # the others were undone
    assert json.loads((home / ".memverbs" / "remote.json").read_text())["harnesses"] == ["opencode"]
    assert mv(env, "remote-header", "--bare").stdout.strip() == token  # the token stays while a harness uses it
    opencode.write_text(registered)
    mv(env, "disconnect")
    assert opencode.read_text() == SEEDS["opencode"][1]
