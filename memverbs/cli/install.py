"""`memverbs install|uninstall <harness>`: wire memverbs into an agent harness, or take it out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.hooks.events import Harness
from memverbs.installers import registry
from memverbs.installers.base import Options, read_receipt, run_install, run_uninstall
from memverbs.installers.spec import HarnessSpec, names
from memverbs.installers.steps import InstallError
from memverbs.server.home import REMOTE_RECEIPT
from memverbs.server.plural import plural

if TYPE_CHECKING:
    import argparse


def _targets(name: str) -> list[HarnessSpec] | None:
    if name == "all":
        return registry.on_path()
    spec = registry.BY_NAME.get(name)
    return [spec] if spec is not None else None


def run_install_cmd(args: argparse.Namespace) -> int:
    targets = _targets(args.harness)
    if targets is None:
        return fail(f"unknown harness {args.harness!r}", f"Use one of: {names(registry.HARNESSES)}, all.", code=2)
    if not targets:
        return fail("no supported harness found on PATH", f"Install one ({names(registry.HARNESSES)}) first.")
    status = 0
    results = []
    for spec in targets:
        harness = spec.harness
        scope = args.scope or spec.scopes[0]
        if scope not in spec.scopes:
            status = fail(f"{harness.value} has no {scope!r} scope", f"Use one of: {', '.join(spec.scopes)}.")
            continue
        opts = Options(harness, scope=scope, surface=args.surface, hooks=not args.no_hooks, dry_run=args.dry_run, project_dir=Path.cwd())
        remote = read_receipt(opts.home, harness, REMOTE_RECEIPT)
        if remote is not None:
            status = fail(
                f"{harness.value} uses the remote brain {remote.get('remote_url', '')} (`memverbs connect --install`)",
                "A harness uses one brain: run `memverbs disconnect` first (or connect again without this harness).",
            )
            continue
        cli = spec.on_path() or spec.command
        try:
            steps, notes = spec.plan(opts, cli)
            result = run_install(opts, steps, notes)
        except InstallError as exc:
            status = fail(f"{harness.value}: {exc.message}", exc.fix)
            continue
        results.append(result)
        if not args.json:
            _print_result(harness, result)
    if args.json:
        print_json(results)
    return status


def _print_result(harness: Harness, result: dict) -> None:
    if result.get("dry_run"):
        print(f"# memverbs install {harness.value} --dry-run: nothing was written")
        for change in result["changes"]:
            print(change, end="" if change.endswith("\n") else "\n")
    else:
        for line in _summary(harness, result):
            print(line)
    for note in result.get("notes", []):
        print(f"  note: {note}")


def _summary(harness: Harness, result: dict) -> list[str]:
    """What the install changed, in a person's terms: the files created or updated, the harness
    commands run; a re-install that changed nothing says so."""
    how = f"{result['scope']} scope, {result['surface']} surface" + ("" if result.get("hooks") else ", no hooks")
    changed = result.get("changed") or {}
    commands = [_command(argv) for argv in changed.get("commands", [])]
    if changed.get("nothing"):
        again = f"; re-ran {', '.join(commands)}, which registers the same server" if commands else ""
        return [f"memverbs is already installed into {harness.value} ({how}): nothing changed{again}"]
    lines = [f"memverbs installed into {harness.value} ({how})"]
    lines += [f"  registered the memverbs server: {c}" for c in commands]
    entries: dict[str, int] = {}
    for step in result.get("steps", []):
        if step.get("path"):
            entries[step["path"]] = entries.get(step["path"], 0) + 1
    for f in changed.get("files", []):
        verb = "removed" if f["deleted"] else "created" if f["created"] else "updated"
        n = entries.get(f["path"], 0)
        what = f" ({plural(n, 'memverbs entry', 'memverbs entries')})" if n > 1 else ""
        lines.append(f"  {verb} {_tilde(f['path'])}{what}")
    if len(lines) == 1:
        lines.append("  no file needed a change")
    return lines


def _command(argv: list[str]) -> str:
    """`claude mcp add memverbs`: the harness's command as a person would type it (its options left out)."""
    words = [Path(argv[0]).name, *[w for w in argv[1:] if not w.startswith("-")][:3]]
    return "`" + " ".join(words) + "`"


def _tilde(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path


def run_uninstall_cmd(args: argparse.Namespace) -> int:
    targets = _targets(args.harness) if args.harness != "all" else list(registry.HARNESSES)
    if targets is None:
        return fail(f"unknown harness {args.harness!r}", f"Use one of: {names(registry.HARNESSES)}, all.", code=2)
    status = 0
    results: list[dict[str, object]] = []
    as_json = getattr(args, "json", False)
    for spec in targets:
        harness = spec.harness
        opts = Options(harness, dry_run=getattr(args, "dry_run", False))
        try:
            receipt = run_uninstall(opts)
        except InstallError as exc:
            status = fail(f"{harness.value}: {exc.message}", exc.fix)
            results.append({"harness": harness.value, "removed": False, "error": exc.message, "fix": exc.fix})
            continue
        if receipt is None:
            remote = read_receipt(opts.home, harness, REMOTE_RECEIPT) is not None
            if args.harness != "all":
                results.append({"harness": harness.value, "removed": False, "installed": False, "remote": remote})
                if not as_json:
                    print(f"memverbs is not installed into {harness.value} (no receipt under {opts.home.integrations / harness.value})")
                    if remote:
                        print(f"  {harness.value} is connected to a remote brain instead: `memverbs disconnect` undoes that")
            continue
        if receipt.get("dry_run"):
            results.append({"harness": harness.value, "removed": False, "dry_run": True, "changes": receipt["changes"]})
            if not as_json:
                print(f"# memverbs uninstall {harness.value} --dry-run: nothing was written")
                for change in receipt["changes"]:
                    print(change, end="" if change.endswith("\n") else "\n")
            continue
        undone = len(receipt.get("steps", []))
        results.append({"harness": harness.value, "removed": True, "changes_undone": undone})
        if not as_json:
            print(f"memverbs removed from {harness.value}: {plural(undone, 'change')} undone")
    if as_json:
        print_json(results)
    return status
