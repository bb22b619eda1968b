"""Page labels, on either backend: short words a person pins to a page (`label`, `labels`).

A label shows with its page: a private page's labels are its owner's alone (on Postgres the row
policies the declaration's kind derives; server/brain/stores.py).
"""

from __future__ import annotations

from memverbs.server.brain.store import Store


class LabelStore:
    """Built on the brain (`Stores.labels.of(brain)`), reading and writing through its `Store` members."""

    def __init__(self, brain: Store) -> None:
        self.brain = brain

    def label(self, source: str, slug: str, label: str) -> None:
        with self.brain.write() as db:
            db.execute("INSERT INTO page_labels (source_id, slug, label) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                       (source, slug, label))

    def labels(self, source: str, slug: str) -> list[str]:
        return [r[0] for r in self.brain.query(
            "SELECT label FROM page_labels WHERE source_id = ? AND slug = ? ORDER BY label", (source, slug))]
