"""A dismissable in-window banner for errors and first-run guidance (never a modal traceback)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..render import describe_error

STYLES = {
    "error": "QFrame#messageBar { background:#fdecea; border:1px solid #f5c6cb; border-radius:4px; }",
    "info": "QFrame#messageBar { background:#e8f4fd; border:1px solid #b6dcf7; border-radius:4px; }",
}


class MessageBar(QFrame):
    """Shows a message, an optional hint and optional action buttons."""

    action_triggered = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.message = QLabel(self)
        self.message.setObjectName("messageText")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint = QLabel(self)
        self.hint.setObjectName("messageHint")
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color:#555")
        self._buttons = QHBoxLayout()
        close = QPushButton("Dismiss", self)
        close.setFlat(True)
        close.clicked.connect(self.hide)
        text = QVBoxLayout()
        text.addWidget(self.message)
        text.addWidget(self.hint)
        row = QHBoxLayout(self)
        row.addLayout(text, 1)
        row.addLayout(self._buttons)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.kind = ""
        self.hide()

    def show_message(self, message: str, hint: str = "", kind: str = "info",
                     actions: list[tuple[str, str]] | None = None) -> None:
        """``actions``: (action id, button text) pairs; clicking emits ``action_triggered(id)``."""
        self.kind = kind
        self.setStyleSheet(STYLES.get(kind, STYLES["info"]))
        self.message.setText(message)
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))
        while self._buttons.count():
            widget = self._buttons.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        for action_id, label in actions or []:
            button = QPushButton(label, self)
            button.setObjectName(f"action_{action_id}")
            button.clicked.connect(lambda _=False, a=action_id: self.action_triggered.emit(a))
            self._buttons.addWidget(button)
        self.show()

    def show_error(self, exc: BaseException, context: str = "",
                   actions: list[tuple[str, str]] | None = None) -> None:
        message, hint = describe_error(exc)
        self.show_message(f"{context}: {message}" if context else message, hint, kind="error",
                          actions=actions)
