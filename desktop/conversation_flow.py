"""Saved conversations: list/search them in the sidebar, open, rename, delete and export them.

Store calls happen on the UI thread (small SQLite reads and writes), except importing a file:
a full backup can hold thousands of answers, so it runs on a worker (the store's connection is
shared across threads behind its lock).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from searchain.units import counted

from .context import AppContext
from .views.chat import ChatEntry, ChatView
from .views.message_bar import MessageBar
from .views.reasoning import ReasoningPanel
from .views.sidebar import Sidebar


class ConversationFlow(QObject):
    current_changed = Signal(object)

    def __init__(self, ctx: AppContext, sidebar: Sidebar, chat: ChatView, reasoning: ReasoningPanel,
                 message_bar: MessageBar, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.sidebar = sidebar
        self.chat = chat
        self.reasoning = reasoning
        self.message_bar = message_bar
        self.current_id: Any = None
        self.is_busy: Callable[[], bool] = lambda: False
        sidebar.conversation_selected.connect(self.open)
        sidebar.new_requested.connect(self.new)
        sidebar.rename_requested.connect(self.rename)
        sidebar.search_changed.connect(lambda _text: self.refresh())

    def store(self):
        return self.ctx.workspace().conversations()

    def refresh(self) -> None:
        query = self.sidebar.search.text().strip()
        try:
            store = self.store()
            if query:
                hits = store.search(query)
                seen: dict[Any, Any] = {}
                for hit in hits:
                    seen.setdefault(hit.conversation_id, None)
                items = [s for s in store.list_conversations() if s.id in seen]
            else:
                items = store.list_conversations()
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "Could not read saved conversations")
            return
        self.sidebar.set_conversations(items, selected=self.current_id)

    def new(self) -> None:
        if self.is_busy():
            return
        self.current_id = None
        self.sidebar.select(None)
        self.chat.set_entries([])
        self.reasoning.clear()
        self.chat.input.setFocus()
        self.current_changed.emit(None)

    def adopt(self, conversation_id: Any) -> None:
        """The answer worker saved into ``conversation_id`` (new when none was open)."""
        if self.current_id != conversation_id:
            self.current_id = conversation_id
            self.current_changed.emit(conversation_id)
        self.refresh()

    def open(self, conversation_id: Any) -> bool:
        if self.is_busy() or conversation_id is None:
            self.sidebar.select(self.current_id)
            return False
        try:
            # The transcript needs every answer's text and sources, the tree view only the last
            # answer's reasoning: the other trees stay in the database (most of a long chat).
            conversation = self.store().get_conversation(conversation_id, reasoning="last")
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "Could not open the conversation")
            return False
        self.current_id = conversation.id
        entries = [
            ChatEntry(
                role=m.role, text=m.content, key=str(m.id), result=m.result,
                # A stored "streaming" answer was cut off by a crash: no process is writing it now.
                status={"complete": "done", "streaming": "interrupted"}.get(m.state, m.state),
                error=m.error or "", extra={"run": m.run} if m.run is not None else {},
            )
            for m in conversation.messages
        ]
        self.chat.set_entries(entries)
        last = self.chat.last_result()
        if last is not None:
            self.reasoning.show_result(last)
        else:
            self.reasoning.clear()
        # Found through the sidebar's search: show where the words occur.
        self.chat.find_bar.reveal(self.sidebar.search.text().strip())
        self.sidebar.select(conversation.id)
        self.current_changed.emit(conversation.id)
        return True

    def rename(self, conversation_id: Any, title: str) -> None:
        try:
            self.store().rename(conversation_id, title)
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "Could not rename the conversation")
        self.refresh()

    def delete(self, conversation_id: Any) -> None:
        if self.is_busy() and conversation_id == self.current_id:
            self.message_bar.show_message("Stop the answer before deleting this conversation.", kind="error")
            return
        try:
            self.store().delete(conversation_id)
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "Could not delete the conversation")
            return
        if conversation_id == self.current_id:
            self.current_id = None
            self.chat.set_entries([])
            self.reasoning.clear()
        self.refresh()

    def export(self, conversation_id: Any, fmt: str, path: str | Path) -> Path | None:
        """Write the conversation as Markdown or JSON to ``path``; returns the path written."""
        try:
            store = self.store()
            if fmt == "markdown":
                store.export_markdown_file(path, [conversation_id])
            else:
                store.export_json_file(path, [conversation_id])
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, f"Could not export to {path}")
            return None
        self.message_bar.show_message(f"Exported to {path}", kind="info")
        return Path(path)

    def export_all(self, path: str | Path, runner) -> Any:
        """Write every conversation to one JSON file (a backup that Import reads back), on a
        worker of ``runner``; returns the job (its ``result``: the path written)."""
        self.message_bar.show_message(f"Exporting every conversation to {path}…", kind="info")

        def work(_on_event, _cancel):
            store = self.store()
            return store.export_json_file(path), len(store.list_conversations())

        def done(result) -> None:
            written, count = result
            self.message_bar.show_message(f"Exported {counted(count, 'conversation')} to {written}", kind="info")

        return runner.start("export-conversations", work, on_done=done,
                            on_error=lambda exc: self.message_bar.show_error(exc, f"Could not export to {path}"))

    def import_file(self, path: str | Path, runner) -> Any:
        """Add the conversations of a JSON export as new ones, on a worker of ``runner``, then
        open the first; returns the job (its ``result``: the new ids). A bad file changes nothing."""
        self.message_bar.show_message(f"Importing conversations from {path}…", kind="info")

        def work(_on_event, _cancel):
            return self.store().import_json_file(path)

        def done(ids: list[Any]) -> None:
            self.refresh()
            if ids and not self.is_busy():
                self.open(ids[0])
            self.message_bar.show_message(f"Imported {counted(len(ids), 'conversation')} from {path}", kind="info")

        return runner.start("import-conversations", work, on_done=done,
                            on_error=lambda exc: self.message_bar.show_error(exc, f"Could not import {path}"))
