"""The corpora a chat searches (#34, mixed corpora): ``conversations.corpora`` (schema v8), the
names joined by commas, NULL when the chat never chose (it searches the active corpus)."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from ..errors import StoreError


class CorporaMixin:
    """``set_corpora`` / ``corpora``; relies on the store's ``_read``, ``_write`` and
    ``_require_conversation``."""

    def set_corpora(self, conversation_id: int, corpora: Sequence[str] | None) -> None:
        """Choose the corpora the chat searches (in order); None or [] goes back to the
        settings' active corpus. Names are not checked against the corpora that exist: one
        removed later must not make the chat unopenable, so the search names it instead."""
        names = [n.strip() for n in corpora or () if n and n.strip()]
        if any("," in n for n in names):
            raise StoreError(f"A corpus name cannot hold a comma: {names!r}.")
        value = ",".join(dict.fromkeys(names)) or None

        def run(c: sqlite3.Connection) -> None:
            self._require_conversation(c, conversation_id)
            c.execute("UPDATE conversations SET corpora = ? WHERE id = ?", (value, conversation_id))
        self._write(run)

    def corpora(self, conversation_id: int) -> list[str]:
        """The corpora chosen for the chat, in order; [] when it never chose (it searches the
        settings' active corpus)."""
        def load(c: sqlite3.Connection) -> list[str]:
            row = c.execute("SELECT corpora FROM conversations WHERE id = ?",
                            (conversation_id,)).fetchone()
            if row is None:
                self._require_conversation(c, conversation_id)
            return [n for n in (row[0] or "").split(",") if n]
        return self._read(load)
