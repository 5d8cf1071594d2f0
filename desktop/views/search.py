"""Search a corpus directly (retrieval only): works before any LLM is installed."""

from __future__ import annotations

import textwrap

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from searchain.events import Progress
from searchain.units import counted

from ..context import AppContext
from ..render import describe_error, plain_tooltip, progress_line
from ..workers import Job, JobRunner

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
SNIPPET_CHARS = 240


class SearchDialog(QDialog):
    passage_opened = Signal(object)  # Passage
    searched = Signal(int)  # number of hits (tests wait on it)

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Search the corpus")
        self.resize(720, 480)
        self.ctx = ctx
        self.runner = runner
        self.job: Job | None = None
        self.corpus = QComboBox(self)
        self.corpus.setObjectName("searchCorpus")
        self.query = QLineEdit(self)
        self.query.setObjectName("searchQuery")
        self.query.setPlaceholderText("Words or a question…")
        self.query.returnPressed.connect(self.search)
        self.k = QSpinBox(self)
        self.k.setRange(1, 100)
        self.k.setValue(10)
        self.k.setPrefix("top ")
        self.button = QPushButton("Search", self)
        self.button.clicked.connect(self.search)
        self.results = QListWidget(self)
        self.results.setObjectName("searchResults")
        self.results.setWordWrap(True)
        self.results.setAlternatingRowColors(True)
        self.results.setSpacing(2)
        self.results.itemDoubleClicked.connect(self._open)
        self.status = QLabel("Double-click a result to read the whole passage.", self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.corpus)
        row.addWidget(self.query, 1)
        row.addWidget(self.k)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.status)
        self._fill_corpora()
        self.query.setFocus()  # opened to type words into, not to pick the corpus first

    def _fill_corpora(self) -> None:
        try:
            names = self.ctx.workspace().corpora.names()
        except Exception as exc:  # noqa: BLE001
            names = []
            self.status.setText(describe_error(exc)[0])
        active = self.ctx.settings.active_corpus
        if active not in names:
            names.insert(0, active)  # the demo corpus may still be being prepared
        self.corpus.addItems(names)
        self.corpus.setCurrentText(active)

    def search(self) -> Job | None:
        text = self.query.text().strip()
        if not text or self.job is not None:
            return None
        corpus, k, ctx = self.corpus.currentText(), self.k.value(), self.ctx
        self.status.setText(f"Searching '{corpus}'… (the first search opens the index)")
        self.button.setEnabled(False)

        def work(on_event, cancel):
            return ctx.workspace().retriever(corpus, on_event=on_event, cancel=cancel).search(text, k=k)

        self.job = self.runner.start("search", work, on_event=self._progress, on_done=self._show,
                                     on_error=self._failed)
        return self.job

    def _progress(self, event) -> None:
        """A slow first step (a keyword index a stopped ingest left) says what it does."""
        if isinstance(event, Progress) and event.message:
            self.status.setText(progress_line(event))

    def _show(self, hits) -> None:
        self.job = None
        self.button.setEnabled(True)
        self.results.clear()
        for rank, hit in enumerate(hits, start=1):
            p = hit.passage
            snippet = textwrap.shorten(" ".join(p.text.split()), SNIPPET_CHARS, placeholder=" …")
            item = QListWidgetItem(f"{rank}. {p.title or '(untitled)'}\n{snippet}")  # plain text
            item.setData(HIT_ROLE, p)
            # Fused scores mean little to a reader: they go in the tooltip with the passage id.
            tip = f"{p.pid} · {hit.retriever} score {hit.score:.3f}\n\n{p.text[:1000]}"
            item.setToolTip(plain_tooltip(tip))  # passage text: shown as characters, never markup
            self.results.addItem(item)
        self.status.setText(f"{counted(len(hits), 'passage')}." if hits else "Nothing found. Try other words.")
        self.searched.emit(len(hits))

    def _failed(self, exc: BaseException) -> None:
        self.job = None
        self.button.setEnabled(True)
        message, hint = describe_error(exc)
        self.status.setText(f"{message}\n{hint}".strip())
        self.searched.emit(-1)

    def _open(self, item: QListWidgetItem) -> None:
        passage = item.data(HIT_ROLE)
        if passage is not None:
            self.passage_opened.emit(passage)
