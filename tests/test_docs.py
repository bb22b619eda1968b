"""Docs are tests: every CLI command, setting and MCP tool is documented, and generated docs are current."""

import re
from pathlib import Path

from memverbs.cli.parser import build_parser
from memverbs.server.protocol import docgen
from memverbs.server.protocol.registry import OPERATIONS
from memverbs.server.settings import known_keys

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return list(action.choices)


def test_every_cli_command_is_in_the_readme():
    missing = [c for c in subcommands() if not re.search(rf"`memverbs [^`]*\b{re.escape(c)}\b", README)]
    assert missing == []


def test_every_setting_is_documented():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert [k for k in known_keys() if f"`{k}`" not in text] == []


def test_every_setting_has_a_description():
    assert [k for k, desc in known_keys().items() if not desc] == []


def test_tools_reference_is_generated_from_the_registry():
    assert (ROOT / "docs" / "tools.md").read_text(encoding="utf-8") == docgen.render(), (
        "docs/tools.md is stale: run `python -m memverbs.server.protocol.docgen > docs/tools.md`"
    )
    assert all(op.description for op in OPERATIONS)


def test_cli_reference_is_generated_from_the_parser():
    from memverbs.cli import clidoc

    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == clidoc.render(), (
        "docs/cli.md is stale: run `python -m memverbs.cli.clidoc > docs/cli.md`"
    )


def test_readme_gives_the_two_setup_commands_and_ci_runs_the_test_one():
    assert "pip install . && memverbs init" in README
    test_cmd = 'pip install -e ".[test]" && pytest'
    assert test_cmd in README
    assert test_cmd in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_architecture_map_names_every_storage_module_and_no_gone_one():
    """docs/architecture.md's `server/brain/` row is the map of the storage seam: it names each of
    its modules, and none that no longer exists (a store written once must not leave its old
    per-backend names behind in the map)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `server/brain/` |"))
    named = set(re.findall(r"`([a-z_]+\.py)`", row))
    present = {p.name for p in (ROOT / "server" / "brain").glob("*.py") if p.name != "__init__.py"}
    assert sorted(present - named) == [], "modules the map does not name"
    assert sorted(named - present) == [], "names in the map with no module"


def test_the_oauth_routes_limits_are_documented_as_they_are():
    """docs/remote.md, "Limits on the OAuth routes", says the numbers server/oauth/limits.py holds."""
    from memverbs.server.oauth import consent, limits
    from memverbs.server.oauth.limits import Logins

    text = (ROOT / "docs" / "remote.md").read_text(encoding="utf-8")
    section = text[text.index("### Limits on the OAuth routes"):text.index("### Serving it behind TLS")]
    per = {3600.0: "an hour", 60.0: "a minute"}
    said = [f"{limits.FORM_BODY_BYTES // 1024} KiB", f"{limits.REGISTRATION_BODY_BYTES // 1024} KiB",
            f"{limits.MAX_CLIENTS:,} live clients", f"{limits.MAX_PENDING_PER_CLIENT}\n  wait per client",
            f"{limits.MAX_PENDING} in all", f"{limits.MAX_TEXT['client_name']} characters", f"{limits.MAX_URL:,}",
            f"{limits.MAX_LIST['redirect_uris'][0]}\n  `redirect_uris`", f"{limits.MAX_LIST['contacts'][0]} `contacts`",
            f"{limits.MAX_JWKS_BYTES // 1024} KiB", "pool of one thread" if consent.HASH_WORKERS == 1 else "?"]
    for path, (mine, everyone) in limits.PACES.items():
        said.append(f"{mine[0]} {per[mine[1]]}" if path != "/consent" else f"{mine[0]} {per[mine[1]]} per address")
        if everyone:
            said.append(f"{everyone[0]}")
    logins = Logins()
    for backoff in (logins.per_client, logins.overall):
        said += [f"({backoff.free}, then", f"{backoff.base_s:g} s doubling"]
    said += ["up to\n  15 min", "up to 60 s"] if (logins.per_client.cap_s, logins.overall.cap_s) == (900.0, 60.0) else ["?"]
    flat = " ".join(section.split())
    missing = [s for s in said if " ".join(s.split()) not in flat]
    assert missing == []


def test_every_module_path_the_architecture_names_exists():
    """docs/architecture.md names modules by path (`server/brain/stores.py`, `hooks/launcher.py`,
    `memverbs/cli/`) and by file name within a folder it has named (`main.py`): each path is there,
    and each file name is some module's, so a move or a rename cannot leave the map behind. A
    placeholder (`installers/<harness>.py`) is a recipe's, not a module."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rooms = "|".join(("server", "hooks", "installers", "memverbs", "tests", "benchmarks", "plugin", "templates", "docs"))
    paths = {m.rstrip(".,:;") for m in re.findall(rf"(?<![\w./$~-])((?:{rooms})/[\w./<>*-]*)", text)}
    paths = {p for p in paths if "<" not in p and "*" not in p}
    assert len(paths) > 40  # the map names modules by path throughout
    assert sorted(p for p in paths if not (ROOT / p).exists()) == [], "paths the map names that do not exist"

    files = {p.name for p in ROOT.rglob("*") if ".venv" not in p.parts and "node_modules" not in p.parts}
    named = set(re.findall(r"`([A-Za-z_][\w-]*\.(?:py|js|md))`", text)) | set(re.findall(r"\]\(([\w-]+\.md)[#)]", text))
    assert sorted(n for n in named if n not in files) == [], "file names the map gives that no file has"
    links = set(re.findall(r"\]\(([\w-]+\.md)[#)]", text))
    assert sorted(n for n in links if not (ROOT / "docs" / n).exists()) == [], "docs the map links that are not there"
