"""What one ``corpus update`` did, counted in the corpus's units (files of a folder, articles of
a snapshot), with the names of what changed for the corpus manager to list."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..problems import Problem

LISTED = 1000  # names kept per list; the counts stay exact beyond it


@dataclass
class UpdateReport:
    corpus: str
    unit: str  # "files" (a folder corpus) or "articles" (a source such as a dump or a ZIM)
    unchanged: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    passages_added: int = 0  # stored anew: the passages of changed and new units
    passages_removed: int = 0  # of changed units (their old text) and of removed ones
    passages_kept: int = 0  # stored before and kept, with their ids (so their vectors)
    passages_embedded: int = 0  # filled in by the index step above the corpus (library/update)
    changed_names: list[str] = field(default_factory=list)  # files or article titles, up to LISTED
    added_names: list[str] = field(default_factory=list)
    removed_names: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    source: str = ""  # the snapshot read (``--from``), "" for a folder re-sync
    seconds: float = 0.0
    index: dict = field(default_factory=dict)  # the index build's report, when one ran

    def note(self, kind: str, name: str) -> None:
        """Count one unit as ``kind`` (changed, added, removed) and keep its name."""
        setattr(self, kind, getattr(self, kind) + 1)
        names = getattr(self, f"{kind}_names")
        if len(names) < LISTED:
            names.append(name)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["problems"] = [{"file": p.file, "reason": p.reason, **({"line": p.line} if p.line else {})}
                            for p in self.problems]
        data["seconds"] = round(self.seconds, 3)
        return data

    def summary(self) -> str:
        return (f"{self.corpus} ({self.unit}): {self.unchanged:,} unchanged, {self.changed:,} changed, "
                f"{self.added:,} added, {self.removed:,} removed; {self.passages_added:,} passages "
                f"stored anew, {self.passages_removed:,} removed, {self.passages_kept:,} kept "
                f"({self.seconds:.1f}s)")
