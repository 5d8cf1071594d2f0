"""The model dialog's "On this computer" list: the app's own GGUFs and those other apps keep.

Nothing is listed on the UI thread: the dialog opens at once with a busy bar, and one background
job lists the app's folder and the user's folders (``llm.model_folders``) first, whose rows
arrive as soon as they are read (``local_listed``), then searches the other apps' places (LM
Studio, Ollama, GPT4All, Jan, the Hugging Face and llama.cpp caches:
``searchain.llm.models.discovery``), whose rows join the list when it ends
(``discovery_finished``); a folder on a slow or sleeping disk stalls nothing. Every row says
where the file comes from, its quantisation, trained context, template family, size and whether
it fits this computer. Choosing one emits ``model_chosen(path)`` with the file's own path: it
is used where it lies, never copied.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...render import describe_error, format_bytes, plain_tooltip
from ..tables import read_only_table

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
ERROR_ROLE = Qt.ItemDataRole.UserRole + 2
HEADERS = ("Name", "Source", "Parameters", "Quantisation", "Context", "Template", "Size", "Fits")
SOURCE_LABELS = {"app": "SearChain", "lmstudio": "LM Studio", "ollama": "Ollama", "gpt4all": "GPT4All",
                 "jan": "Jan", "hf-cache": "Hugging Face cache", "llama.cpp": "llama.cpp cache",
                 "folder": "Your folder"}
FITS_LABELS = {"gpu": "yes (GPU)", "cpu": "yes (CPU)", "": "too big"}
GIB = 1024 ** 3


def parameters_label(count: int) -> str:
    """1.54 B, 135 M: small test models would otherwise read as "0.00 B"."""
    return f"{count / 1e9:.2f} B" if count >= 1e9 else f"{count / 1e6:.0f} M" if count >= 1e6 \
        else f"{count:,}"


class _FirstRows:
    """The worker's report: the models in the app's and the user's folders."""

    def __init__(self, models):
        self.models = models


class _Machine:
    """The worker's first report, on the first listing: this computer's memory and GPU."""

    def __init__(self, facts):
        self.facts = facts


