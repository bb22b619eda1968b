"""A read command answers at once: it builds one command's parser, reads the config without
pydantic-settings, and imports neither the MCP SDK nor another command's module. (How long it takes
is benchmarks/cli_latency.py's to measure; this keeps what makes it fast from coming undone.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memverbs.cli.completion import subcommands
from memverbs.cli.parser import build_parser

READS = (
    ["entity", "people/alice"],
    ["recall", "--entity", "people/alice"],
    ["recall", "--query", "tea preferences"],
    ["search", "tea"],
    ["stats"],
    ["list-pages"],
)
# Modules a read command does without: the MCP SDK, the full settings, another command's module, the
# hook runner, and Snowball's other languages.
HEAVY = ("mcp", "pydantic", "pydantic_settings", "memverbs.cli.sync", "memverbs.cli.page_history", "memverbs.hooks.runner",
         "memverbs.server.settings", "snowballstemmer.german_stemmer", "httpx", "logging")


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a))
def test_a_read_command_imports_nothing_heavy(env, args):
    code = (
        "import sys, atexit\n"
        f"atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})), file=sys.stderr))\n"
        "from memverbs.cli.main import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def test_a_configured_provider_still_loads_the_full_settings(env, home):
    """The quick reading only says "no provider": a configured one is built from the full settings."""
    from memverbs.server.runtime import Runtime

    home.config_path.write_text('[embeddings]\nmodel = "text-embedding-3-small"\nbase_url = "http://127.0.0.1:9/v1"\n')
    runtime = Runtime.quick(home)
    try:
        assert runtime.providers.embeddings_configured
        assert runtime.settings is not None and runtime.settings.embeddings.model == "text-embedding-3-small"
    finally:
        runtime.close()
    home.config_path.write_text("")
    runtime = Runtime.quick(home)
    try:
        assert not runtime.providers.embeddings_configured and not runtime.providers.llm_configured
        assert not runtime._loaded  # answered without pydantic-settings
    finally:
        runtime.close()


def _described(parser) -> list[tuple]:
    """What a parser takes, as help and parsing see it: every option, its choices, default and help."""
    return [(a.option_strings, a.dest, a.nargs, a.default, a.choices if not isinstance(a.choices, dict) else sorted(a.choices),
             a.help, a.metavar, a.required) for a in parser._actions]


def test_a_one_command_tree_builds_each_command_exactly_as_the_whole_tree_does():
    whole = build_parser()
    for name, full in subcommands(whole).items():
        alone = subcommands(build_parser(only=name))
        assert {id(p) for p in alone.values()} == {id(alone[name])}, name  # that command alone (and its aliases)
        assert _described(alone[name]) == _described(full), name
        assert alone[name].format_help() == full.format_help(), name
        for action, child in subcommands(full).items():  # config get, auth create, …
            assert _described(subcommands(alone[name])[action]) == _described(child), (name, action)
