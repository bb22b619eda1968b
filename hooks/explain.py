"""What a hook's diagnostic code means to a person: why it printed nothing, and the fix.

A harness gets silence whatever happens (hooks/runner.py); the code goes to the hooks log. A person
who runs `memverbs hook` at a terminal gets one line on stderr from here instead, and `memverbs
doctor` reads the fixes for the codes it finds in the log. Imported only then, never on a
harness's hook path.
"""

from __future__ import annotations

# Healthy outcomes: the hook worked and had nothing (new) to say.
QUIET = {
    "empty": "nothing to add: the brain has nothing for this session yet",
    "unchanged": "nothing changed since this session's last look, so nothing to add",
    "rate_limited": "skipped: a look at the brain already ran moments ago in this session (one per interval)",
    "off": "hooks are off (MEMVERBS_HOOKS is set to off)",
}

# What went wrong, and its fix (doctor shows the same fixes).
FIXES = {
    "no_brain": "Run `memverbs init` (the hooks point at a home without a brain).",
    "config_error": "Run `memverbs doctor` on that home and fix its config.toml.",
    "brain_error": "The brain is unreadable: see the brain check above.",
    "brain_locked": "Another process held a long write; if it repeats, find it with `fuser` on the brain file.",
    "deadline": "The hook ran out of time; check the disk and the brain's size (`memverbs doctor`).",
    "bad_input": "The harness sent a payload memverbs could not read; reinstall with `memverbs install <harness>`.",
    "unknown_harness": "Reinstall: `memverbs install <harness>` writes the right --harness.",
    "remote_unreachable": "The remote brain did not answer: is its server up? `memverbs auth test URL` checks it.",
    "remote_401": "The remote brain refused the token: `memverbs connect URL` (it asks for the new token) stores a new one.",
    "remote_timeout": "The remote brain answered too slowly for a hook; check the network or the server's load.",
    "remote_no_token": "No token for the remote brain: set MEMVERBS_REMOTE_TOKEN where the harness starts, or connect again.",
}

_PROBLEMS = {
    "no_brain": "there is no brain in this home",
    "config_error": "the home's config.toml cannot be read",
    "brain_error": "the brain cannot be read",
    "brain_corrupt": "the brain file is damaged",
    "brain_locked": "the brain was locked by another process for the whole deadline",
    "deadline": "it ran out of time",
    "bad_input": "its input could not be read",
    "unknown_harness": "that harness is not one memverbs knows",
    "unknown_moment": "that moment is not one memverbs knows",
    "stdout_closed": "its output could not be written",
}

# At a terminal, what a person running the hook by hand should try.
TRY = ('a harness pipes its event as JSON on stdin, e.g. echo \'{"session_id": "test"}\' | '
       "memverbs hook session-start --harness plain")


def why(code: str, detail: str | None = None) -> str:
    """One line (or two, with the fix): why the hook printed nothing."""
    if code in QUIET:
        return QUIET[code]
    problem = _PROBLEMS.get(code)
    if problem is None:
        if code.startswith("verb_"):
            problem = f"the brain answered with an error ({code[5:].replace('_', ' ')})"
        elif code.startswith("remote_"):
            problem = "the remote brain could not answer"
        else:
            problem = "something unexpected failed (the hooks log has its code)"
    if detail:
        problem += f": {detail}"
    if code in ("bad_input", "unknown_harness", "unknown_moment"):
        fix = TRY if code == "bad_input" else "`memverbs hook --help` lists the moments and harnesses"
    else:
        fix = FIXES.get(code, "`memverbs doctor` checks the home, the brain and the hooks' last runs.")
    return f"printed nothing: {problem}\n  fix: {fix}"
