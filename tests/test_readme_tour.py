"""The README's five-minute tour runs verbatim: every `$ command` in its console blocks succeeds, one after the
other on a fresh brain, and prints what the README shows under it (dates, times and the inspector's URL aside)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=\S+")


def tour_steps(readme: str) -> list[tuple[str, str]]:
    """(command, the output shown under it) for every `$ ` line of the tour section's console blocks."""
    steps: list[tuple[str, list[str]]] = []
    in_tour = in_console = in_fence = False
    for line in readme.splitlines():
        if line.startswith("```"):
            in_console = not in_fence and line == "```console"
            in_fence = not in_fence
            continue
        if not in_fence and line.startswith("## "):
            in_tour = line == "## A five-minute tour"
        elif in_tour and in_console:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in steps]


def normalized(text: str) -> str:
    text = URL.sub("URL", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", text)
    return re.sub(r"\b\d{2}:\d{2}\b", "TIME", text).rstrip("\n")


def test_the_tour_is_found():
    steps = tour_steps((ROOT / "README.md").read_text(encoding="utf-8"))
    commands = [cmd.split()[1] if cmd.startswith("memverbs") else cmd.split("| ")[-1].split()[1] for cmd, _ in steps]
    assert {"remember", "put-page", "recall", "entity", "search", "context-pack", "ui"} <= set(commands)
    assert all(out for _, out in steps), "the tour shows what each command prints"


def test_the_readme_tour_runs_verbatim(env, memverbs_cmd, tmp_path):
    env = {k: v for k, v in env.items() if k == "MEMVERBS_HOME" or not k.startswith("MEMVERBS_")}
    env["PATH"] = f"{Path(memverbs_cmd[0]).parent}{os.pathsep}{env['PATH']}"
    env["BROWSER"] = "true"  # `memverbs ui` opens the URL with webbrowser, which runs $BROWSER
    work = tmp_path / "work"  # outside any git repository, as the README says
    work.mkdir()
    for command, shown in tour_steps((ROOT / "README.md").read_text(encoding="utf-8")):
        if command == "memverbs ui":
            _check_ui(command, shown, env, work)
            continue
        proc = subprocess.run(["bash", "-c", command], env=env, cwd=work, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert normalized(proc.stdout) == normalized(shown), command


def _check_ui(command: str, shown: str, env: dict, work: Path) -> None:
    """The inspector keeps serving until Ctrl-C: read what it prints, open the page it names, stop it."""
    proc = subprocess.Popen(["bash", "-c", f"exec {command}"], env=env, cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        printed = [proc.stdout.readline() for _ in shown.splitlines()]
        assert normalized("".join(printed)) == normalized(shown), "".join(printed)
        url = URL.search(printed[0])
        assert url is not None
        page = httpx.get(url.group(0), timeout=10, follow_redirects=True)
        assert page.status_code == 200 and "Billing deploys need a feature flag" in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
