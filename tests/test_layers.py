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


# The rooms as the wheel names them (pyproject.toml's package-dir), plus the benchmarks.
ROOMS = {"memverbs": ROOT / "memverbs", "memverbs.server": ROOT / "server", "memverbs.hooks": ROOT / "hooks",
         "memverbs.installers": ROOT / "installers", "memverbs.plugin": ROOT / "plugin",
         "memverbs.templates": ROOT / "templates", "benchmarks": ROOT / "benchmarks"}


def module_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in ROOMS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if any(part.startswith(".") for part in parts):
                continue  # benchmarks/.cache/ holds a venv of its own (hook_timing's wheel install): not ours
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the modules of ours it imports: at module level, inside a function or under
    TYPE_CHECKING (each is a dependency), relative imports resolved, `from pkg import module` included."""
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            deps.update(t for t in targets if t in files and t != name)
        graph[name] = deps
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circles():
    circles = import_circles(import_graph(module_files()))
    assert not circles, "modules that import each other (move the shared piece where both can import it):\n" + "\n".join(
        " ↔ ".join(c) for c in circles)


def test_the_circle_check_sees_lazy_and_type_only_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from pkg import b\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
                                   encoding="utf-8")
    (tmp_path / "c.py").write_text("import pkg.a\n", encoding="utf-8")
    files = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py", "pkg.c": tmp_path / "c.py"}
    assert import_circles(import_graph(files)) == [["pkg.a", "pkg.b"]]
