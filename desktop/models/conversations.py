"""Conversation rows for the sidebar, grouped by date (Today, Yesterday, ...), newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Iterable

from ..render import _to_datetime, date_group


@dataclass(frozen=True)
class ConversationRow:
    id: Any
    title: str
    updated_at: Any  # epoch seconds, datetime or ISO string, as the store gives it

    @classmethod
    def from_store(cls, item: Any) -> "ConversationRow":
        """Accept the store's summary objects or dicts (``id``, ``title``, ``updated_at``)."""
        get = item.get if isinstance(item, dict) else lambda k, d=None: getattr(item, k, d)
        updated = get("updated_at") or get("created_at") or 0
        return cls(id=get("id"), title=get("title") or "Untitled", updated_at=updated)


def group_conversations(rows: Iterable[ConversationRow], today: date | None = None) -> list[tuple[str, list[ConversationRow]]]:
    """Rows sorted newest first and split into date groups, in display order."""
    ordered = sorted(rows, key=lambda r: _to_datetime(r.updated_at).timestamp(), reverse=True)
    groups: list[tuple[str, list[ConversationRow]]] = []
    for row in ordered:
        label = date_group(row.updated_at, today)
        if not groups or groups[-1][0] != label:
            groups.append((label, []))
        groups[-1][1].append(row)
    return groups
