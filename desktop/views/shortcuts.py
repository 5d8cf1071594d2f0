"""Help > Keyboard shortcuts: every shortcut of the menus (read from the actions themselves, so
the list cannot go stale) plus the keys the chat handles directly."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# Keys handled by widgets rather than menu actions.
CHAT_KEYS = (
    ("Chat", "Send the question", "Enter"),
    ("Chat", "New line in the question", "Shift+Enter"),
    ("Chat", "Bring back the last question (empty box)", "Up"),
    ("Chat", "Stop the answer", "Esc"),
    ("Find bar", "Next / previous match", "Enter / Shift+Enter"),
    ("Find bar", "Close the find bar", "Esc"),
    ("Conversations", "Rename the selected conversation", "F2"),
    ("Conversations", "Delete the selected conversation (asks first)", "Del"),
)


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, command, keys) for every menu action that has a shortcut, in menu order."""
    rows = []
    for top in menu_bar.actions():
        menu = top.menu()
        if menu is None:
            continue
        for action in menu.actions():
            keys = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts()]
            if keys and action.text():
                rows.append((top.text().replace("&", ""), action.text().replace("&", "").rstrip("…"),
                             " or ".join(keys)))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, menu_bar: QMenuBar, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(560, 480)
        self.rows = menu_shortcuts(menu_bar) + list(CHAT_KEYS)
        self.table = QTableWidget(len(self.rows), 3, self)
        self.table.setObjectName("shortcutTable")
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Where", "Command", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for row, values in enumerate(self.rows):
            for col, value in enumerate(values):
                self.table.setItem(row, col, QTableWidgetItem(value))  # plain text
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
