"""The conversation list's file actions in the main window: delete (after asking, unless turned
off), export one (Markdown or JSON), export all (one JSON backup) and import, the last two on a
worker.

Kept apart from ``main_window`` so the window stays small; ``MainWindow`` mixes it in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QMessageBox


class ConversationActions:
    """The conversation file actions of ``MainWindow`` (mixed into it).

    Relies on the window's ``conversations`` (``ConversationFlow``), ``runner``, ``message_bar``
    and ``confirm_destructive``.
    """

    def delete_conversation(self, conversation_id: Any) -> None:
        if self.confirm_destructive:
            answer = QMessageBox.question(self, "Delete conversation",
                                          "Delete this conversation? This cannot be undone.")
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.conversations.delete(conversation_id)

    def export_conversation(self, conversation_id: Any, fmt: str, path: str | None = None) -> Path | None:
        conversation_id = conversation_id if conversation_id is not None else self.conversations.current_id
        if conversation_id is None:
            self.message_bar.show_message("Open a conversation to export it.", kind="error")
            return None
        if path is None:
            suffix, filt = (".md", "Markdown (*.md)") if fmt == "markdown" else (".json", "JSON (*.json)")
            path, _ = QFileDialog.getSaveFileName(self, "Export conversation", f"conversation{suffix}", filt)
            if not path:
                return None
        return self.conversations.export(conversation_id, fmt, path)

    def export_all_conversations(self, path: str | None = None):
        """File > Export all conversations: one JSON backup, written on a worker; returns the job."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export all conversations",
                                                  "searchain-conversations.json", "JSON (*.json)")
            if not path:
                return None
        return self.conversations.export_all(path, self.runner)

    def import_conversations(self, path: str | None = None):
        """Add the conversations of a JSON export (this app's or `searchain chats export`) on a
        worker; returns the job, or None when no file was picked."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Import conversations", "", "JSON export (*.json)")
            if not path:
                return None
        return self.conversations.import_file(path, self.runner)
