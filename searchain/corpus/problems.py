"""Malformed-input bookkeeping: every skipped record is counted and, up to a cap, described."""

from __future__ import annotations

from typing import NamedTuple

MAX_LISTED = 1000  # describe this many problems; the count stays exact beyond it


class Problem(NamedTuple):
    """A record that was skipped: the file, its 1-based line (None if not line-based), why."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


class ProblemLog:
    """Collects skipped records. ``skipped`` is exact; ``problems`` keeps the first MAX_LISTED."""

    def __init__(self, limit: int = MAX_LISTED):
        self.limit = limit
        self.skipped = 0
        self.problems: list[Problem] = []

    def skip(self, file: object, line: int | None, reason: str) -> None:
        self.skipped += 1
        if len(self.problems) < self.limit:
            self.problems.append(Problem(str(file), line, reason))
