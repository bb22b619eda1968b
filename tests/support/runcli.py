"""`memverbs ARGS…` in this process, read the way a subprocess is (import with `from runcli import run_cli`).

A subprocess per CLI call costs the interpreter's start-up and the package's imports
every time; `main(argv)` costs neither. What a separate process would have kept
to itself is isolated here instead: the environment (restored after the call, so
a command that sets a variable cannot leak it into the next test), stdin, stdout
and stderr (fresh buffers, never a terminal, so output is plain), the exit
status (argparse's `SystemExit` is the status, as the shell would see it), and the
keyring backend keyring picked for the last environment.

The console script, signals and real file descriptors (hooks, `serve`) keep
real-subprocess tests; see tests/cli/test_console_script.py.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memverbs.cli.main import main


@dataclass
class CliResult:
    """What `subprocess.run(…, capture_output=True)` returns, for the fields the tests read."""

    args: list[str]
    returncode: int
    stdout: Any  # str, or bytes when run with text=False
    stderr: Any


@contextmanager
def _process_state(env: Mapping[str, str] | None, stdin: bytes, cwd: str | os.PathLike | None):
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    sys.stdin, sys.stdout, sys.stderr = streams
    _forget_keyring_backend()
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        _forget_keyring_backend()
        os.chdir(saved_cwd)
        for stream in streams:
            stream.flush()
            stream.detach()  # a collected wrapper would close the buffer the caller reads
        os.environ.clear()
        os.environ.update(saved_env)


def _forget_keyring_backend() -> None:
    """keyring picks its backend once per process (from PYTHON_KEYRING_BACKEND, its config file
    or what is installed); a new process would pick again from the environment it was given."""
    core = sys.modules.get("keyring.core")
    if core is not None and hasattr(core, "_keyring_backend"):
        core._keyring_backend = None


def run_cli(*args: Any, env: Mapping[str, str] | None = None, stdin: str | bytes | None = None,
            text: bool = True, cwd: str | os.PathLike | None = None) -> CliResult:
    """Run `memverbs ARGS…` through `main(argv)`; env (default: this process's) is the whole environment,
    cwd (default: this process's) the working directory for the call."""
    argv = [str(a) for a in args]
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    with _process_state(env, data, cwd) as (out, err):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse: --help, usage errors
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
    stdout, stderr = out.getvalue(), err.getvalue()
    if text:
        return CliResult(argv, status or 0, stdout.decode("utf-8"), stderr.decode("utf-8"))
    return CliResult(argv, status or 0, stdout, stderr)
