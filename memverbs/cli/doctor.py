"""`memverbs doctor`: the home's checks (memverbs/doctor.py), printed with their fixes."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from memverbs.cli.output import print_json
from memverbs.doctor import run_checks
from memverbs.server.home import Home

if TYPE_CHECKING:
    import argparse

MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


def run_doctor(args: argparse.Namespace) -> int:
    checks = run_checks(Home.from_env())
    failed = any(c.status == "fail" for c in checks)
    if args.json:
        print_json({"ok": not failed, "checks": [asdict(c) for c in checks]})
    else:
        for c in checks:
            print(f"{MARKS[c.status]} {c.name.replace('_', ' ')}: {c.detail}")
            if c.fix:
                print(f"    fix: {c.fix}")
        print("healthy" if not failed else "problems found")
    return 1 if failed else 0
