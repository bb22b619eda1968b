"""Install steps that edit a JSON/JSONC file memverbs shares with the harness: one member of
an object, one item of an array recognised by a fingerprint, one plain value of an array. The rest
of the file keeps its bytes (installers/jsonc.py edits in place, comments included)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.installers.files import InstallError
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.steps import file_state

if TYPE_CHECKING:
    from memverbs.installers.steps import Context


def _given_back(record: dict, doc: JsonDoc) -> str | None:
    """The file after our entries are gone: no file if we made it, the same blank text if it was
    blank (an empty file stays empty, not `{}`), else the document as edited."""
    if doc.data == {}:
        if record.get("created_file"):
            return None
        if "blank_file" in record:
            return record["blank_file"]
    return doc.text


def _doc(path: Path, text: str | None) -> JsonDoc:
    try:
        return JsonDoc(text or "")
    except JsonEditError as exc:
        raise InstallError(
            f"{path} does not parse ({exc}); memverbs left it untouched",
            "Fix the file by hand (or move it aside) and run the install again.",
        ) from exc


@dataclass
class JsonEntry:
    """One member of a JSON/JSONC object, e.g. mcp.servers.memverbs. Owned when `owned(value)` says so."""

    path: Path
    keys: list[str]
    value: object
    owned: Callable[[object], bool]
    what: str = ""
    owner: str = ""  # recorded, so uninstall removes the entry only while base.OWNERS[owner] still recognises it

    def _compute(self, ctx: Context) -> tuple[str | None, str, list[str]]:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        current = doc.get(self.keys)
        if current is not None and not self.owned(current):
            raise InstallError(
                f"{self.path} already has a {'.'.join(self.keys)} entry that memverbs did not write",
                "Rename or remove that entry, or install under another name; memverbs will not overwrite it.",
            )
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys)) if doc.get(self.keys[:d]) is None]
        doc.set(self.keys, self.value)
        return before, doc.text, created


    def apply(self, ctx: Context) -> dict:
        before, after, created = self._compute(ctx)
        ctx.write(self.path, before, after)
        record = {"kind": "json_entry", "path": str(self.path), "keys": self.keys, "created_parents": created, **file_state(before)}
        if self.owner:
            record["owner"] = self.owner
        return record

    @staticmethod
    def revert(record: dict, ctx: Context, owned: Callable[[object], bool] | None = None) -> None:
        """Remove the entry; with `owned`, only while it is still ours (someone may have replaced it)."""
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        current = doc.get(record["keys"])
        if owned is not None and current is not None and not owned(current):
            return
        doc.delete(record["keys"])
        for dotted in sorted(record.get("created_parents", []), key=len, reverse=True):
            keys = dotted.split(".")
            if doc.get(keys) == {}:
                doc.delete(keys)
        ctx.write(path, before, _given_back(record, doc))


@dataclass
class JsonArrayItem:
    """An item appended to a JSON array (e.g. one hook group), recognised later by `fingerprint`."""

    path: Path
    keys: list[str]
    item: object
    fingerprint: Callable[[object], bool]

    def _compute(self, ctx: Context) -> tuple[str | None, str, list[str]]:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        # The array and its parents that this install creates: only those are ours to remove.
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys) + 1) if doc.get(self.keys[:d]) is None]
        doc.remove_items(self.keys, self.fingerprint)  # idempotent: ours is replaced, never doubled
        doc.append(self.keys, self.item)
        return before, doc.text, created


    def apply(self, ctx: Context) -> dict:
        before, after, created = self._compute(ctx)
        ctx.write(self.path, before, after)
        return {
            "kind": "json_item",
            "path": str(self.path),
            "keys": self.keys,
            "item": self.item,
            "created_parents": created,
            **file_state(before),
        }

    @staticmethod
    def revert(record: dict, ctx: Context, fingerprint: Callable[[object], bool]) -> None:
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        doc.remove_items(record["keys"], fingerprint)
        # Leave no empty containers we made (an emptied array, then its emptied parents), and
        # keep the user's own, even when empty.
        if "created_parents" in record:
            made = sorted(record["created_parents"], key=len, reverse=True)
        else:  # a receipt from before containers were recorded: every emptied one, as it then did
            made = [".".join(record["keys"][:d]) for d in range(len(record["keys"]), 0, -1)]
        for dotted in made:
            keys = dotted.split(".")
            if doc.get(keys) in ([], {}):
                doc.delete(keys)
            elif "created_parents" not in record:
                break
        ctx.write(path, before, _given_back(record, doc))



@dataclass
class JsonArrayValue:
    """A plain value in a JSON array (a path in OpenClaw's plugins.load.paths), recognised by equality.

    `stale` recognises earlier values of ours (a path an older install left) so a
    re-install replaces them instead of adding a second copy. Uninstall removes the
    value, then only the containers this step created, if they are empty.
    """

    path: Path
    keys: list[str]
    value: object
    stale: Callable[[object], bool] = lambda value: False

    def apply(self, ctx: Context) -> dict:
        before = ctx.read(self.path)
        doc = _doc(self.path, before)
        created = [".".join(self.keys[:d]) for d in range(1, len(self.keys) + 1) if doc.get(self.keys[:d]) is None]
        doc.remove_items(self.keys, lambda v: v == self.value or self.stale(v))
        doc.append(self.keys, self.value)
        ctx.write(self.path, before, doc.text)
        return {
            "kind": "json_value",
            "path": str(self.path),
            "keys": self.keys,
            "value": self.value,
            "created_parents": created,
            **file_state(before),
        }

    @staticmethod
    def revert(record: dict, ctx: Context) -> None:
        path = Path(record["path"])
        before = ctx.read(path)
        if before is None:
            return
        doc = _doc(path, before)
        doc.remove_items(record["keys"], lambda v: v == record["value"])
        for dotted in sorted(record.get("created_parents", []), key=len, reverse=True):
            keys = dotted.split(".")
            if doc.get(keys) in ([], {}):
                doc.delete(keys)
        ctx.write(path, before, _given_back(record, doc))
