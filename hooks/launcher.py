"""How a harness starts a hook process: the lean launcher the installers write.

A hook runs on every prompt, so its process start is most of its cost. The
`memverbs` console script pays for `site` (site-packages scanning and every
`.pth` file — an editable install adds an import finder there) and for the
CLI's argument parser, before the hook does anything. The installers write a
small launcher file instead, `$MEMVERBS_HOME/bin/memverbs-hook`, and a harness
runs it by its path:

    /home/me/.memverbs/bin/memverbs-hook <moment> --harness <harness>

(Claude Code echoes a hook's command into the model's context after a
compaction: that is one short line, not the bootstrap.) The file is a script of
the interpreter memverbs is installed in:

    #!<venv python> -IS
    <bootstrap>

`-S` skips `site`; `-I` ignores `PYTHON*` variables and keeps both the working
directory (the user's project) and the script's own folder off `sys.path`, so no
file there can shadow a module of ours. The bootstrap puts back, explicitly, the
two directories the hook imports from: the one holding the `memverbs` package
(site-packages for a wheel, the checkout for an editable install) and the
interpreter's site-packages (a keyring backend for a remote brain's token lives
there). They go after the standard library's directories, where an ordinary start
puts site-packages: each of the hundred standard modules a session start imports is
then found at its first look, not after a look in each of ours. An interpreter path a `#!` line cannot hold (too long, or with spaces)
gets a `/bin/sh` line that execs it with the same flags instead.

When memverbs moves — a venv rebuilt for a new Python, a wheel replacing an
editable install — the recorded directory no longer holds the package, and the
bootstrap falls back to running `site` as an ordinary start would, so the hook
still finds whatever memverbs that interpreter has now. The interpreter path is
the venv's own (not resolved through its symlink), which survives upgrades of
memverbs in place; if the interpreter itself is gone the shell reports it
(exit 126/127), as it would for a missing console script.

One file per home: every harness install writes it (the latest install's
interpreter wins) and records it in its receipt; the uninstall of the last
harness that records it removes it. `installers/base.py`'s `hook_moment` knows
this command, the bootstrap one-liner earlier installs wrote
(`<python> -I -S -c '<bootstrap>' hook <moment> …`) and the console script
(`memverbs hook <moment>`), so a re-install upgrades and an uninstall removes
each of them. The JS plugins (opencode, OpenClaw) spawn `bootstrap_argv()`
themselves: no shell, nothing echoed, no file to keep. `memverbs hook` stays the
documented, equivalent way in.
"""

from __future__ import annotations

import gc
import sys
import time

# `hook` right after the bootstrap keeps the one-liner recognisable as ours (base.hook_moment).
MARKER = "hook"
LAUNCHER_NAME = "memverbs-hook"
LAUNCHER_MARK = "# memverbs hook launcher"  # in every launcher file: ours, not a file someone else put there
_SHEBANG_MAX = 127  # the longest `#!` line every kernel memverbs runs on reads whole


def bootstrap_code() -> str:
    """The bootstrap: this memverbs's directories on the path (or `site` when it moved), then main()."""
    import json  # noqa: PLC0415 - install time only
    import os  # noqa: PLC0415
    import sysconfig  # noqa: PLC0415

    import memverbs  # noqa: PLC0415

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(memverbs.__file__)))
    dirs = [package_parent]
    purelib = sysconfig.get_paths()["purelib"]
    if os.path.abspath(purelib) != package_parent:
        dirs.append(purelib)
    # Double quotes only (json.dumps writes a valid Python list), so a shell-quoted command stays readable.
    return (
        f"import os,sys;p={json.dumps(dirs)};"
        'sys.path+=p if os.path.isfile(p[0]+"/memverbs/__init__.py") else __import__("site").main() or [];'
        "from memverbs.hooks.launcher import main;main()"
    )


def bootstrap_argv() -> list[str]:
    """The argv prefix a plugin spawns (add the moment and its flags): this interpreter, the bootstrap, `hook`."""
    return [sys.executable, "-I", "-S", "-c", bootstrap_code(), MARKER]


def launcher_script() -> str:
    """The launcher file's text, for this interpreter and this memverbs."""
    import shlex  # noqa: PLC0415 - install time only

    python = sys.executable
    shebang = f"#!{python} -IS"
    if len(shebang) > _SHEBANG_MAX or not python.isascii() or any(c.isspace() for c in python):
        # A line the kernel would cut or split: /bin/sh execs the interpreter instead. To Python, the
        # two lines after it are one string literal (pip's launchers do the same).
        shebang = "#!/bin/sh\n'''exec' " + shlex.quote(python) + ' -I -S "$0" "$@"\n' + "' '''"
    return (
        f"{shebang}\n{LAUNCHER_MARK}: written by `memverbs install`, removed by `memverbs uninstall`.\n"
        "# It runs `memverbs hook ARGS` without `site` or the CLI's parser (memverbs.hooks.launcher).\n"
        f"{bootstrap_code()}\n"
    )


def main() -> None:
    """Run the hook named by argv: the kill switch, then the fast path (an unchanged heartbeat needs none
    of the runner's imports), then the runner. Whatever goes wrong outside the runner's own boundary,
    the hook exits 0 and prints nothing.

    The cyclic garbage collector is off for the process: a hook lives for tens of milliseconds and
    then exits, so nothing it could reclaim would ever be reused, while its passes over the
    objects a session start's imports create cost several milliseconds. Reference counting still frees
    everything that is not a cycle. The session's end hands its transcript to a worker that may run for
    seconds: it turns the collector back on first."""
    gc.disable()
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

            gc.enable()
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
