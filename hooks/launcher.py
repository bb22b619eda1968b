"""How a harness starts a hook process: the lean launcher the installers write.

A hook runs on every prompt, so its process start is most of its cost. The
`memverbs` console script pays for `site` (site-packages scanning and every
`.pth` file — an editable install adds an import finder there) and for the
CLI's argument parser, before the hook does anything. The installers write this
instead:

    <venv python> -I -S -c '<bootstrap>' hook <moment> --harness <harness>

`-S` skips `site`; `-I` ignores `PYTHON*` variables and keeps the working
directory (the user's project) off `sys.path`, so no file there can shadow a
module of ours. The bootstrap puts back, explicitly, the two directories the
hook imports from: the one holding the `memverbs` package (site-packages for a
wheel, the checkout for an editable install) and the interpreter's
site-packages (a keyring backend for a remote brain's token lives there).

When memverbs moves — a venv rebuilt for a new Python, a wheel replacing an
editable install — the recorded directory no longer holds the package, and the
bootstrap falls back to running `site` as an ordinary start would, so the hook
still finds whatever memverbs that interpreter has now. The interpreter path is
the venv's own (not resolved through its symlink), which survives upgrades of
memverbs in place; if the interpreter itself is gone the shell reports the
missing command (exit 127), as it would for a missing console script.
`memverbs hook` (the console script) stays the documented, equivalent way in.
"""

from __future__ import annotations

import sys
import time

# `hook` right after the bootstrap keeps the command recognisable as ours (base.is_our_hook).
MARKER = "hook"


def bootstrap_argv() -> list[str]:
    """The argv prefix a harness runs (add the moment and its flags): this interpreter, the bootstrap, `hook`."""
    import json  # noqa: PLC0415 - install time only
    import os  # noqa: PLC0415
    import sysconfig  # noqa: PLC0415

    import memverbs  # noqa: PLC0415

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(memverbs.__file__)))
    dirs = [package_parent]
    purelib = sysconfig.get_paths()["purelib"]
    if os.path.abspath(purelib) != package_parent:
        dirs.append(purelib)
    # Double quotes only (json.dumps writes a valid Python list), so the shell-quoted command stays readable.
    code = (
        f"import os,sys;p={json.dumps(dirs)};"
        'sys.path[:0]=p if os.path.isfile(p[0]+"/memverbs/__init__.py") else __import__("site").main() or [];'
        "from memverbs.hooks.launcher import main;main()"
    )
    return [sys.executable, "-I", "-S", "-c", code, MARKER]


def main() -> None:
    """Run the hook named by argv: the kill switch, then the fast path (an unchanged heartbeat needs none
    of the runner's imports), then the runner. Whatever goes wrong outside the runner's own boundary,
    the hook exits 0 and prints nothing."""
    try:
        from memverbs.hooks.fastpath import process_started  # noqa: PLC0415

        started = process_started()  # the harness has waited since it started this process
    except BaseException:  # noqa: BLE001 - as below: a broken install must not break the session
        started = time.monotonic()
    args = sys.argv[1:]
    if args[:1] == [MARKER]:
        args = args[1:]
    stdin, changed = None, False
    try:
        from memverbs.hooks.fastpath import answer_unchanged, hooks_off  # noqa: PLC0415

        if hooks_off():
            raise SystemExit(0)
        if args[:1] == ["capture"]:  # the session's end: hand the transcript to a detached worker
            import os  # noqa: PLC0415 - loaded with the interpreter already

            from memverbs.hooks.capture import run_capture_hook  # noqa: PLC0415

            run_capture_hook(args, started)
            # Always 0, and nothing to flush (the hook prints nothing; its stdio is /dev/null once it
            # forked): leave without tearing the interpreter down, which after the fork would also
            # copy every page it touched.
            os._exit(0)
        done, stdin, changed = answer_unchanged(args, started)
        if done:
            raise SystemExit(0)
        from memverbs.hooks.runner import exit_now, run_hook  # noqa: PLC0415
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - a broken install must not break the session: the hook is silent
        raise SystemExit(0) from None
    exit_now(run_hook(args, started, stdin, changed))
