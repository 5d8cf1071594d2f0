"""Export conversations to Markdown and JSON, and import JSON back (part of ``ConversationStore``).

Files are written atomically (temp file, fsync, rename): an export either appears whole or not at
all, and a path that cannot be written becomes a ``StoreError`` naming it. Imports run in one
transaction: a file with one bad field imports nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable

from ..files import atomic_write_text
from ..errors import StoreError
from ..units import timestamp
from .json_codec import FORMAT_NAME, FORMAT_VERSION, conversations_from_json, message_to_json
from .markdown import conversation_markdown
from .result_rows import save_result


class ExchangeMixin:
    """Export/import methods; relies on ``get_conversation``, ``_read`` and ``_write``."""

    def _all_ids(self) -> list[int]:
        return self._read(lambda c: [r[0] for r in c.execute(
            "SELECT id FROM conversations ORDER BY id")])

    def _ids(self, conversation_ids: Iterable[int] | None) -> list[int]:
        return self._all_ids() if conversation_ids is None else list(conversation_ids)

    def export_markdown(self, conversation_id: int) -> str:
        """The conversation as Markdown: questions, answers, then numbered references."""
        return conversation_markdown(self.get_conversation(conversation_id))

    def export_markdown_many(self, conversation_ids: Iterable[int] | None = None) -> str:
        """Several conversations (all when None) in one Markdown text, separated by rules."""
        parts = [self.export_markdown(cid) for cid in self._ids(conversation_ids)]
        return "\n---\n\n".join(parts)

    def export_json(self, conversation_ids: Iterable[int] | None = None) -> dict[str, Any]:
        """An export document with the given conversations (all when None), oldest first."""
        conversations = []
        for cid in self._ids(conversation_ids):
            conv = self.get_conversation(cid)
            conversations.append({
                "id": conv.id, "title": conv.title, "created_at": conv.created_at,
                "updated_at": conv.updated_at,
                "messages": [message_to_json(m) for m in conv.messages],
            })
            corpora = self.corpora(cid)  # schema v8; older readers ignore the key
            if corpora:
                conversations[-1]["corpora"] = corpora
        return {
            "format": FORMAT_NAME, "version": FORMAT_VERSION,
            "exported_at": timestamp(),
            "conversations": conversations,
        }

    def import_json(self, data: Any) -> list[int]:
        """Add the conversations of an export document as new ones; returns their new ids."""
        parsed = conversations_from_json(data)
        chosen = [_corpora_of(conv) for conv in data["conversations"]]

        def run(c: sqlite3.Connection) -> list[int]:
            ids = []
            for (title, created_at, updated_at, messages), corpora in zip(parsed, chosen):
                cid = c.execute("INSERT INTO conversations (title, created_at, updated_at, corpora) "
                                "VALUES (?, ?, ?, ?)",
                                (title, created_at, updated_at, corpora)).lastrowid
                for m in messages:
                    mid = c.execute(
                        "INSERT INTO messages (conversation_id, role, content, state, error, "
                        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (cid, m.role, m.content, m.state, m.error, m.created_at,
                         m.updated_at)).lastrowid
                    if m.run is not None:
                        r = m.run
                        c.execute("INSERT INTO runs (message_id, model, corpus, reader, mode, "
                                  "theta, alpha, r_max, top_k, retriever) "
                                  "VALUES (?,?,?,?,?,?,?,?,?,?)",
                                  (mid, r.model, r.corpus, r.reader, r.mode, r.theta, r.alpha,
                                   r.r_max, r.top_k, r.retriever))
                    if m.result is not None:
                        save_result(c, mid, m.result)
                ids.append(cid)
            return ids
        try:
            return self._write(run)  # one transaction: a refused import adds nothing
        except OverflowError as exc:  # JSON numbers are unbounded, SQLite's integers 64-bit
            raise StoreError(f"A number in the import is too large to store ({exc}).",
                             hint="Export it again from SearChain; an export holds no such "
                             "number.") from exc

    # ---- file variants ---------------------------------------------------------------------

    def export_markdown_file(self, path: str | Path,
                             conversation_ids: Iterable[int] | None = None) -> Path:
        return _write_export(Path(path), self.export_markdown_many(conversation_ids))

    def export_json_file(self, path: str | Path,
                         conversation_ids: Iterable[int] | None = None) -> Path:
        text = json.dumps(self.export_json(conversation_ids), ensure_ascii=False, indent=1)
        return _write_export(Path(path), text + "\n")

    def import_json_file(self, path: str | Path) -> list[int]:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"Cannot read the import file {path}: {exc}",
                             hint="Check the path; import files come from "
                             "`searchain chats export --format json`.") from exc
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # Recursion: JSON nested thousands deep
            raise StoreError(f"The import file {path} is not valid JSON: {exc}",
                             hint="Export it again from SearChain, or fix it at that "
                             "line and column.") from exc
        try:
            return self.import_json(data)
        except StoreError as exc:
            exc.message = f"{path}: {exc.message}"
            exc.args = (exc.message,)
            raise


def _corpora_of(conv: Any) -> str | None:
    """An exported chat's chosen corpora as the column keeps them; anything else is none."""
    names = conv.get("corpora") if isinstance(conv, dict) else None
    if not isinstance(names, list):
        return None
    return ",".join(n for n in names if isinstance(n, str) and n and "," not in n) or None


def _write_export(path: Path, text: str) -> Path:
    if path.is_dir():
        raise StoreError(f"Cannot write the export to {path}: it is a folder.",
                         hint="Give a file name, e.g. chats.md or chats.json.")
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreError(f"Cannot write the export to {path}: {reason}.",
                         hint="Choose a folder you can write to, with free space.") from exc
    return path
