"""*Update* in the corpus manager: a folder corpus re-synced with its folders, or (*Update
from…*) a corpus brought to a newer snapshot of its source (``searchain.library.update``).

Like an index build, an update is planned first on the worker; the plan's cost is shown, and
one estimated at over an hour starts only once the user agrees (``ask_to_start_update``, which
tests replace). The update itself runs as a cancellable job with progress, and when it ends the
dialog says what changed: the counts in the status line, and every changed, added and removed
file or article in the *changes* box below the table (plain text: names are data). A check box
holds the ``corpus.sync_folders`` setting (``desktop/folder_sync.py``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QFileDialog, QMessageBox, QPlainTextEdit

from ...workers import Job

SHOWN_IN_STATUS = 5


class CorpusUpdates:
    """The update actions of ``CorpusManagerDialog`` (mixed into it); relies on its ``ctx``,
    ``status``, ``job``, ``changes`` and job plumbing (``_start``, ``_end``)."""

    def make_changes_box(self) -> QPlainTextEdit:
        box = QPlainTextEdit(self)
        box.setObjectName("corpusChanges")
        box.setReadOnly(True)
        box.setMaximumHeight(140)
        box.hide()
        return box

    def make_sync_checkbox(self) -> QCheckBox:
        """The ``corpus.sync_folders`` setting: folder corpora updated at start and on changes."""
        box = QCheckBox("Keep folder corpora in sync (update them when the app starts and when "
                        "their files change)", self)
        box.setObjectName("corpusSyncFolders")
        box.setChecked(self.ctx.settings.corpus.sync_folders)
        box.setToolTip("Off by default. Takes effect the next time the app starts.")
        box.toggled.connect(self._sync_toggled)
        return box

    def _sync_toggled(self, on: bool) -> None:
        self.ctx.settings.corpus.sync_folders = on
        try:
            self.ctx.settings.save(self.ctx.paths)
        except Exception as exc:  # noqa: BLE001 - a read-only settings file
            self._error(exc)

    def update_corpus(self, name: str | None, source: str | None = None) -> Job | None:
        """Plan, then update ``name`` (from ``source``, a newer snapshot, when given)."""
        if not name:
            return None
        ctx = self.ctx
        self.changes.hide()
        return self._start(f"Planning the update of '{name}'",
                           lambda on_event, cancel: ctx.workspace().plan_corpus_update(
                               name, source, on_event=on_event, cancel=cancel),
                           lambda plan: self.start_update(name, source, plan))

    def update_from_dialog(self, name: str | None) -> Job | None:
        """*Update from…*: pick the newer snapshot (a dump, a ZIM or a parquet file) of ``name``'s source."""
        if not name:
            return None
        source, _ = QFileDialog.getOpenFileName(
            self, f"Newer snapshot for '{name}'", "",
            "Wikipedia dumps, ZIM, parquet and corpus files (*.xml *.bz2 *.zim *.parquet *.jsonl *.json *.tsv);;"
            "All files (*)")
        return self.update_corpus(name, source) if source else None

    def start_update(self, name: str, source: str | None, plan) -> Job | None:
        from searchain.units import duration

        self.job = None  # the planning job is over; its outcome is the update's
        if plan.needs_confirmation and not self.ask_to_start_update(name, plan):
            self._end(f"'{name}' was not updated.\n{plan.summary()}", "cancelled")
            return None
        ctx = self.ctx

        def work(on_event, cancel):
            return ctx.workspace().update_corpus(name, source, on_event=on_event, cancel=cancel)

        job = self._start(f"Updating '{name}' (about {duration(plan.est_seconds)})", work,
                          self._update_done)
        if job is not None:
            self.status.setText(plan.summary())
        return job

    def ask_to_start_update(self, name: str, plan) -> bool:
        """Whether to start an update estimated at over an hour (tests replace this)."""
        from searchain.units import duration

        box = QMessageBox(QMessageBox.Icon.Question, "Long update",
                          f"Updating '{name}' will take about {duration(plan.est_seconds)} on this "
                          "machine. Start it now? It can be cancelled, and continues later.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setDetailedText(plan.summary())
        return box.exec() == QMessageBox.StandardButton.Yes

    def _update_done(self, report) -> None:
        self.changes.setPlainText(changes_text(report))
        self.changes.setVisible(bool(report.changed or report.added or report.removed))
        self._end(update_status(report), "done")


def update_status(report) -> str:
    """The status line after an update: counts, then the first few names of each kind."""
    embedded = f" {report.passages_embedded:,} passages embedded." if report.index else ""
    text = (f"Updated '{report.corpus}' ({report.unit}): {report.changed:,} changed, {report.added:,} "
            f"added, {report.removed:,} removed, {report.unchanged:,} unchanged.{embedded}")
    for kind in ("changed", "added", "removed"):
        names = getattr(report, f"{kind}_names")[:SHOWN_IN_STATUS]
        if names:
            more = getattr(report, kind) - len(names)
            text += f"\n{kind.capitalize()}: " + ", ".join(_short(n) for n in names) + \
                (f" and {more:,} more" if more > 0 else "")
    if report.problems:
        text += f"\n{len(report.problems):,} could not be read (see the list below)."
    return text


def changes_text(report) -> str:
    """Every changed, added and removed name (as kept by the report), one per line."""
    lines = []
    for kind in ("changed", "added", "removed"):
        lines += [f"{kind}: {name}" for name in getattr(report, f"{kind}_names")]
    lines += [f"not read: {p.file}: {p.reason}" for p in report.problems]
    return "\n".join(lines)


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1] or name
