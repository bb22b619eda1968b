"""The wheel carries every package and every data file the code opens at run time."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROOMS = {"memverbs": "memverbs", "memverbs.server": "server", "memverbs.hooks": "hooks",
         "memverbs.installers": "installers", "memverbs.templates": "templates", "memverbs.plugin": "plugin"}


def test_every_python_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for package, folder in ROOMS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"


def test_package_data_patterns_cover_the_data_files():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = config["package-data"]
    assert "*.json" in data["memverbs.server.conformance"]  # cases.json
    for hidden in (".claude-plugin", ".codex-plugin"):
        assert any(hidden in pattern for pattern in data["memverbs.plugin"])
    assert re.search(r"\.mcp\.json", " ".join(data["memverbs.plugin"]))
