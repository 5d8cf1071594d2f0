"""Picking the answering strategy per question, and the plain-text log of a strategy's steps.

The settings hold the default mode (Settings > Model and reasoning); the picker beside the Send
button overrides it for the next questions until set back to "as in Settings". "Ask again with"
(Edit menu and the transcript's context menu) re-asks the last question with another strategy,
so the two answers sit one under the other in the conversation for comparison.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QPlainTextEdit, QWidget

from searchain.reasoning import MODES

SHORT_LABELS = {
    "searchain": "SearChain", "genground": "GenGround", "geek": "GEEK",
    "coq": "Chain-of-Query, no IR", "direct": "Direct answer", "rag": "Retrieve then read",
}
STRATEGY_CHOICES = tuple((mode, SHORT_LABELS.get(mode, mode)) for mode in MODES)


class StrategyPicker(QComboBox):
    """The strategy of the next question: "" (as in Settings) or one of the modes."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("strategyPicker")
        self.setAccessibleName("Answering strategy for the next question")
        self.setToolTip("How the next question is answered; 'as in Settings' uses the default mode")
        self.addItem("As in Settings", "")
        for mode, label in STRATEGY_CHOICES:
            self.addItem(label, mode)

    def chosen(self) -> str | None:
        return self.currentData() or None

    def choose(self, mode: str | None) -> None:
        index = self.findData(mode or "")
        if index < 0:
            raise ValueError(f"unknown answering mode {mode!r}")
        self.setCurrentIndex(index)


class StrategyLog(QPlainTextEdit):
    """GenGround's hops and batches, or GEEK's branches, actions and votes, as plain text."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("strategyLog")
        self.setAccessibleName("Strategy steps")
        self.setReadOnly(True)
        self.setMaximumHeight(160)
        self.setVisible(False)

    def clear_log(self) -> None:
        self.clear()
        self.setVisible(False)

    def add_line(self, line: str) -> None:
        self.appendPlainText(line)  # plain text: passage and model text never become markup
        self.setVisible(True)

    def show_lines(self, lines: list[str]) -> None:
        self.setPlainText("\n".join(lines))
        self.setVisible(bool(lines))


def ask_again_with(window, mode: str) -> bool:
    """Ask the conversation's last question again with ``mode``."""
    question = window.chat.last_question()
    return bool(question) and window.answers.ask(question, mode=mode)
