"""The conversation sidebar: search, New chat, conversations grouped by date, rename/delete/export.

It only draws rows and emits requests; the main window talks to the ConversationStore.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..models.conversations import ConversationRow, group_conversations
from ..render import plain_tooltip

ID_ROLE = Qt.ItemDataRole.UserRole + 1


class Sidebar(QWidget):
    conversation_selected = Signal(object)  # id
    new_requested = Signal()
    rename_requested = Signal(object, str)  # id, new title
    delete_requested = Signal(object)  # id
    export_requested = Signal(object, str)  # id, "markdown" | "json"
    search_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setObjectName("conversationSearch")
        self.search.setAccessibleName("Search conversations")
        self.search.setPlaceholderText("Search conversations…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.search_changed)
        self.new_button = QPushButton("New chat", self)
        self.new_button.setObjectName("newChatButton")
        self.new_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("conversationList")
        self.tree.setAccessibleName("Conversations")
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(8)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)  # F2 renames
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.tree.itemChanged.connect(self._on_item_changed)
        # Delete on the selected conversation asks to delete it, as the right-click menu does.
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.tree)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self._delete_selected)
        self.empty = QLabel("No conversations yet.\nAsk a question to start one.", self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)

        top = QHBoxLayout()
        top.addWidget(self.new_button)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty)
        self._items: dict[Any, QTreeWidgetItem] = {}
        self._filling = False

    def set_conversations(self, items: list[Any], selected: Any = None) -> None:
        """Redraw from store summaries (objects or dicts with id, title, updated_at)."""
        self._filling = True
        try:
            self.tree.clear()
            self._items.clear()
            rows = [ConversationRow.from_store(item) for item in items]
            for label, group in group_conversations(rows):
                header = QTreeWidgetItem([label])
                header.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = header.font(0)
                font.setBold(True)
                font.setPointSizeF(font.pointSizeF() * 0.9)
                header.setFont(0, font)
                header.setForeground(0, self.palette().placeholderText())
                self.tree.addTopLevelItem(header)
                for row in group:
                    item = QTreeWidgetItem([row.title])
                    item.setData(0, ID_ROLE, row.id)
                    item.setToolTip(0, plain_tooltip(row.title))  # a title is the user's text
                    item.setFlags(
                        Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable
                    )
                    header.addChild(item)
                    self._items[row.id] = item
                header.setExpanded(True)
            self.empty.setVisible(not rows)
            if self.search.text():
                self.empty.setText("No conversation matches this search.")
            else:
                self.empty.setText("No conversations yet.\nAsk a question to start one.")
            self.select(selected)
        finally:
            self._filling = False

    def select(self, conversation_id: Any) -> None:
        previous, self._filling = self._filling, True
        try:
            self.tree.clearSelection()
            item = self._items.get(conversation_id)
            if item is not None:
                item.setSelected(True)
                self.tree.setCurrentItem(item)
        finally:
            self._filling = previous

    def titles(self) -> list[str]:
        return [item.text(0) for item in self._items.values()]

    def group_labels(self) -> list[str]:
        return [self.tree.topLevelItem(i).text(0) for i in range(self.tree.topLevelItemCount())]

    def selected_id(self) -> Any:
        items = self.tree.selectedItems()
        return items[0].data(0, ID_ROLE) if items else None

    def start_rename(self, conversation_id: Any) -> None:
        item = self._items.get(conversation_id)
        if item is not None:
            self.tree.editItem(item, 0)

    def _on_selection(self) -> None:
        if self._filling:
            return
        conversation_id = self.selected_id()
        if conversation_id is not None:
            self.conversation_selected.emit(conversation_id)

    def _on_item_changed(self, item: QTreeWidgetItem, _column: int) -> None:
        if self._filling:
            return
        conversation_id = item.data(0, ID_ROLE)
        title = item.text(0).strip()
        if conversation_id is not None and title:
            self.rename_requested.emit(conversation_id, title)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        conversation_id = item.data(0, ID_ROLE) if item else None
        if conversation_id is None:
            return
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self.start_rename(conversation_id)).setShortcut(QKeySequence("F2"))
        menu.addAction("Export as Markdown…", lambda: self.export_requested.emit(conversation_id, "markdown"))
        menu.addAction("Export as JSON…", lambda: self.export_requested.emit(conversation_id, "json"))
        menu.addSeparator()
        menu.addAction("Delete", lambda: self.delete_requested.emit(conversation_id)).setShortcut(
            QKeySequence(QKeySequence.StandardKey.Delete))
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def _delete_selected(self) -> None:
        conversation_id = self.selected_id()
        if conversation_id is not None and self.tree.state() != QAbstractItemView.State.EditingState:
            self.delete_requested.emit(conversation_id)
