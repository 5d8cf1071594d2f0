"""The corpus manager: list corpora, add (file, folder, Wikipedia dump), get Wikipedia
(``get_wikipedia``), rebuild, remove, activate.

Adding and rebuilding run on a worker with a progress bar, a time-left estimate and Cancel;
after the passages are stored the vector index is built. Every build is planned first, and a
build estimated at over an hour starts only after the user agrees (``corpus_build_plan``).
Each row shows its index's state; *Update › Update index* brings it up to date from the stored passages
(continuing a stopped build, or repairing a damaged graph from the saved embeddings), and
re-embeds everything only when the index was made by another embedding model, after asking.
A file or folder dropped on the dialog is added like one picked with *Add › File…/Folder…*.
*Update* re-syncs a folder corpus with its folders, *Update from…* brings a corpus to a newer
snapshot of its source; only what changed is re-read and re-embedded (``update``).
*Import…* and *Export…* move a corpus, index included, between machines as one file
(``transfer``).
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from searchain.events import Progress

from ...context import AppContext
from ...render import describe_error, format_bytes, plain_tooltip
from ...workers import Job, JobRunner
from ..progress import ProgressRow
from ..tables import read_only_table
from .build_plan import PlannedIndexBuilds, plan_index_build
from .get_wikipedia import WikipediaGetter
from .transfer import CorpusTransfer
from .update import CorpusUpdates

HEADERS = ("Name", "Passages", "Indexed", "Embedder", "Index", "State", "Size", "Active")
INDEX_STATE_TEXT = {"missing": "not built", "partial": "build stopped", "ready": "ready",
                    "stale": "out of date", "mismatch": "other model", "damaged": "damaged",
                    "unreadable": "unreadable now"}


def corpus_name_for(path: str | Path) -> str:
    """A valid corpus name suggested from a source path (letters, digits, - and _)."""
    stem = Path(path).name.split(".")[0] or "corpus"
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-_").lower()
    return name[:40] or "corpus"


class CorpusManagerDialog(PlannedIndexBuilds, CorpusUpdates, QDialog):
    active_changed = Signal(str)
    job_finished = Signal(str)  # "done" | "failed" | "cancelled" (tests wait on it)

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Corpora")
        self.resize(820, 420)
        self.ctx = ctx
        self.runner = runner
        self.confirm_destructive = True
        self.job: Job | None = None
        self.transfer = CorpusTransfer(self)  # Import… and Export… (corpus files)
        self.wikipedia = WikipediaGetter(self)  # Get Wikipedia… (download, check, ingest, index)
        self.table = read_only_table(self, "corpusTable", HEADERS, stretch=HEADERS.index("Embedder"))
        self.table.setWordWrap(True)  # as before: its cells may wrap
        self.status = QLabel(self)
        self.status.setObjectName("corpusStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.progress = ProgressRow(self)
        self.progress.cancel_requested.connect(self.cancel_job)

        buttons = self._make_buttons()
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self.changes = self.make_changes_box()  # what the last Update changed (``update``)
        layout.addWidget(self.changes)
        layout.addWidget(self.make_sync_checkbox())
        layout.addLayout(buttons)
        self.setAcceptDrops(True)
        self.refresh()

    # -- listing -----------------------------------------------------------------------------
    def manager(self):
        return self.ctx.workspace().corpora

    def refresh(self) -> None:
        try:
            infos = self.manager().list()
        except Exception as exc:  # noqa: BLE001
            self._error(exc)
            return
        self.table.setRowCount(len(infos))
        self.index_states = {}
        for row, info in enumerate(infos):
            indexed = "—" if info.indexed is None else f"{info.indexed:,}"
            index = self._index_status(info.name)
            self.index_states[info.name] = index.state if index else None
            passages = "?" if info.passages is None else f"{info.passages:,}"  # store unreadable
            values = (info.name, passages, indexed, info.embedder or "not indexed",
                      INDEX_STATE_TEXT.get(index.state, index.state) if index else "?", info.state,
                      format_bytes(info.size_bytes), "✓" if info.active else "")
            for col, value in enumerate(values):
                self.table.setItem(row, col, QTableWidgetItem(value))  # plain text items
            if info.problem:  # the full reason in a tooltip keeps the column narrow
                tip = info.problem + (f"\n{info.hint}" if info.hint else "")
                self.table.item(row, HEADERS.index("State")).setToolTip(plain_tooltip(tip))
            if index:
                fix = {"ready": "", "unreadable": f"\n{index.hint}"}.get(index.state,
                                                                       "\nUpdate index fixes this.")
                tip = index.message + fix
                self.table.item(row, HEADERS.index("Index")).setToolTip(plain_tooltip(tip))
        if not infos:
            self.status.setText("No corpus yet. Add a file, a folder or a Wikipedia dump (or drop one "
                                "here), or Get Wikipedia… in one step.")

    def names(self) -> list[str]:
        return [self.table.item(r, 0).text() for r in range(self.table.rowCount())]

    def selected(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).text() if rows else None

    def select(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).text() == name:
                self.table.selectRow(row)

    # -- actions -----------------------------------------------------------------------------
    def add_dialog(self, kind: str) -> None:
        if kind == "folder":
            source = QFileDialog.getExistingDirectory(self, "Add a folder of documents")
        else:
            filt = "Wikipedia dumps, Kiwix ZIM and parquet files (*.xml *.xml.bz2 *.bz2 *.zim *.parquet)" \
                if kind == "mediawiki" else (
                    "Documents and corpus files (*.pdf *.docx *.odt *.html *.htm *.epub *.md *.txt "
                    "*.jsonl *.json *.tsv *.xml *.bz2 *.zim *.parquet);;All files (*)")
            source, _ = QFileDialog.getOpenFileName(self, "Add a corpus source", "", filt)
        if not source:
            return
        name = self.ask_name(source)
        if name:
            # a .zim or .parquet picked in the Wikipedia dialog is detected like any other file
            wiki_dump = kind == "mediawiki" and not source.lower().endswith((".zim", ".parquet"))
            self.add(name, source, "mediawiki" if wiki_dump else None)

    def ask_name(self, source: str) -> str | None:
        """The corpus name for ``source``, asked with a suggestion (None: the user cancelled)."""
        if Path(source).is_dir():  # its parsing workers' fork server loads while the name is asked
            from searchain.corpus import warm_up_workers

            warm_up_workers()
        suggestion = corpus_name_for(source)
        existing = [n for n in self.names() if n != suggestion]
        name, ok = QInputDialog.getItem(
            self, "Corpus name",
            "A new corpus's name, or an existing corpus to add this source to\n"
            "(only the new passages are embedded):",
            [suggestion, *existing], 0, True)
        return name.strip() if ok and name.strip() else None

    # -- drag and drop -----------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        paths = dropped_paths(event.mimeData())
        if not paths:
            return
        event.acceptProposedAction()
        self.add_dropped(paths)

    def add_dropped(self, paths: list[Path]) -> Job | None:
        """Add one dropped file or folder (its format detected, a Wikipedia dump included)."""
        if len(paths) > 1:
            self.status.setText(f"{len(paths)} items were dropped: drop one file or folder at a time "
                                "(a folder of documents becomes one corpus).")
            return None
        source = str(paths[0])
        name = self.ask_name(source)
        return self.add(name, source) if name else None

    def add(self, name: str, source: str | Path, fmt: str | None = None, *, index: bool = True) -> Job | None:
        ctx = self.ctx

        def work(on_event, cancel):
            report = ctx.workspace().corpora.add(name, source, fmt, on_event=on_event, cancel=cancel)
            ctx.workspace().forget_retriever(name)
            return report, (plan_index_build(ctx, name, False, on_event, cancel) if index else None)

        return self._start(f"Adding {Path(source).name} to '{name}'", work,
                           lambda result: self._after_ingest(name, False, *result))

    def rebuild(self, name: str | None, *, index: bool = True) -> Job | None:
        if not name:
            return None
        ctx = self.ctx

        def work(on_event, cancel):
            report = ctx.workspace().corpora.rebuild(name, on_event=on_event, cancel=cancel)
            ctx.workspace().forget_retriever(name)
            return report, (plan_index_build(ctx, name, True, on_event, cancel) if index else None)

        return self._start(f"Rebuilding '{name}'", work,
                           lambda result: self._after_ingest(name, True, *result))

    def _index_status(self, name: str):
        """The index's state for the table, or None when it cannot be read."""
        from searchain.index import listing_status

        try:
            return listing_status(self.ctx.paths, self.ctx.settings, name)
        except Exception:  # noqa: BLE001 - a damaged corpus is already shown as such
            return None

    def remove(self, name: str | None) -> None:
        if not name or self.job is not None:
            return
        if self.confirm_destructive and QMessageBox.question(
                self, "Remove corpus", f"Delete corpus '{name}' and its index from disk?") != QMessageBox.StandardButton.Yes:
            return
        try:
            self.ctx.workspace().forget_retriever(name)
            self.manager().remove(name)
        except Exception as exc:  # noqa: BLE001
            self._error(exc)
        else:
            self.status.setText(f"Removed '{name}'.")
            self.active_changed.emit(self.ctx.settings.active_corpus)
        self.refresh()

    def set_active(self, name: str | None) -> None:
        if not name:
            return
        try:
            self.manager().set_active(name)
        except Exception as exc:  # noqa: BLE001
            self._error(exc)
            return
        self.status.setText(f"Questions now use '{name}'.")
        self.refresh()
        self.active_changed.emit(name)

    def cancel_job(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.progress.cancel.setEnabled(False)
            self.status.setText("Cancelling…")

    # -- job plumbing ------------------------------------------------------------------------
    def _start(self, text: str, work, on_done=None, on_error=None) -> Job | None:
        """Run ``work`` on the worker with the progress row; ``on_done``/``on_error`` replace the
        default outcome handlers (they end with ``_end``)."""
        if self.job is not None:
            self.status.setText("Another corpus job is running; wait for it or cancel it.")
            return None
        self.progress.start(text)
        self.status.setText(text + "…")
        self._set_buttons(False)
        self.job = self.runner.start("corpus", work, on_event=self._on_event,
                                     on_done=on_done or self._on_done,
                                     on_error=on_error or self._on_error, on_cancelled=self._on_cancelled)
        return self.job

    def _on_event(self, event) -> None:
        if isinstance(event, Progress):
            self.progress.update_progress(event)

    def _on_done(self, report) -> None:
        added = getattr(report, "added", None)
        if hasattr(report, "embedded"):  # an IndexReport (not imported here: it pulls in numpy)
            reused = f", {report.reused:,} kept" if report.reused else ""
            second = (f"; {report.second_embedded:,} by the second model"
                      if getattr(report, "second_embedder", "") else "")
            text = f"Index ready: {report.total:,} passages ({report.embedded:,} embedded{reused}{second})."
            if getattr(report, "second_problem", ""):
                text += f"\nThe second embedding model was left out: {report.second_problem}"
        else:
            text = f"Done{f': {added:,} passages added' if isinstance(added, int) else ''}."
        self._end(text + self.take_ingest_note(), "done")

    def take_ingest_note(self) -> str:
        """The last ingest's unread files, once (shown after its index build too)."""
        note, self.ingest_note = getattr(self, "ingest_note", ""), ""
        return note

    def _on_error(self, exc: BaseException) -> None:
        message, hint = describe_error(exc)
        self._end(f"{message}\n{hint}".strip(), "failed")

    def _on_cancelled(self) -> None:
        self._end("Cancelled. Nothing was lost: run it again, or use Update index, to continue where "
                  "it stopped.", "cancelled")

    def _end(self, text: str, outcome: str) -> None:
        self._idle()
        self.status.setText(text)
        self.job_finished.emit(outcome)

    def _idle(self) -> None:
        """No job any more: hide the progress row, enable the buttons, list the corpora again."""
        self.job = None
        self.progress.finish()
        self._set_buttons(True)
        self.refresh()

    def _make_buttons(self) -> QHBoxLayout:
        """The actions, grouped so the row stays readable: *Add* and *Update* open menus, the
        rest act on the selected corpus. ``self.buttons`` maps each action's key to it."""
        self.buttons: dict[str, QAction] = {}

        def action(key: str, text: str, slot, tip: str = "") -> QAction:
            act = QAction(text, self)
            act.setObjectName(f"corpus_{key}")
            act.setToolTip(tip)
            act.triggered.connect(lambda _checked=False: slot())
            self.buttons[key] = act
            return act

        def menu_button(text: str, actions: list[QAction]) -> QPushButton:
            button = QPushButton(text, self)
            menu = QMenu(button)
            menu.setToolTipsVisible(True)
            menu.addActions(actions)
            button.setMenu(menu)
            return button

        add = menu_button("Add", [
            action("file", "File…", lambda: self.add_dialog("file")),
            action("folder", "Folder of documents…", lambda: self.add_dialog("folder")),
            action("dump", "Wikipedia dump or ZIM file…", lambda: self.add_dialog("mediawiki")),
            action("wikipedia", "Get Wikipedia…", lambda: self.wikipedia.choose(),
                   "Download Wikipedia (Hugging Face parquet or the official dump), then index it"),
            action("import", "Import a corpus file…", lambda: self.transfer.import_dialog()),
        ])
        update = menu_button("Update", [
            action("update", "Re-read changed files", lambda: self.update_corpus(self.selected()),
                   "Read only the files (or articles) that are new, changed or gone"),
            action("update_from", "From a newer snapshot…", lambda: self.update_from_dialog(self.selected()),
                   "Bring a Wikipedia corpus to a newer dump, ZIM or parquet file"),
            action("index", "Update index", lambda: self.update_index(self.selected()),
                   "Embed new passages, finish a stopped build or repair the index"),
            action("rebuild", "Rebuild everything", lambda: self.rebuild(self.selected()),
                   "Read the sources again and rebuild the index from scratch"),
        ])
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(update)
        for act in (action("active", "Use for questions", lambda: self.set_active(self.selected())),
                    action("export", "Export…", lambda: self.transfer.export_dialog(self.selected())),
                    action("remove", "Remove", lambda: self.remove(self.selected()))):
            button = QPushButton(act.text(), self)
            button.setObjectName(act.objectName())
            button.clicked.connect(act.trigger)
            act.enabledChanged.connect(button.setEnabled)
            row.addWidget(button)
        self._menu_buttons = (add, update)
        row.addStretch(1)
        return row

    def _set_buttons(self, enabled: bool) -> None:
        for act in self.buttons.values():
            act.setEnabled(enabled)
        for button in self._menu_buttons:
            button.setEnabled(enabled)

    def _error(self, exc: BaseException) -> None:
        message, hint = describe_error(exc)
        self.status.setText(f"{message}\n{hint}".strip())


def dropped_paths(mime) -> list[Path]:
    """The local files and folders in a drag's data (web links and text are not sources)."""
    if mime is None or not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]

