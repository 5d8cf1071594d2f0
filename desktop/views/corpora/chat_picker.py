"""Which corpora a chat searches (#34): a button under Send with one check per corpus.

Nothing checked means "as in Settings" (the active corpus), as every chat did before. Several
checked are searched together (``searchain.index`` fuses one ranking per corpus) and each
citation names its corpus. The choice is saved with the chat (``ConversationStore.set_corpora``):
a new chat saves it with its first question, an open chat at once. A chosen corpus that was
removed since stays listed, checked and marked "(removed)", so the user sees why asking fails and
can uncheck it; the chat itself always opens.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

AS_IN_SETTINGS = "As in Settings"


class ChatCorporaButton(QToolButton):
    """The corpora of the current chat; ``changed`` carries the new list ([] = as in Settings)."""

    changed = Signal(list)

    def __init__(self, parent: QWidget | None = None, available: Callable[[], list[str]] | None = None):
        super().__init__(parent)
        self.setObjectName("chatCorpora")
        self.setAccessibleName("Corpora this chat searches")
        self.setToolTip("The corpora this chat searches; check several to search them together")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._available = available or (lambda: [])
        self._chosen: list[str] = []
        self.setMenu(QMenu(self))
        self.menu().aboutToShow.connect(self.rebuild_menu)
        self._show()

    def set_available(self, available: Callable[[], list[str]]) -> None:
        """Where the menu reads the corpora there are (each time it opens)."""
        self._available = available

    def chosen(self) -> list[str]:
        return list(self._chosen)

    def set_chosen(self, names: list[str]) -> None:
        """Show ``names`` (a chat was opened or started); emits nothing."""
        self._chosen = list(names)
        self._show()

    def rebuild_menu(self) -> None:
        """One check per corpus there is now, plus the chosen ones that are gone."""
        menu = self.menu()
        menu.clear()
        default = menu.addAction(AS_IN_SETTINGS)
        default.setCheckable(True)
        default.setChecked(not self._chosen)
        default.triggered.connect(lambda: self._set([]))
        menu.addSeparator()
        try:
            there = self._available()
        except Exception:  # noqa: BLE001 - an unreadable corpora folder lists none
            there = []
        for name in list(dict.fromkeys([*there, *self._chosen])):
            action = QAction(name if name in there else f"{name} (removed)", menu)
            action.setObjectName(f"corpus_{name}")
            action.setCheckable(True)
            action.setChecked(name in self._chosen)
            action.toggled.connect(lambda on, n=name: self._toggle(n, on))
            menu.addAction(action)

    def action_for(self, name: str) -> QAction | None:
        """The menu's check for ``name`` (tests click it)."""
        self.rebuild_menu()
        return next((a for a in self.menu().actions() if a.objectName() == f"corpus_{name}"), None)

    def _toggle(self, name: str, on: bool) -> None:
        names = [n for n in self._chosen if n != name] + ([name] if on else [])
        self._set(names)

    def _set(self, names: list[str]) -> None:
        if names != self._chosen:
            self._chosen = names
            self._show()
            self.changed.emit(list(names))

    def _show(self) -> None:
        if not self._chosen:
            self.setText("Corpus: as in Settings")
        elif len(self._chosen) == 1:
            self.setText(f"Corpus: {self._chosen[0]}")
        else:
            self.setText(f"Corpora: {' + '.join(self._chosen)}")


def connect_chat_corpora(window: Any) -> ChatCorporaButton:
    """Keep the chat view's picker (``ChatView.corpora``) in step with the open chat."""
    ctx = window.ctx
    button = window.chat.corpora
    button.set_available(lambda: ctx.workspace().corpora.names())

    def opened(conversation_id: Any) -> None:
        names: list[str] = []
        if conversation_id is not None:
            try:
                names = ctx.workspace().conversations().corpora(conversation_id)
            except Exception as exc:  # noqa: BLE001
                window.message_bar.show_error(exc, "Could not read the chat's corpora")
        button.set_chosen(names)

    def changed(names: list[str]) -> None:
        cid = window.conversations.current_id
        if cid is None:
            return  # a new chat: saved with its first question (AnswerFlow)
        try:
            ctx.workspace().conversations().set_corpora(cid, names)
        except Exception as exc:  # noqa: BLE001
            window.message_bar.show_error(exc, "Could not save the chat's corpora")

    window.conversations.current_changed.connect(opened)
    button.changed.connect(changed)
    return button
