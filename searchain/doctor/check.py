"""One finding of ``searchain doctor``: what was looked at, how it stands, and the fix in words.

The type sits at the bottom of ``doctor/`` so that the checks beside it (``device``,
``isolation``, ``installation``) and the report import it downward.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Check:
    area: str  # settings, folders, embedder, corpus, model, llama.cpp, reader, reranker, conversations
    status: str  # ok | warn | fail
    summary: str
    fix: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def worst(checks: list[Check]) -> str:
    """``fail`` if any check failed, else ``warn`` if any warned, else ``ok``."""
    statuses = {c.status for c in checks}
    return FAIL if FAIL in statuses else WARN if WARN in statuses else OK
