"""`memverbs doctor`, per harness: is memverbs still wired in the way the receipt says?

Read-only. For every harness with a receipt: each recorded file still parses and
still holds our entry, the server entry points at a memverbs that exists, the
hooks are wired (and, for Codex, still trusted), and the last hook runs were
healthy — each problem with its fix.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from memverbs.hooks.events import Harness
from memverbs.hooks.explain import FIXES as HOOK_FIXES
from memverbs.installers import toml_block
from memverbs.installers.base import Options, is_our_hook, is_our_remote, is_our_server, read_receipt
from memverbs.installers.checks import check, command_exists, reinstall
from memverbs.installers.files import InstallError, read_text
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.registry import HARNESSES
from memverbs.installers.spec import Problem
from memverbs.server.home import REMOTE_RECEIPT, Home

HEALTHY_HOOK_CODES = {"ok", "empty", "unchanged", "rate_limited", "repeat_start"}


def harness_checks(home: Home) -> list[dict]:
    out = []
    for spec in HARNESSES:
        harness = spec.harness
        receipt = read_receipt(home, harness)
        if receipt is None:
            continue
        name = f"harness:{spec.name}"
        problems = [p for record in receipt.get("steps", []) for p in _step_problems(harness, record)]
        if spec.doctor is not None:
            problems += spec.doctor(Options(harness, home=home), receipt)
        summary = f"installed {receipt.get('installed_at', '?')} ({receipt.get('scope')} scope, {receipt.get('surface')} surface"
        summary += ", hooks on the local brain)" if receipt.get("hooks") else ", no hooks)"
        if problems:
            detail, fix = problems[0]
            out.append(check(name, "fail", f"{summary}; {detail}", fix))
        else:
            out.append(check(name, "ok", summary))
        if receipt.get("hooks"):
            out.append(_hook_runs(home, harness))
    extra = [row for spec in HARNESSES if spec.extra_checks is not None for row in spec.extra_checks(home)]
    return out + extra + remote_checks(home)


# -- remote registrations (`memverbs connect --install`) -------------------------------------


def remote_checks(home: Home) -> list[dict]:
    """For every harness connect registered the remote brain in: is our entry still there?"""
    out = []
    for spec in HARNESSES:
        harness = spec.harness
        receipt = read_receipt(home, harness, REMOTE_RECEIPT)
        if receipt is None:
            continue
        url = receipt.get("remote_url", "?")
        summary = f"remote brain {url}, registered {receipt.get('installed_at', '?')}"
        summary += ", hooks on the remote brain" if receipt.get("hooks") else ", no hooks (context is pulled through the tools)"
        fix = (f"Run `memverbs remote-header --bare | memverbs connect {url} --install {harness.value}` "
               "again (it repairs its own entry and nothing else).")
        problems = [p for record in receipt.get("steps", []) for p in _remote_step_problems(record)]
        if spec.doctor is not None:
            problems += [detail for detail, _ in spec.doctor(Options(harness, home=home), receipt)]
        if problems:
            out.append(check(f"remote:{harness.value}", "fail", f"{summary}; {problems[0]}", fix))
        else:
            out.append(check(f"remote:{harness.value}", "ok", summary))
        if receipt.get("hooks"):
            out.append(_hook_runs(home, harness))
    return out


def _remote_step_problems(record: dict) -> list[str]:
    """Does the remote entry this record wrote still hold? (A harness CLI's registration, `cli`, is
    its spec's `doctor` to check.)"""
    kind = record.get("kind")
    if kind == "json_entry":
        path, keys = Path(record["path"]), record["keys"]
    elif kind == "toml_block":
        path, keys = Path(record["path"]), None
    else:
        return []
    try:
        text = read_text(path)
    except InstallError as exc:
        return [exc.message]
    if text is None:
        return [f"{path} is gone"]
    if keys is None:
        markers = toml_block.MARKERS[record.get("markers", "remote")]
        try:
            entry = toml_block.parse(text, str(path)).get("mcp_servers", {}).get("memverbs")
        except toml_block.TomlEditError as exc:
            return [str(exc)]
        ok = markers.begin in text and is_our_remote(entry)
    else:
        try:
            entry = JsonDoc(text).get(keys)
        except JsonEditError as exc:
            return [f"{path} does not parse ({exc})"]
        ok = is_our_remote(entry)
    return [] if ok else [f"the remote memverbs server is missing from {path}"]


def _step_problems(harness: Harness, record: dict) -> list[Problem]:
    """Does the change this receipt record made still hold? (A harness CLI's own registration is
    its spec's `doctor` to check: only the harness knows where its CLI keeps it.)"""
    kind = record.get("kind")
    if kind == "cli":
        return []
    path = Path(record.get("path", ""))
    try:
        text = read_text(path)
    except InstallError as exc:  # a directory, a dangling link, an unreadable file: said, not crashed on
        return [(exc.message, exc.fix)]
    if text is None:
        return [(f"{path} is gone", reinstall(harness))]
    if kind in ("json_entry", "json_item"):
        try:
            doc = JsonDoc(text)
        except JsonEditError as exc:
            return [(f"{path} does not parse ({exc})", f"Fix {path} by hand; memverbs will not rewrite it.")]
        if kind == "json_entry":
            entry = doc.get(record["keys"])
            if entry is None or not is_our_server(entry):
                return [(f"our entry {'.'.join(record['keys'])} is missing from {path}", reinstall(harness))]
            return command_exists(harness, entry)
        if not any(is_our_hook(g) for g in doc.get(record["keys"], []) or []):
            return [(f"the {record['keys'][-1]} hook is missing from {path}", reinstall(harness))]
        return []
    if kind == "toml_block":
        try:
            toml_block.parse(text, str(path))
        except toml_block.TomlEditError as exc:
            return [(str(exc), f"Fix {path} by hand; memverbs will not rewrite it.")]
        if toml_block.BEGIN not in text:
            return [(f"the memverbs block is missing from {path}", reinstall(harness))]
        server = toml_block.parse(text, str(path)).get("mcp_servers", {}).get("memverbs")
        return command_exists(harness, server) if server else []
    if kind == "owned_file":
        marker = record.get("marker")  # a receipt edited by hand may have lost it: then nothing vouches for the file
        if not isinstance(marker, str) or marker not in text:
            return [(f"{path} was changed by someone else", reinstall(harness))]
    return []


def _hook_runs(home: Home, harness: Harness, last: int = 20) -> dict:
    name = f"hooks:{harness.value}"
    try:
        lines = home.hook_log.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return check(name, "ok", "no hook runs yet (they start with the next session)")
    runs = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("harness") == harness.value:
            runs.append(event)
    runs = runs[-last:]
    if not runs:
        return check(name, "ok", "no hook runs yet (they start with the next session)")
    codes = Counter(r.get("code", "?") for r in runs)
    mix = ", ".join(f"{code} {n}" for code, n in codes.most_common())
    latest = runs[-1]
    if latest.get("code") in HEALTHY_HOOK_CODES:
        return check(name, "ok", f"last {len(runs)} runs: {mix}; last {latest.get('ts')} ({latest.get('ms')} ms)")
    code = str(latest.get("code"))
    fix = HOOK_FIXES.get(code, "Run the hook by hand to see: `memverbs hook session-start --harness plain --session-id test`.")
    return check(name, "warn", f"last run failed with {code} ({latest.get('ts')}); last {len(runs)} runs: {mix}", fix)
