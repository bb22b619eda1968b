"""The suite does not depend on the day it runs: the fast tier passes with the clock a year ahead.

Recorded material (transcripts, stores, notes) carries fixed dates; a test that judges it by the wall
clock ("captured within a day") passes only while the recording is young, and then fails every
submission whatever it changes. This runs the fast tier again with every process's wall clock moved
365 days ahead, so such a test fails here on the day it is written instead of a week later.

The clock is moved by libfaketime, preloaded into the pytest run and inherited by every process it
starts (CLI calls, stdio servers, hooks, SQLite's `'now'`). It is built here from the C source the
`libfaketime` package on PyPI vendors, with only the wall clock faked: the build the package
installs also wraps sleeps, timers and pthread waits, and those wrappers hang timed lock waits or
abort CPython's GIL (`take_gil: PyCOND_WAIT failed`) under load. Monotonic time stays real, so
timeouts and durations are measured as before.

What libfaketime cannot move is the kernel's file times: a file written now still says today. The
few tests that compare a file's age with the clock (`real_clock`) are left out of the year-ahead run;
the product's own age checks read both from the same real clock in use, where they agree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # a whole second run of the fast tier, in processes of its own

YEAR_AHEAD = "+365d"


def _wall_clock_only_libfaketime(build_dir: Path) -> Path:
    """libfaketime.so.1 built from the PyPI package's vendored source, faking the wall clock only."""
    libfaketime = pytest.importorskip("libfaketime", reason="the test extras bring libfaketime (its C source)")
    source = Path(libfaketime.__file__).parent / "vendor" / "libfaketime" / "src"
    if not shutil.which("make") or not shutil.which(os.environ.get("CC", "cc")):
        pytest.fail("building libfaketime needs make and a C compiler (Debian's build-essential)")
    shutil.copytree(source, build_dir, ignore=shutil.ignore_patterns("*.o", "*.so*", "faketime"))
    # -U after the Makefile's own -D: no sleep, timer or pthread wrappers (see the module docstring).
    flags = "FAKETIME_COMPILE_CFLAGS=-UFAKE_PTHREAD -UFAKE_SLEEP -UFAKE_TIMERS"
    subprocess.run(["make", "-s", "libfaketime.so.1", flags], cwd=build_dir, check=True, capture_output=True, timeout=300)
    return build_dir / "libfaketime.so.1"


def _clock_env(library: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "FAKETIME"))}
    return {**env, "LD_PRELOAD": str(library), "FAKETIME": YEAR_AHEAD, "DONT_FAKE_MONOTONIC": "1"}


def test_the_clock_is_really_moved_in_every_kind_of_process(tmp_path):
    """The instrument first: Python's clocks and SQLite's `'now'` read a year ahead, sleeps and timed
    waits still work, in a child process of a child process (how a CLI call or a hook runs)."""
    library = _wall_clock_only_libfaketime(tmp_path / "libfaketime")
    probe = (
        "import datetime, sqlite3, subprocess, sys, threading, time\n"
        "lock = threading.Lock(); lock.acquire(); assert lock.acquire(timeout=0.05) is False\n"
        "time.sleep(0.01)\n"
        "print(time.time(), datetime.datetime.now().timestamp(),"
        " sqlite3.connect(':memory:').execute(\"select strftime('%s', 'now')\").fetchone()[0])\n"
    )
    outer = f"import subprocess, sys; sys.stdout.write(subprocess.run([sys.executable, '-c', {probe!r}], capture_output=True, text=True, check=True).stdout)"
    import time

    before = time.time()
    out = subprocess.run([sys.executable, "-c", outer], env=_clock_env(library), capture_output=True, text=True, timeout=60, check=True)
    for reading in map(float, out.stdout.split()):
        assert 364 * 86400 < reading - before < 366 * 86400, out.stdout


def test_the_fast_tier_passes_with_the_clock_a_year_ahead(tmp_path):
    library = _wall_clock_only_libfaketime(tmp_path / "libfaketime")
    root = Path(__file__).resolve().parent.parent
    # The inner run's own temporary root, as short as a plain run's (/tmp/pytest-of-…): a few tests hold
    # paths to a length a user's would have (a hook command of at most 160 characters).
    basetemp = Path(tempfile.mkdtemp(prefix="mv-year-"))
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "not e2e and not real_clock", "-q", "-p", "no:cacheprovider",
             "--numprocesses=2", "--basetemp", str(basetemp)],
            cwd=root, env=_clock_env(library), capture_output=True, text=True, timeout=1800,
        )
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-60:])
    assert run.returncode == 0, f"the fast tier fails with the clock {YEAR_AHEAD}:\n{tail}"
