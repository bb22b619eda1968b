"""The package's layers, read from the source: every room on one floor, every arrow pointing down
(`FLOORS`), no two modules importing each other, and the harness table the one account of the harnesses."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


@functools.cache
def our_graph() -> dict[str, set[str]]:
    return import_graph(module_files())


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
    circles = import_circles(our_graph())
    assert not circles, "modules that import each other (move the shared piece where both can import it):\n" + "\n".join(
        " ↔ ".join(c) for c in circles)


def test_the_circle_check_sees_lazy_and_type_only_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from pkg import b\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
                                   encoding="utf-8")
    (tmp_path / "c.py").write_text("import pkg.a\n", encoding="utf-8")
    files = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py", "pkg.c": tmp_path / "c.py"}
    assert import_circles(import_graph(files)) == [["pkg.a", "pkg.b"]]


# The house's floors, the ground first: a room imports only rooms on floors below its own (at module
# level, inside a function or under TYPE_CHECKING alike). A room is a top-level folder of the
# checkout, or a folder inside one of the two trunks the wheel opens (`memverbs/`, `server/`), whose
# own loose modules are each a room of their own; a folder's subfolders are part of its room
# (server/capture/readers is server/capture's). docs/architecture.md draws the same floors.
FLOORS: tuple[tuple[str, ...], ...] = (
    # words and records: the standard library only
    ("memverbs/__init__.py", "server/__init__.py", "server/record.py", "server/errors.py", "server/common_words.py",
     "server/terms.py", "server/names.py", "server/timeparse.py", "server/plural.py", "server/private_files.py",
     "plugin", "templates"),
    # the home, its files and people; which names a text holds; a page's text (its markdown, chunks)
    ("server/files.py", "server/home.py", "server/people.py", "server/usage.py", "server/name_index.py", "server/pages"),
    # storage: the brain, and the few settings a hook reads without pydantic
    ("server/brain", "server/quickconfig.py"),
    # the settings, the registry of operations, a session's project
    ("server/settings.py", "server/protocol", "server/projects.py"),
    # providers (and doctor's probes of them), the conformance runner
    ("server/providers", "server/conformance"),
    # who calls (the Caller), filling vectors, a remote brain from this machine's side
    ("server/context.py", "server/reindex.py", "memverbs/remote"),
    # every operation: the verbs and page operations, the dispatcher, tokens
    ("server/verbs", "server/dispatch.py", "server/tokens.py"),
    # one home's runtime; OAuth inside `serve --http`
    ("server/runtime.py", "server/oauth"),
    # the transports, automatic capture
    ("server/transport", "server/capture"),
    # the lifecycle hooks, markdown folders
    ("hooks", "server/sync"),
    ("installers",),
    ("memverbs/doctor.py",),
    ("memverbs/ui",),
    ("memverbs/cli",),
    ("memverbs/__main__.py", "benchmarks"),
)
TRUNKS = ("memverbs", "server")


def room_of(path: Path) -> str:
    """The room a file stands in, as FLOORS names it."""
    parts = path.relative_to(ROOT).parts
    if parts[0] in TRUNKS:
        return "/".join(parts[:2])
    return parts[0]


def upward_arrows(graph: dict[str, set[str]], files: dict[str, Path],
                  floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """Every import from a room to a room on its own floor or above, in words."""
    floor = {room: n for n, rooms in enumerate(floors, 1) for room in rooms}
    found = []
    for module, deps in sorted(graph.items()):
        here = room_of(files[module])
        for dep in sorted(deps):
            there = room_of(files[dep])
            if here != there and floor[there] >= floor[here]:
                found.append(f"{here} (floor {floor[here]}) -> {there} (floor {floor[there]}): {module} imports {dep}")
    return found


def test_every_room_stands_on_one_floor():
    rooms = {room_of(path) for path in module_files().values()}
    named = [room for rooms_ in FLOORS for room in rooms_]
    assert len(named) == len(set(named)), "a room named on two floors"
    assert rooms - set(named) == set(), "rooms FLOORS does not place: give each a floor above everything it imports"
    assert set(named) - rooms == set(), "FLOORS names rooms that are not there"


def test_arrows_point_down():
    up = upward_arrows(our_graph(), module_files(), FLOORS)
    assert not up, ("imports that point up a floor (move what two rooms share into the room below, or the "
                    "importer up):\n" + "\n".join(up))


def test_the_floor_check_sees_an_arrow_up_and_one_across(tmp_path):
    files = {"memverbs.server.errors": ROOT / "server" / "errors.py", "memverbs.cli.ops": ROOT / "memverbs" / "cli" / "ops.py",
             "memverbs.hooks.runner": ROOT / "hooks" / "runner.py", "memverbs.server.sync.state": ROOT / "server" / "sync" / "state.py"}
    graph = {"memverbs.server.errors": {"memverbs.cli.ops"}, "memverbs.cli.ops": {"memverbs.server.errors"},
             "memverbs.hooks.runner": {"memverbs.server.sync.state"}, "memverbs.server.sync.state": set()}
    assert upward_arrows(graph, files, FLOORS) == [
        "hooks (floor 10) -> server/sync (floor 10): memverbs.hooks.runner imports memverbs.server.sync.state",
        "server/errors.py (floor 1) -> memverbs/cli (floor 14): memverbs.server.errors imports memverbs.cli.ops",
    ]
