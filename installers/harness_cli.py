"""The one way memverbs runs a command of a harness's own CLI: captured, stdin closed, a deadline,
and a clear InstallError when the binary is missing, hangs or fails."""

from __future__ import annotations

import subprocess

from memverbs.installers.files import InstallError


def run_cli(argv: list[str], env: dict | None = None, *, check: bool = True) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise InstallError(f"{argv[0]} is not on PATH", f"Install {argv[0]} first, or check PATH.") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"`{' '.join(argv[:3])} …` did not finish in 120 s", "Run it by hand to see why.") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise InstallError(f"`{' '.join(argv[:4])} …` failed: {' / '.join(detail)}", "Run it by hand to see the full error.")
    return proc
