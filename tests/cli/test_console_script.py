"""The installed `memverbs` script as a real process: what only a process shows.

Every other CLI test runs `main(argv)` in process (tests/support/runcli.py); these
keep the console-script entry point, exit statuses as the shell sees them, a reader
that goes away, and Ctrl-C honest.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time


def run(memverbs_cmd, env, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*memverbs_cmd, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def test_the_script_runs_a_command_end_to_end_with_exit_0(memverbs_cmd, env):
    saved = run(memverbs_cmd, env, "remember", "Alice prefers tea", "--provenance", "t", "--entity", "people/alice", "--json")
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["status"] == "inserted"
    recalled = run(memverbs_cmd, env, "recall", "--entity", "people/alice", "--json")
    assert recalled.returncode == 0 and recalled.stderr == ""
    assert [f["fact"] for f in json.loads(recalled.stdout)["facts"]] == ["Alice prefers tea"]


def test_exit_statuses_the_shell_sees(memverbs_cmd, env):
    usage = run(memverbs_cmd, env, "remember", "Alice prefers tea")  # --provenance is required
    assert usage.returncode == 2 and "fix:" in usage.stderr and usage.stdout == ""
    missing = run(memverbs_cmd, env, "get-page", "people/nobody")
    assert missing.returncode == 1 and "fix:" in missing.stderr and "Traceback" not in missing.stderr
    unknown = run(memverbs_cmd, env, "remembr")
    assert unknown.returncode == 2 and "did you mean `memverbs remember`" in unknown.stderr


def test_version_and_help(memverbs_cmd, env):
    version = run(memverbs_cmd, env, "--version")
    assert version.returncode == 0 and version.stdout.startswith("memverbs ")
    helped = run(memverbs_cmd, env, "--help")
    assert helped.returncode == 0 and "exit status:" in helped.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(memverbs_cmd, env):
    """`memverbs … | head`: the pipe closes early; exit 0 and no traceback, as a Unix tool does."""
    proc = subprocess.Popen([*memverbs_cmd, "protocol", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_ctrl_c_stops_the_ui_server_cleanly(memverbs_cmd, env):
    # A shell's background job starts with SIGINT ignored, and a child inherits that: give it a terminal's default.
    proc = subprocess.Popen([*memverbs_cmd, "ui", "--no-open"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert "http://127.0.0.1:" in proc.stdout.readline()  # listening: the handler is in place
        time.sleep(0.2)  # into serve_forever
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Serving, `memverbs ui` takes Ctrl-C as its stop (0); a Ctrl-C a moment earlier is main's 130.
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err

