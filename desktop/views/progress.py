"""A progress row for long jobs: bar, stage text, estimated time left, Cancel."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from searchain.events import Progress

from ..render import eta_seconds, format_duration


# Engine stage codes in the words the progress row and the status bar use.
STAGE_WORDS = {"ingest": "reading the source", "embed": "embedding passages",
               "index": "building the search index", "embed 2nd": "embedding with the second model",
               "index 2nd": "building the second model's index", "download": "downloading",
               "verify": "checking the download", "eval": "evaluating",
               "import": "importing a corpus file", "export": "exporting to a corpus file"}


def stage_words(stage: str) -> str:
    return STAGE_WORDS.get(stage, stage)


class ProgressRow(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bar = QProgressBar(self)
        self.bar.setObjectName("progressBar")
        self.label = QLabel(self)
        self.label.setObjectName("progressLabel")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.eta = QLabel(self)
        self.eta.setObjectName("progressEta")
        self.cancel = QPushButton("Cancel", self)
        self.cancel.setObjectName("cancelButton")
        self.cancel.clicked.connect(self.cancel_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.bar, 1)
        row.addWidget(self.eta)
        row.addWidget(self.cancel)
        self.hide()

    def start(self, text: str) -> None:
        self.label.setText(text)
        self.bar.setRange(0, 0)  # busy until the first Progress with a total
        self.eta.setText("")
        self.cancel.setEnabled(True)
        self.show()

    def update_progress(self, event: Progress) -> None:
        if event.total:
            self.bar.setRange(0, int(event.total))
            self.bar.setValue(min(int(event.done), int(event.total)))
            self.eta.setText(f"{format_duration(eta_seconds(event.done, event.total, event.started_at))} left")
        else:
            self.bar.setRange(0, 0)
            self.eta.setText(f"{event.done:,} done")
        words = stage_words(event.stage)
        self.label.setText(event.message or words[:1].upper() + words[1:])

    def finish(self) -> None:
        self.hide()
