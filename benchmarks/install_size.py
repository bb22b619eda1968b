"""What `pip install memverbs` puts on a disk: venv size and package count over an empty venv.

    python -m benchmarks.install_size                    # this checkout: default install and [embeddings]
    python -m benchmarks.install_size --tree DIR --label "before"   # another source tree (e.g. `git archive` of main)

Each variant is installed (not editable: a wheel built from the tree, as pip users get it) into a
fresh venv under a temporary directory; the size is that venv's bytes on disk minus a fresh empty
venv's (Python's own pip included in both), the count is `pip list` minus the empty venv's. The
largest packages are listed by their installed folders, so what dominates is named, not guessed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.results_file import replace_section

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- install-size:begin -->", "<!-- install-size:end -->"
TARGET_MB = 80.0


def _du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                total += os.lstat(p).st_blocks * 512
    return total


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    return where / "bin" / "python"


def _packages(python: Path) -> list[str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], check=True, capture_output=True, text=True)
    return sorted(p["name"].lower() for p in json.loads(out.stdout))


def _site(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def _biggest(site: Path, base: set[str], n: int = 6) -> list[tuple[str, float]]:
    sizes = []
    for entry in site.iterdir():
        if entry.name.endswith((".dist-info", ".pth")) or entry.name in base or entry.name == "__pycache__":
            continue
        sizes.append((entry.name, _du(entry) / 1e6 if entry.is_dir() else entry.stat().st_size / 1e6))
    return sorted(sizes, key=lambda s: -s[1])[:n]


def measure(tree: Path, extras: str = "") -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        empty = _venv(Path(tmp) / "empty")
        base_bytes, base_pkgs = _du(Path(tmp) / "empty"), set(_packages(empty))
        base_site = {e.name for e in _site(empty).iterdir()}
        python = _venv(Path(tmp) / "full")
        # A copy, so the build leaves nothing in the tree (and a checkout's venv and caches stay out).
        src = Path(tmp) / "src"
        shutil.copytree(tree, src, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "build", ".cache", "tests",
                                                                  "__pycache__", ".mypy-tree", ".ci-harnesses"))
        spec = f"{src}[{extras}]" if extras else str(src)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-warn-script-location", spec], check=True)
        pkgs = [p for p in _packages(python) if p not in base_pkgs]
        return {
            "extras": extras,
            "mb_over_empty": round((_du(Path(tmp) / "full") - base_bytes) / 1e6, 1),
            "packages": len(pkgs),
            "biggest": [(name, round(mb, 1)) for name, mb in _biggest(_site(python), base_site)],
        }


def section(rows: list[tuple[str, dict]]) -> str:
    lines = [
        BEGIN,
        "## Install size (`python -m benchmarks.install_size`)",
        "",
        "A wheel of the tree installed into a fresh venv; MB on disk over a fresh empty venv (its pip",
        f"included in both), packages over the empty venv's. Target: the default install ≤ {TARGET_MB:.0f} MB.",
        "",
        "| install | MB over an empty venv | packages | largest installed folders (MB) |",
        "|---|---:|---:|---|",
    ]
    for label, r in rows:
        biggest = ", ".join(f"{name} {mb}" for name, mb in r["biggest"])
        lines.append(f"| {label} | {r['mb_over_empty']} | {r['packages']} | {biggest} |")
    lines += ["", END]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=HERE.parent, help="the source tree to install (default: this checkout)")
    ap.add_argument("--label", default="", help="a label for this tree's rows (printed as JSON, not written to RESULTS.md)")
    ap.add_argument("--write", action="store_true", help="write the rows into benchmarks/RESULTS.md")
    args = ap.parse_args()
    rows = [(f"{args.label} `pip install memverbs`".strip(), measure(args.tree))]
    if args.tree == HERE.parent:
        rows.append((f"{args.label} `pip install 'memverbs[embeddings]'`".strip(), measure(args.tree, "embeddings")))
    print(json.dumps(rows, indent=2))
    if args.write:
        replace_section(BEGIN, END, section(rows))


if __name__ == "__main__":
    main()
