"""`memverbs init`: create the home, its config file and the brain. Safe to run again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.cli.configfile import read_config, write_config
from memverbs.cli.output import fail, print_json
from memverbs.server.errors import MemverbsError
from memverbs.server.plural import plural
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import iso, now_ms

if TYPE_CHECKING:
    import argparse


def run_init(args: argparse.Namespace) -> int:
    runtime = Runtime()
    home = runtime.home
    if runtime.config_error is not None:
        return fail(runtime.config_error.message, runtime.config_error.fix)
    try:
        home.root.mkdir(parents=True, exist_ok=True)
        config = read_config(home.config_path)
        created_config = not home.config_path.exists()
        if "protocol_installed_at" not in config:
            config["protocol_installed_at"] = iso(now_ms())
            write_config(home.config_path, config)
        runtime = Runtime(home)
        where = runtime.brain_location
        existed = where.exists()
        brain = runtime.create_brain()
        counts = brain.counts(runtime.source)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    except OSError as exc:
        return fail(f"cannot create {home.root}: {exc.strerror}", f"Check that {home.root.parent} is writable, or set MEMVERBS_HOME.")
    finally:
        runtime.close()
    result = {
        "home": str(home.root),
        "config": str(home.config_path),
        "config_created": created_config,
        "brain": str(where),
        "brain_created": existed is False,
        "source": runtime.source,
        **counts,
    }
    if args.json:
        print_json(result)
        return 0
    verb = "created" if existed is False else "ready"
    print(f"memverbs brain {verb}: {where} (source {runtime.source}; {plural(counts['pages'], 'page')}, {plural(counts['facts'], 'fact')})")
    print()
    print("Memories agents save are readable by every agent connected to this brain;")
    print('pass visibility "private" (or --visibility private) for facts only the local CLI may read.')
    print()
    print("Next:")
    print('  memverbs remember "I prefer dark mode in every editor" --provenance demo --entity people/me')
    print("  memverbs recall --entity people/me")
    print("  memverbs install claude      # or codex, grok, opencode, openclaw, all: the server plus its hooks")
    return 0
