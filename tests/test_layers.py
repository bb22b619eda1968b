"""The package's layers, read from the source: lower rooms never import the CLI, and the
harness table is the one account of the harnesses."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Rooms below the CLI (pyproject.toml maps them into the memverbs package).
LOWER = {"installers": ROOT / "installers", "server": ROOT / "server", "hooks": ROOT / "hooks", "remote": ROOT / "memverbs" / "remote"}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at module level or inside a function (lazy imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_lower_room_imports_the_cli():
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for room in LOWER.values()
        for path in sorted(room.rglob("*.py"))
        for module in sorted(imported_modules(path))
        if module == "memverbs.cli" or module.startswith("memverbs.cli.")
    ]
    assert not offenders, "the CLI only parses and renders; these reach up into it:\n" + "\n".join(offenders)


def test_the_check_sees_a_lazy_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from memverbs.cli.output import fail\n    import memverbs.cli.main\n", encoding="utf-8")
    assert {"memverbs.cli.output", "memverbs.cli.main"} <= imported_modules(sample)


def test_the_hook_path_does_not_import_the_installers():
    """`memverbs hook` runs on every prompt: the installers (and the harness table) stay off it."""
    hook_rooms = [ROOT / "hooks"]
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for room in hook_rooms
        for path in sorted(room.rglob("*.py"))
        for module in sorted(imported_modules(path))
        if module.startswith("memverbs.installers")
    ]
    assert not offenders, "\n".join(offenders)


def test_the_harness_table_matches_the_hook_vocabulary():
    from memverbs.hooks.adapters import ADAPTERS
    from memverbs.hooks.events import INSTALLABLE
    from memverbs.installers.registry import HARNESSES

    assert tuple(spec.name for spec in HARNESSES) == INSTALLABLE
    for spec in HARNESSES:
        assert spec.hook is ADAPTERS[spec.harness]
        assert spec.scopes, spec.name
        anchor_file, _, anchor = spec.docs.partition("#")
        headings = [
            line.lstrip("#").strip() for line in (ROOT / anchor_file).read_text(encoding="utf-8").splitlines() if line.startswith("#")
        ]
        slugs = {"".join(c for c in h.lower().replace(" ", "-") if c.isalnum() or c == "-") for h in headings}
        assert anchor in slugs, f"{spec.name}: {spec.docs} names no heading"


def test_the_hook_fast_paths_copies_equal_their_homes():
    from memverbs.hooks import fastpath
    from memverbs.hooks.events import Harness
    from memverbs.server import home
    from memverbs.server.context import LOCAL_LANE

    assert {h.value for h in Harness} == fastpath.HARNESSES
    assert fastpath.LOCAL_LANE == LOCAL_LANE
    assert fastpath.REMOTE_RECEIPT == home.REMOTE_RECEIPT
    assert fastpath.DEFAULT_SOURCE == home.DEFAULT_SOURCE
    assert fastpath.DEFAULT_BRAIN_NAME == home.DEFAULT_BRAIN_NAME


def test_the_settings_know_the_surfaces_by_one_list():
    from typing import get_args

    from memverbs.server.protocol.surfaces import SURFACES
    from memverbs.server.quickconfig import DEFAULTS
    from memverbs.server.settings import Settings, Surface

    assert get_args(Surface) == SURFACES
    defaults = Settings.model_construct()
    assert defaults.brain.path == DEFAULTS["brain.path"] and defaults.brain.busy_timeout_ms == DEFAULTS["brain.busy_timeout_ms"]