class FoundModelsPanel(QWidget):
    model_chosen = Signal(str)
    local_listed = Signal(int)  # the app's and the user's folders' rows are in the list
    machine_probed = Signal(object)  # MachineFacts, or None when they could not be read
    discovery_finished = Signal(int)  # rows listed once the other apps' places were searched

    def __init__(self, ctx, runner, status: QLabel, parent: QWidget | None = None):
        """``status``: the dialog's status line, where the panel says why a choice was refused.
        The first listing also probes this computer (``machine_facts``: memory, and the GPU
        through ``nvidia-smi``, which can take seconds) on its worker, for the Fits column and
        the dialog's recommendation (``machine_probed``)."""
        super().__init__(parent)
        self.ctx, self.runner, self.status = ctx, runner, status
        self.machine, self.probed = None, False
        self.job = None
        self.wanted: str | None = None  # a path to select once its row arrives
        self.table = read_only_table(self, "localModels", HEADERS, stretch=0)
        self.table.itemDoubleClicked.connect(lambda _item: self.use_selected())
        self.note = QLabel(self)
        self.note.setObjectName("discoveryNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        self.busy = QProgressBar(self)
        self.busy.setObjectName("discoveryBusy")
        self.busy.setRange(0, 0)  # indeterminate: how many files there are is what is looked for
        self.busy.setMaximumHeight(8)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.use_button = QPushButton("Use selected model", self)
        self.use_button.clicked.connect(self.use_selected)
        open_button = QPushButton("Open GGUF file…", self)
        open_button.clicked.connect(self._open_file)
        self.add_folder_button = QPushButton("Add a models folder…", self)
        self.add_folder_button.setObjectName("addModelFolder")
        self.add_folder_button.clicked.connect(self._add_folder)
        buttons = QHBoxLayout()
        for button in (self.use_button, open_button, self.add_folder_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("On this computer:", self))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.busy)
        layout.addWidget(self.note)
        layout.addLayout(buttons)

    # -- listing ----------------------------------------------------------------------------

    def refresh(self) -> None:
        """List the models in the background: the app's and the user's folders first (their
        rows arrive with ``local_listed``), then the other apps' places (``discovery_finished``).
        A newer refresh replaces a running one (a folder was added, a model downloaded)."""
        from searchain.llm import FactsCache, discover_models

        if self.job is not None:
            self.job.cancel()
        llm, known, probe = self.ctx.settings.llm, self.machine, not self.probed
        models_dir, folders, n_ctx = self.ctx.paths.models_dir, list(llm.model_folders), llm.n_ctx
        cache_dir = self.ctx.paths.cache_dir

        def work(on_event, cancel):  # worker thread: only copies of the settings cross over
            if probe:
                machine = _probe_machine()
                on_event(_Machine(machine))
            else:
                machine = known
            facts = FactsCache.in_cache_dir(cache_dir)
            on_event(_FirstRows(discover_models(models_dir, folders, machine=machine, n_ctx=n_ctx,
                                                other_apps=False, cancel=cancel, facts=facts)))
            return discover_models(models_dir, folders, machine=machine, n_ctx=n_ctx, cancel=cancel,
                                   facts=facts)

        self.note.setText("Listing the models on this computer: SearChain's folder and yours, then "
                          "other apps' (LM Studio, Ollama, GPT4All, Jan, Hugging Face)…")
        self.busy.show()
        self.job = job = self.runner.start("discover-models", work,
                                           on_event=lambda event: self._report(job, event),
                                           on_done=lambda models: self._found(job, models),
                                           on_error=lambda exc: self._failed(job, exc))

    def _report(self, job, event) -> None:
        if not _alive(self) or job is not self.job:
            return
        if isinstance(event, _Machine):
            self.machine, self.probed = event.facts, True
            self.machine_probed.emit(event.facts)
        elif isinstance(event, _FirstRows):
            self._show(event.models)
            self.local_listed.emit(len(event.models))

    def _show(self, models) -> None:
        """Fill the table, keeping the selected row (or selecting the one asked for)."""
        selected = self.wanted or self.selected_path()
        self.fill(models)
        if selected:
            self.select(selected)

    def _found(self, job, models) -> None:
        if not _alive(self) or job is not self.job:
            return  # the dialog closed, or a newer search is on its way
        self.job = None
        self.busy.hide()
        self._show(models)
        others = sum(1 for m in models if m.source not in ("app", "folder"))
        apps = sorted({SOURCE_LABELS[m.source] for m in models if m.source not in ("app", "folder")})
        self.note.setText(f"Also found {others} model{'s' if others != 1 else ''} from "
                          f"{', '.join(apps)}: used where they are, not copied." if others else
                          "No models from other apps (LM Studio, Ollama, GPT4All, Jan, Hugging Face, "
                          "llama.cpp) were found.")
        self.discovery_finished.emit(len(models))

    def _failed(self, job, exc: BaseException) -> None:
        if not _alive(self) or job is not self.job:
            return
        self.job = None
        self.busy.hide()
        message, _hint = describe_error(exc)
        self.note.setText(f"Looking for other apps' models failed: {message}")
        self.discovery_finished.emit(self.table.rowCount())

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job = None
            self.busy.hide()

    def fill(self, models) -> None:
        self.table.setRowCount(len(models))
        for row, model in enumerate(models):
            for col, (value, tip) in enumerate(_cells(model, self.ctx.settings.llm.n_ctx)):
                item = QTableWidgetItem(value)
                item.setData(PATH_ROLE, str(model.path))
                item.setData(ERROR_ROLE, model.error or "")
                item.setToolTip(plain_tooltip(tip))  # paths and errors name the user's files
                self.table.setItem(row, col, item)

    # -- choosing ---------------------------------------------------------------------------

    def paths(self) -> list[str]:
        return [self.table.item(r, 0).data(PATH_ROLE) for r in range(self.table.rowCount())]

    def selected_path(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).data(PATH_ROLE) if rows else None

    def select(self, path: str) -> None:
        """Select ``path``'s row; one not listed yet is selected when its row arrives."""
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).data(PATH_ROLE) == path:
                self.table.selectRow(row)
                self.wanted = None
                return
        self.wanted = path

    def use_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            self.status.setText("Select a model in the list first.")
            return
        item = self.table.item(rows[0].row(), 0)
        if item.data(ERROR_ROLE):
            self.status.setText(f"{item.text()} cannot be used: {item.data(ERROR_ROLE)}")
            return
        self.model_chosen.emit(item.data(PATH_ROLE))

    def _open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open GGUF model", str(Path.home()), "GGUF (*.gguf)")
        if path:
            self.model_chosen.emit(path)

    def _add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder of GGUF models", str(Path.home()))
        if not folder:
            return
        folders = self.ctx.settings.llm.model_folders
        if folder not in folders:
            folders.append(folder)
            self.ctx.save_settings()
        self.status.setText(f"Models in {folder} are listed from now on (Settings: llm.model_folders).")
        self.refresh()


def _cells(model, n_ctx: int) -> list[tuple[str, str]]:
    """(text, tooltip) of each column for one ``FoundModel``."""
    where = str(model.path) + (f"\n→ {model.resolved}" if model.resolved else "")
    if model.repo:
        where += f"\n{model.repo}"
    if model.aliases:
        where += "\nalso: " + ", ".join(model.aliases)
    source = SOURCE_LABELS.get(model.source, model.source)
    size = (format_bytes(model.size_bytes), f"{model.size_bytes:,} bytes")
    f = model.facts
    if f is None:
        why = model.error or "not a readable GGUF"
        return [(model.name, f"{where}\n{why}"), (source, why), ("unreadable", why), ("", why),
                ("", why), ("", why), size, ("cannot be used", why)]
    needs = (f"needs about {model.ram_bytes / GIB:.1f} GiB of RAM on the CPU, "
             f"{model.vram_bytes / GIB:.1f} GiB of GPU memory fully offloaded, at a "
             f"{min(n_ctx, f.context_length or n_ctx)}-token context") if model.ram_bytes else \
        "this computer's memory could not be read"
    return [(model.name, where), (source, f"found in {source}: {where}"),
            (parameters_label(f.parameters), f"{f.architecture}, {f.parameters:,} weights"),
            (f.quantisation, f.quantisation), (f"{f.context_length:,}", "trained context, in tokens"),
            (f.template_family, "chat-template family, read from the file"), size,
            (FITS_LABELS.get(model.fits, "unknown"), needs)]


def _probe_machine():
    from searchain.llm import machine_facts  # no llama.cpp import (issue #21)

    try:
        return machine_facts()
    except Exception:  # noqa: BLE001  (a failed probe must not hide the models: Fits "unknown")
        return None


def _alive(widget: QWidget) -> bool:
    """False once Qt has deleted the widget (a dialog closed before its job ended)."""
    from shiboken6 import isValid

    return isValid(widget)
