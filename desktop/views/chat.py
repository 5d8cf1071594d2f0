"""The chat pane: the transcript (answers with clickable ``[n]`` marks), live streaming, the input.

Enter sends, Shift+Enter inserts a new line. While an answer is being built the Send button
becomes Stop. Streamed tokens are inserted with ``QTextCursor.insertText`` (plain text), and a
finished answer is rendered from escaped text by ``render.answer_html``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from searchain.reasoning import PHASE_DRAFT, AnswerResult, Reference, streamed_text_action
from searchain.units import counted

from ..colours import LIGHT, Colours, colours_for
from ..render import answer_html, escape, parse_ref_url, references_html, text_to_html
from .answer_clock import AnswerClock
from .find_bar import FindBar
from .corpora.chat_picker import ChatCorporaButton
from .strategy import SHORT_LABELS, StrategyPicker

EMPTY_STATE = (
    "<div style='color:{muted}; margin:40px'>"
    "<h2>Ask a question</h2>"
    "<p>SearChain plans a chain of sub-questions, checks each answer against your local corpus, "
    "and cites the passages it used as [n] marks you can click.</p>"
    "<p><b>Enter</b> sends, <b>Shift+Enter</b> starts a new line, <b>Up</b> in the empty box brings "
    "back your last question, <b>Ctrl+N</b> starts a new chat, <b>Esc</b> stops an answer, "
    "<b>Ctrl+F</b> finds words in the conversation.</p>{suggestions}</div>"
)
SUGGESTION_SCHEME = "suggest:"
# Above a SearChain draft while the chain checks it (plain text, not part of the answer).
DRAFT_LABEL = "Draft from the question's passages, being checked step by step:\n"


@dataclass
class ChatEntry:
    """One message as the chat pane draws it."""

    role: str  # "user" | "assistant"
    text: str
    key: str = ""  # unique within the conversation; anchors use it
    result: AnswerResult | None = None
    status: str = "done"  # done | streaming | failed | cancelled
    error: str = ""
    extra: dict = field(default_factory=dict)


class MessageInput(QPlainTextEdit):
    """Enter submits; Shift+Enter is a new line; Up in an empty box asks for the last question
    (to edit and send it again, as in a terminal)."""

    submitted = Signal()
    recall_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        if event.key() == Qt.Key.Key_Up and not self.toPlainText():
            self.recall_requested.emit()
            return
        super().keyPressEvent(event)


class ChatView(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()
    reference_clicked = Signal(object)  # Reference

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.transcript = QTextBrowser(self)
        self.transcript.setObjectName("transcript")
        self.transcript.setAccessibleName("Conversation transcript")
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._on_anchor)
        self.transcript.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.transcript.customContextMenuRequested.connect(self._context_menu)
        self.context_actions: list = []  # QActions the window adds below Copy / Select All
        self.find_bar = FindBar(self.transcript, self)
        self.phase = QLabel("", self)
        self.phase.setObjectName("phaseLabel")
        self.phase.setTextFormat(Qt.TextFormat.PlainText)
        self.phase.setVisible(False)
        self.clock = AnswerClock(self)
        self.input = MessageInput(self)
        self.input.setObjectName("messageInput")
        self.input.setAccessibleName("Your question")
        self.input.setPlaceholderText("Ask a question…  (Enter to send, Shift+Enter for a new line)")
        self.input.setMaximumHeight(96)
        self.input.submitted.connect(self._submit)
        self.input.recall_requested.connect(self.recall_last_question)
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("sendButton")
        self.send_button.clicked.connect(self._submit)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setVisible(False)
        self.strategy = StrategyPicker(self)
        self.corpora = ChatCorporaButton(self)

        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.strategy)
        buttons.addWidget(self.corpora)
        buttons.addStretch(1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.find_bar)
        status = QHBoxLayout()
        status.addWidget(self.phase, 1)
        status.addWidget(self.clock)
        layout.addLayout(status)
        layout.addLayout(row)

        self.entries: list[ChatEntry] = []
        self.suggestions: list[str] = []
        self.busy = False
        self._stream_start: int | None = None
        self._stream_phase: str | None = None
        self.streamed_text = ""
        self.render()

    # -- state -------------------------------------------------------------------------------
    def set_entries(self, entries: list[ChatEntry]) -> None:
        self.entries = list(entries)
        self._stream_start = None
        self.render()

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)
        self.phase.setVisible(busy)
        if busy:
            self.clock.start()
        else:
            self.phase.setText("")
            self.clock.stop()

    def set_phase(self, text: str) -> None:
        self.phase.setText(text)

    # -- streaming ---------------------------------------------------------------------------
    def begin_answer(self, question: str, key: str = "pending", run: Any = None) -> None:
        """Show the question and an empty assistant message that tokens stream into; ``run``
        (a RunInfo) names the model and corpus under the finished answer."""
        self.entries.append(ChatEntry("user", question, key=f"{key}-q"))
        self.entries.append(ChatEntry("assistant", "", key=key, status="streaming",
                                      extra={"run": run} if run is not None else {}))
        self.render()
        self.set_busy(True)

    def append_token(self, text: str, phase: str = "") -> None:
        """Append streamed model text; a new phase replaces the previous phase's text, except
        that a SearChain draft stays, marked as one, until the final answer replaces it."""
        if self._stream_start is None:
            return
        action = streamed_text_action(self._stream_phase, phase)
        if action == "keep":
            return
        cursor = QTextCursor(self.transcript.document())
        if action == "replace":
            cursor.setPosition(self._stream_start)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            self._stream_phase = phase
            self.streamed_text = ""
            if phase == PHASE_DRAFT:
                cursor.insertText(DRAFT_LABEL)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)  # plain text: never parsed as HTML
        self.streamed_text += text
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def note_rewrite(self, standalone: str) -> None:
        """Show, above the answer being built, the standalone question a follow-up became."""
        entry = self._pending()
        if entry is not None:
            entry.extra["answered_as"] = standalone
            self.render()

    def finish_answer(self, result: AnswerResult, key: str | None = None) -> None:
        entry = self._pending()
        if entry is None:
            entry = ChatEntry("assistant", "")
            self.entries.append(entry)
        entry.text = result.final_content
        entry.result = result
        entry.status = "done"
        if key is not None:
            entry.key = key
        self.set_busy(False)
        self.render()

    def fail_answer(self, message: str, cancelled: bool = False) -> None:
        entry = self._pending()
        if entry is not None:
            entry.status = "cancelled" if cancelled else "failed"
            entry.error = message
            # What streamed before it stopped stays on screen, as the store keeps it.
            entry.text = self.streamed_text or entry.text
        self.set_busy(False)
        self.render()

    def _pending(self) -> ChatEntry | None:
        for entry in reversed(self.entries):
            if entry.role == "assistant" and entry.status == "streaming":
                return entry
        return None

    # -- rendering ---------------------------------------------------------------------------
    def render(self) -> None:
        self._stream_start = None
        self._stream_phase = None
        if not self.entries:
            self.transcript.setHtml(EMPTY_STATE.format(muted=self.colours().muted,
                                                       suggestions=self._suggestions_html()))
            return
        colours = self.colours()
        self.transcript.setHtml("".join(self._entry_html(e, colours) for e in self.entries))
        if self._pending() is not None:
            cursor = QTextCursor(self.transcript.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self._stream_start = cursor.position()
            self.streamed_text = ""
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def set_suggestions(self, questions: list[str]) -> None:
        """Example questions the empty chat offers (the demo corpus's); a click puts one in
        the input box, ready to send or edit."""
        self.suggestions = list(questions)
        if not self.entries:
            self.render()

    def _suggestions_html(self) -> str:
        if not self.suggestions:
            return ""
        items = "".join(f"<li><a href='{SUGGESTION_SCHEME}{n}'>{escape(q)}</a></li>"
                        for n, q in enumerate(self.suggestions))
        return f"<p>Try one about the demo corpus:</p><ul>{items}</ul>"

    def colours(self) -> Colours:
        return colours_for(self.palette())  # ours is updated before our children's

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        # The desktop switched between light and dark: redraw in the other colour set. While an
        # answer streams, the redraw at its end picks the new colours up.
        if (event.type() == QEvent.Type.PaletteChange and hasattr(self, "entries")
                and self._pending() is None):
            self.render()

    def _entry_html(self, entry: ChatEntry, colours: Colours = LIGHT) -> str:
        if entry.role == "user":
            return (
                "<table width='100%' cellpadding='8' style='margin-top:10px'><tr><td "
                f"style='background-color:{colours.user_background}'><b>You</b><br>"
                f"{text_to_html(entry.text)}</td></tr></table>"
            )
        head = "<p style='margin-top:10px'><b>SearChain</b>"
        answered_as = (entry.result.standalone_question if entry.result is not None
                       else entry.extra.get("answered_as"))
        # A follow-up is answered as rewritten with the conversation: say so, as plain text.
        note = (f"<div style='color:{colours.muted}'><i>Answered as: {escape(answered_as)}</i></div>"
                if answered_as else "")
        if entry.status == "streaming":
            return (head + f" <i style='color:{colours.faint}'>(working…)</i></p>{note}"
                    f"<p style='color:{colours.muted}'>")
        body = note
        if entry.result is not None:
            marks = [ref.mark for ref in entry.result.references]
            body += answer_html(entry.result.final_content, entry.key, marks)
            body += references_html(entry.result.references, entry.key, colours)
            strategy = SHORT_LABELS.get(entry.result.mode, entry.result.mode)
            meta = f"{strategy} · {counted(entry.result.rounds, 'round')} · {entry.result.seconds:.1f} s"
            run = entry.extra.get("run")
            if run is not None:  # which model and corpus made it: a chat outlives a change of either
                parts = (run.model, f"corpus {run.corpus}" if run.corpus else "")
                meta += "".join(f" · {part}" for part in parts if part)
            body += f"<div style='color:{colours.faint};font-size:small'>{escape(meta)}</div>"
        elif entry.text:
            body += text_to_html(entry.text)
        if entry.status == "failed":
            body += f"<p style='color:{colours.error}'>⚠ {text_to_html(entry.error)}</p>"
        elif entry.status == "cancelled":
            body += f"<p style='color:{colours.faint}'><i>Stopped.</i></p>"
        elif entry.status == "interrupted":
            body += (f"<p style='color:{colours.faint}'><i>Interrupted: the app closed before this "
                     "answer finished.</i></p>")
        return f"{head}</p><div>{body}</div>"

    def _context_menu(self, pos) -> None:
        menu = self.transcript.createStandardContextMenu(pos)
        if self.context_actions:
            menu.addSeparator()
            menu.addActions(self.context_actions)
        menu.exec(self.transcript.viewport().mapToGlobal(pos))
        menu.deleteLater()

    # -- input and links ---------------------------------------------------------------------
    def _submit(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.busy:
            return
        self.input.clear()
        self.send_requested.emit(text)

    def recall_last_question(self) -> bool:
        """Put the conversation's last question in the empty input box, cursor at its end."""
        question = self.last_question()
        if not question or self.input.toPlainText():
            return False
        self.input.setPlainText(question)
        self.input.moveCursor(QTextCursor.MoveOperation.End)
        return True

    def _on_anchor(self, url: QUrl) -> None:
        if url.toString().startswith(SUGGESTION_SCHEME):
            index = int(url.toString()[len(SUGGESTION_SCHEME):])
            if not self.busy and 0 <= index < len(self.suggestions):
                self.input.setPlainText(self.suggestions[index])
                self.input.moveCursor(QTextCursor.MoveOperation.End)
                self.input.setFocus()
            return
        parsed = parse_ref_url(url.toString())
        if parsed is None:
            return
        reference = self.find_reference(*parsed)
        if reference is not None:
            self.reference_clicked.emit(reference)

    def find_reference(self, key: str, mark: int) -> Reference | None:
        for entry in self.entries:
            if entry.result is not None and str(entry.key) == key:
                for ref in entry.result.references:
                    if ref.mark == mark:
                        return ref
        return None

    def last_question(self) -> str | None:
        for entry in reversed(self.entries):
            if entry.role == "user":
                return entry.text
        return None

    def last_result(self) -> AnswerResult | None:
        for entry in reversed(self.entries):
            if entry.result is not None:
                return entry.result
        return None
