"""The wheel carries every package and every data file the code opens at run time."""

import re
import tomllib
from pathlib import Path

import pytest

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


@pytest.mark.e2e  # builds and installs the wheel
def test_the_wheel_carries_the_docs_memverbs_docs_prints(tmp_path):
    """A pip-only user has no docs/ folder: `memverbs docs TOPIC` reads the copies the wheel carries
    (as `memverbs/docs/*.md`); the screenshots under docs/ui/ stay out of it."""
    import shutil
    import subprocess
    import sys
    import zipfile

    # A clean copy of the source: an in-tree build would reuse a stale build/ folder.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "tests", "benchmarks",
                                                                "__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("memverbs-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    docs = {n.removeprefix("memverbs/docs/") for n in names if n.startswith("memverbs/docs/")}
    assert docs == {p.name for p in (ROOT / "docs").glob("*.md")}
    assert not [n for n in names if n.endswith(".png")]
    # And `memverbs docs` finds them there: the wheel unpacked as site-packages would hold it, no site (-S), so
    # neither this checkout nor its editable install can answer instead.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    listed = subprocess.run([sys.executable, "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                             "from memverbs.cli.docs import topics; print(*topics()); print(topics()['hooks'])", str(site)],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names_line, where = listed.stdout.splitlines()
    assert names_line.split() == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert where == str(site / "memverbs" / "docs" / "hooks.md")
