"""The passage viewer: the passage behind a ``[n]`` mark, its supporting span highlighted.

Shows title, where in its file the passage is ("report.pdf, p. 12 - 3.2 Results", when the
file has pages or headings; a ZIM or dump article's section path), corpus, passage id and
source, and an article's address where the source gave one (ZIM files, dumps), as plain-text
labels and the passage as escaped HTML (``render.passage_html``). "Open whole document" asks the
main window (through the ``document_requested`` signal) to fetch the full document off the UI
thread.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from searchain.reasoning import Reference
from searchain.types import Passage

from ..colours import colours_for
from ..render import passage_html


def _plain_label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(True)
    return label


class PassageViewer(QWidget):
    document_requested = Signal(object)  # the Passage whose whole document is wanted
    source_requested = Signal(object)  # the Passage whose source file should be opened

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = _plain_label(self, "passageTitle")
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.title.setFont(font)
        self.location = _plain_label(self, "passageLocation")
        self.corpus = _plain_label(self, "passageCorpus")
        self.query = _plain_label(self, "passageQuery")
        self.url = _plain_label(self, "passageUrl")  # plain text: an address to copy, not a link
        self.body = QTextBrowser(self)
        self.body.setObjectName("passageBody")
        self.body.setAccessibleName("Cited passage")
        self.body.setOpenLinks(False)
        self.open_document = QPushButton("Open whole document", self)
        self.open_document.setEnabled(False)
        self.open_document.clicked.connect(self._request_document)
        self.open_source = QPushButton("Open source file", self)
        self.open_source.setObjectName("openSource")
        self.open_source.setToolTip("Open the file this passage was read from in its usual application")
        self.open_source.setEnabled(False)
        self.open_source.clicked.connect(lambda: self.passage and self.source_requested.emit(self.passage))

        self._form = form = QFormLayout()
        form.addRow("Found in:", self.location)
        self.location_label = form.labelForField(self.location)
        form.addRow("Corpus:", self.corpus)
        form.addRow("Address:", self.url)
        form.addRow("Supports:", self.query)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_source)
        buttons.addWidget(self.open_document)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(self.body, 1)
        layout.addLayout(buttons)
        self.passage: Passage | None = None
        self.span: tuple[int, int] | None = None
        self.show_empty()

    def show_empty(self) -> None:
        self.passage = None
        self.span = None
        self.title.setText("No passage selected")
        self._show_location("", "")
        self.corpus.setText("")
        self.query.setText("")
        self.body.setPlainText("Click a [n] mark in an answer, or a reference under it, to see the passage it cites.")
        self.open_document.setEnabled(False)
        self.open_source.setEnabled(False)

    def show_reference(self, reference: Reference) -> None:
        self.show_passage(reference.passage, reference.span, f"{reference.query} → {reference.answer}")

    def show_passage(self, passage: Passage, span: tuple[int, int] | None = None, supports: str = "") -> None:
        self.passage = passage
        self.span = span
        self.title.setText(passage.title or "(untitled)")
        self._show_location(passage.location(), passage.url)
        where = f"{passage.corpus} · passage {passage.pid}"
        if passage.source:
            where += f" · {passage.source}"
        self.corpus.setText(where)
        self.query.setText(supports)
        self._draw_body()
        self.open_document.setEnabled(bool(passage.doc_id))
        self.open_source.setEnabled(bool(passage.source))

    def _show_location(self, where: str, url: str) -> None:
        """The "Found in:" row (page and section path) and the "Address:" row (an article's
        URL), each hidden when the passage's source gave nothing for it (a TSV)."""
        for label, value in ((self.location, where), (self.url, url)):
            label.setText(value or "")
            self._form.setRowVisible(label, bool(value))

    def _draw_body(self) -> None:
        if getattr(self, "passage", None) is not None:  # (a palette change can come mid-__init__)
            self.body.setHtml(passage_html(self.passage.text, self.span, colours_for(self.palette())))

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._draw_body()  # the highlight's colours follow the light/dark theme

    def highlighted_text(self) -> str:
        if self.passage is None or self.span is None:
            return ""
        return self.passage.text[self.span[0] : self.span[1]]

    def _request_document(self) -> None:
        if self.passage is not None:
            self.document_requested.emit(self.passage)


class DocumentDialog(QDialog):
    """The whole source document, with the cited passage's range highlighted."""

    def __init__(self, title: str, text: str, span: tuple[int, int] | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Document — {title}")
        self.resize(720, 560)
        self.body = QTextBrowser(self)
        self.body.setObjectName("documentBody")
        self.body.setAccessibleName("Whole document")
        self.body.setOpenLinks(False)
        self.body.setHtml(passage_html(text, span, colours_for(self.palette())))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.body, 1)
        layout.addWidget(buttons)
        if span is not None:
            cursor = self.body.textCursor()
            cursor.setPosition(min(span[0], len(self.body.toPlainText())))
            self.body.setTextCursor(cursor)
            self.body.ensureCursorVisible()
