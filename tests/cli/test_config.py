"""`memverbs config get|set|unset` on a real config.toml, and MEMVERBS_* environment over the file."""

from __future__ import annotations

import json
import tomllib

from helpers import Client
from runcli import CliResult, run_cli

from memverbs.server.runtime import Runtime
from memverbs.server.settings import known_keys


def run(env: dict, *args: str) -> CliResult:
    return run_cli(*args, env=env)


def ok(env, *args) -> str:
    proc = run(env, *args)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return proc.stdout


def get_json(env, *keys) -> dict:
    return json.loads(ok(env, "config", "get", *keys, "--json"))


def assert_refused(proc: CliResult, *fragments: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "fix:" in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def file_table(home) -> dict:
    return tomllib.loads(home.config_path.read_text()) if home.config_path.exists() else {}


# -- get ---------------------------------------------------------------------------


def test_get_prints_every_setting_with_its_value(env):
    out = ok(env, "config", "get")
    lines = dict(line.split(" = ", 1) for line in out.splitlines())
    assert set(lines) == set(known_keys())
    assert lines["mcp_surface"] == "null"
    assert lines["mcp.strict_params"] == '"warn"'
    assert lines["brain.path"] == '"brain.db"'


def test_get_one_key_prints_only_that_key(env):
    assert ok(env, "config", "get", "mcp.strict_params").strip() == 'mcp.strict_params = "warn"'


def test_get_json_is_a_flat_object_of_dotted_keys(env):
    values = get_json(env)
    assert list(values) == list(known_keys())
    assert values["mcp_surface"] is None
    assert values["brain.busy_timeout_ms"] == 10_000
    assert values["search.remote_private_pages"] is False
    assert get_json(env, "brain.backend") == {"brain.backend": "sqlite"}


# -- set ---------------------------------------------------------------------------


def test_set_mcp_surface_then_get_shows_it(env, home):
    (home.root / "config.toml").write_text('protocol_installed_at = "2026-01-01T00:00:00.000Z"\n')

    ok(env, "config", "set", "mcp_surface", "verbs")

    assert ok(env, "config", "get", "mcp_surface").strip() == 'mcp_surface = "verbs"'
    assert file_table(home) == {"protocol_installed_at": "2026-01-01T00:00:00.000Z", "mcp_surface": "verbs"}


def test_set_nested_key_writes_its_table_and_takes_effect(env, home):
    ok(env, "config", "set", "mcp.strict_params", "reject")

    assert file_table(home)["mcp"] == {"strict_params": "reject"}
    assert get_json(env, "mcp.strict_params") == {"mcp.strict_params": "reject"}
    rt = Runtime(home)
    try:
        body = Client(rt.mcp_dispatcher("verbs")).err("recall", entity="people/alice", colour="blue")
    finally:
        rt.close()
    assert body["error"] == "invalid_params"


def test_set_integer_and_boolean_values_keep_their_types(env, home):
    ok(env, "config", "set", "brain.busy_timeout_ms", "2500")
    ok(env, "config", "set", "search.remote_private_pages", "true")
    assert file_table(home)["brain"] == {"busy_timeout_ms": 2500}
    assert file_table(home)["search"] == {"remote_private_pages": True}


def test_set_a_string_setting_to_a_number_like_value(env, home):
    ok(env, "config", "set", "source", "2024")
    assert file_table(home)["source"] == "2024"
    assert get_json(env, "source") == {"source": "2024"}


def test_set_invalid_value_is_refused_and_the_file_is_unchanged(env, home):
    ok(env, "config", "set", "mcp_surface", "starter")
    before = home.config_path.read_bytes()

    proc = run(env, "config", "set", "mcp_surface", "everything")

    assert_refused(proc, "mcp_surface", "everything", "verbs", "starter", "full")
    assert home.config_path.read_bytes() == before
    assert get_json(env, "mcp_surface") == {"mcp_surface": "starter"}


def test_refused_value_fix_points_at_the_real_config_file(env, home):
    proc = run(env, "config", "set", "brain.busy_timeout_ms", "-5")
    assert_refused(proc, "brain.busy_timeout_ms")
    mentioned = [word.strip(".,;()'\"") for word in proc.stderr.split() if word.strip(".,;()'\"").endswith("config.toml")]
    assert all(path == str(home.config_path) for path in mentioned), mentioned


def test_set_unknown_key_is_refused_with_did_you_mean(env, home):
    before = home.config_path.read_bytes() if home.config_path.exists() else None

    proc = run(env, "config", "set", "mcp_surfce", "verbs")

    assert_refused(proc, 'unknown setting "mcp_surfce"', 'Did you mean "mcp_surface"?')
    after = home.config_path.read_bytes() if home.config_path.exists() else None
    assert after == before


def test_get_unknown_key_is_refused_with_did_you_mean(env):
    assert_refused(run(env, "config", "get", "mcp.strict_param"), 'Did you mean "mcp.strict_params"?')


def test_set_on_a_malformed_config_is_refused_and_leaves_it_alone(env, home):
    home.config_path.write_text("mcp_surface = [unclosed\n")
    before = home.config_path.read_bytes()

    assert_refused(run(env, "config", "set", "mcp_surface", "verbs"), "not valid TOML")
    assert home.config_path.read_bytes() == before


# -- unset -------------------------------------------------------------------------


def test_unset_removes_the_key_and_keeps_the_rest(env, home):
    ok(env, "config", "set", "mcp_surface", "verbs")
    ok(env, "config", "set", "mcp.strict_params", "reject")

    ok(env, "config", "unset", "mcp_surface")

    assert "mcp_surface" not in file_table(home)
    assert file_table(home)["mcp"] == {"strict_params": "reject"}
    assert get_json(env, "mcp_surface") == {"mcp_surface": None}


def test_unset_nested_key_returns_it_to_the_default(env):
    ok(env, "config", "set", "mcp.strict_params", "reject")
    ok(env, "config", "unset", "mcp.strict_params")
    assert get_json(env, "mcp.strict_params") == {"mcp.strict_params": "warn"}


def test_unset_unknown_key_is_refused(env):
    assert_refused(run(env, "config", "unset", "surface"), "unknown setting")


# -- environment over the file -------------------------------------------------------


def test_environment_overrides_the_file(env, home):
    ok(env, "config", "set", "mcp_surface", "verbs")
    ok(env, "config", "set", "mcp.strict_params", "reject")
    overridden = {**env, "MEMVERBS_MCP_SURFACE": "starter", "MEMVERBS_MCP__STRICT_PARAMS": "warn"}

    values = get_json(overridden)

    assert values["mcp_surface"] == "starter"
    assert values["mcp.strict_params"] == "warn"
    assert file_table(home)["mcp_surface"] == "verbs"  # the file itself is untouched
    assert get_json(env, "mcp_surface") == {"mcp_surface": "verbs"}
