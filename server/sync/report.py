"""What a pass did: the counts a person reads at the end, and every file that needs a look."""

from __future__ import annotations

from dataclasses import dataclass, field

OUTCOMES = ("created", "updated", "unchanged", "renamed", "deleted", "written_back", "skipped", "errors")


@dataclass
class Report:
    folder: str
    prefix: str = ""
    dry_run: bool = False
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)  # (file, slug, cause: conflicts.CAUSES)
    facts: dict[str, int] = field(default_factory=lambda: {"inserted": 0, "duplicate": 0, "superseded": 0, "errors": 0})
    # A full export's backup restored first (server/sync/restore.py): migrate's per-table verify, after the notes pass.
    restore: dict | None = None
    # Why the folder could not be read (server/sync/presence.py): nothing was applied or deleted.
    unavailable: str | None = None

    def add(self, outcome: str, rel: str = "", why: str = "") -> None:
        self.counts[outcome] += 1
        if outcome == "skipped":
            self.skipped.append((rel, why))
        elif outcome == "errors":
            self.errors.append((rel, why))

    @property
    def changed(self) -> bool:
        return any(self.counts[k] for k in ("created", "updated", "renamed", "deleted"))

    def summary(self) -> str:
        c = self.counts
        head = "would be: " if self.dry_run else ""
        parts = [f"{c['created']} created", f"{c['updated']} updated", f"{c['unchanged']} unchanged"]
        parts += [f"{c[k]} {k.replace('_', ' ')}" for k in ("renamed", "deleted", "written_back") if c[k]]
        parts += [f"{c['skipped']} skipped", f"{c['errors']} error" + ("" if c["errors"] == 1 else "s")]
        return head + ", ".join(parts)

    def as_dict(self) -> dict:
        return {
            "folder": self.folder,
            "prefix": self.prefix,
            "dry_run": self.dry_run,
            **self.counts,
            "skipped_files": [{"file": f, "reason": r} for f, r in self.skipped],
            "error_files": [{"file": f, "reason": r} for f, r in self.errors],
            "conflicts": [{"file": f, "slug": s, "cause": c} for f, s, c in self.conflicts],
            **({"unavailable": self.unavailable} if self.unavailable is not None else {}),
            "facts": self.facts,
            **({"restore": self.restore} if self.restore is not None else {}),
        }
