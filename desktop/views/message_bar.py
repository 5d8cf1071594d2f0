"""A dismissable in-window banner for errors and first-run guidance (never a modal traceback)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..colours import Colours, colours_for
from ..render import describe_error


# The window maps these ids to Help > Open log folder and Help > Check set-up.
UNEXPECTED_ACTIONS = (("logs", "Open log folder"), ("doctor", "Check set-up…"))


def banner_style(kind: str, colours: Colours) -> str:
    background, border = colours.banner_error if kind == "error" else colours.banner_info
    return (f"QFrame#messageBar {{ background:{background}; border:1px solid {border}; "
            "border-radius:4px; }")


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
        self.hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self._buttons = QHBoxLayout()
        close = QPushButton("Dismiss", self)
        close.setFlat(True)
        close.clicked.connect(self.hide)
        # Text across the full width, the action buttons on a row under it: beside the text they
        # squeezed a long message into a narrow column.
        text = QVBoxLayout()
        text.addWidget(self.message)
        text.addWidget(self.hint)
        self._buttons.addStretch(1)
        text.addLayout(self._buttons)
        row = QHBoxLayout(self)
        row.addLayout(text, 1)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.kind = ""
        self.topic = ""  # what the message is about ("starter"), so its owner can take it back
        self._watch_parent()
        self.hide()

    def show_message(self, message: str, hint: str = "", kind: str = "info",
                     actions: list[tuple[str, str]] | None = None, topic: str = "") -> None:
        """``actions``: (action id, button text) pairs; clicking emits ``action_triggered(id)``.
        ``topic``: names the message for ``withdraw``."""
        self.kind, self.topic = kind, topic
        self._restyle()
        self.message.setText(message)
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))
        while self._buttons.count() > 1:  # the buttons; the trailing stretch stays
            widget = self._buttons.takeAt(0).widget()
            if widget is not None:
                widget.hide()  # deleted later: hidden now so it can never be clicked again
                widget.deleteLater()
        for position, (action_id, label) in enumerate(actions or []):
            button = QPushButton(label, self)
            button.setObjectName(f"action_{action_id}")
            button.clicked.connect(lambda _=False, a=action_id: self.action_triggered.emit(a))
            self._buttons.insertWidget(position, button)
        self.show()

    def withdraw(self, topic: str) -> bool:
        """Hide the bar if it still shows the message about ``topic`` (another one stays)."""
        if self.topic != topic or self.isHidden():
            return False
        self.topic = ""
        self.hide()
        return True

    def _restyle(self) -> None:
        # The parent's palette: our own carries the banner background the style sheet set.
        style = banner_style(self.kind, colours_for((self.parentWidget() or self).palette()))
        if style != self.styleSheet():  # setting it again would send another PaletteChange
            self.setStyleSheet(style)

    def _watch_parent(self) -> None:
        if self.parentWidget() is not None:
            self.parentWidget().installEventFilter(self)  # installing twice is a no-op in Qt

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.ParentChange:  # moved into a layout's widget
            self._watch_parent()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        # A widget with a style sheet gets no PaletteChange of its own, so watch the parent's
        # (it gets one when the desktop switches between light and dark).
        if watched is self.parentWidget() and event.type() == QEvent.Type.PaletteChange and self.kind:
            self._restyle()
        return False

    def show_error(self, exc: BaseException, context: str = "",
                   actions: list[tuple[str, str]] | None = None) -> None:
        """An engine error: its message and hint. One the engine did not explain (a bug, not bad
        input) offers the log and the set-up check unless the caller gives its own actions."""
        from searchain.errors import SearchainError

        message, hint = describe_error(exc)
        if actions is None and not isinstance(exc, (SearchainError, OSError, MemoryError)):
            actions = list(UNEXPECTED_ACTIONS)
        self.show_message(f"{context}: {message}" if context else message, hint, kind="error",
                          actions=actions)
