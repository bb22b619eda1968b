"""The brain's health, on either backend, for doctor, init and the HTTP server's /health.

The schema's state is read the same way on both: the steps the brain has recorded (the backend
reads them), against the steps this memverbs knows (the one list, `migrations.MIGRATIONS`).
How a backend checks its storage's integrity is its own (`integrity()` on each brain).
"""

from __future__ import annotations

from memverbs.server.brain.store import Store

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start


class HealthStore(Store):
    if TYPE_CHECKING:
        def applied_steps(self) -> list[str]:
            """The schema steps recorded in the brain, by name."""
            ...

    def known_steps(self) -> list[str]:
        """The schema steps this memverbs knows, in the order it applies them."""
        from memverbs.server.brain import migrations  # noqa: PLC0415 - doctor's; every brain open would pay for it

        return [step.name for step in migrations.MIGRATIONS]

    def schema_status(self) -> dict:
        """`applied`: the steps the brain has; `pending`: those this memverbs would still apply;
        `unknown`: those only a newer memverbs knows (it wrote them)."""
        done = self.applied_steps()
        known = self.known_steps()
        return {
            "applied": done,
            "pending": [name for name in known if name not in done],
            "unknown": [name for name in done if name not in known],
        }

    def counts(self, source_id: str) -> dict:
        pages = self.aggregate("SELECT count(*) FROM pages WHERE source_id = ? AND deleted_at IS NULL", (source_id,))[0]
        facts = self.aggregate("SELECT count(*) FROM facts WHERE source_id = ?", (source_id,))[0]
        return {"pages": pages, "facts": facts}

    def ping(self) -> None:
        """One round trip to storage."""
        self.one("SELECT 1")
