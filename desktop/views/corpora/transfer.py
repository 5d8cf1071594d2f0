"""Corpus files in the corpus manager: *Import…* (also File > Import corpus) and *Export…*.

Both run on the manager's worker with its progress row (bytes, time left) and Cancel; the UI
thread only picks files and asks questions. Importing checks the file first (format, embedding
models, free disk) and never replaces a corpus: when its name is taken, the manager asks for
another, suggesting a free one. What a failed, cancelled or killed import leaves behind is
nothing (``searchain.library.bundle_import``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog

BUNDLE_FILTER = "SearChain corpus files (*.searchain-corpus *.zip);;All files (*)"


class CorpusTransfer:
    """The import and export actions of one ``CorpusManagerDialog``."""

    def __init__(self, dialog):
        self.dialog = dialog

    # -- import ------------------------------------------------------------------------------
    def import_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self.dialog, "Import a corpus file", "", BUNDLE_FILTER)
        return self.import_file(path) if path else None

    def import_file(self, path: str | Path, as_name: str | None = None):
        """Check and install the corpus file ``path`` on the worker; returns the job."""
        ctx, path = self.dialog.ctx, Path(path)

        def work(on_event, cancel):
            return ctx.workspace().import_corpus(path, as_name=as_name, on_event=on_event, cancel=cancel)

        return self.dialog._start(f"Importing {path.name}", work, on_done=self._imported,
                                  on_error=lambda exc: self._import_failed(exc, path))

    def ask_new_name(self, taken: str, suggestion: str) -> str | None:
        """The name to import under when ``taken`` exists (None: the user cancelled)."""
        name, ok = QInputDialog.getText(
            self.dialog, "Corpus name taken",
            f"A corpus named '{taken}' exists already; importing never replaces it.\n"
            "Import this file under the name:", text=suggestion)
        return name.strip() if ok and name.strip() else None

    def _import_failed(self, exc: BaseException, path: Path) -> None:
        from searchain.library import CorpusExists

        if not isinstance(exc, CorpusExists):
            self.dialog._on_error(exc)
            return
        self.dialog._idle()
        name = self.ask_new_name(exc.name, exc.suggestion)
        if name is None:
            self.dialog.status.setText(f"Import cancelled: a corpus named '{exc.name}' exists already.")
            self.dialog.job_finished.emit("cancelled")
            return
        self.import_file(path, as_name=name)

    def _imported(self, report) -> None:
        text = (f"Imported '{report.corpus}': {report.passages:,} passages. Select it and click "
                "Use for questions to ask about it.")
        for note in report.notes:
            text += "\n" + note
        self.dialog._end(text, "done")
        self.dialog.select(report.corpus)

    # -- export ------------------------------------------------------------------------------
    def export_dialog(self, name: str | None):
        if not name:
            self.dialog.status.setText("Select the corpus to export first.")
            return None
        path, _ = QFileDialog.getSaveFileName(self.dialog, f"Export corpus '{name}'",
                                              f"{name}.searchain-corpus", BUNDLE_FILTER)
        return self.export_to(name, path) if path else None

    def export_to(self, name: str, path: str | Path):
        ctx, path = self.dialog.ctx, Path(path)

        def work(on_event, cancel):
            # The save dialog already asked before replacing an existing file.
            return ctx.workspace().export_corpus(name, path, overwrite=True, on_event=on_event, cancel=cancel)

        return self.dialog._start(f"Exporting '{name}'", work, on_done=self._exported)

    def _exported(self, report) -> None:
        from ...render import format_bytes

        self.dialog._end(f"Exported '{report.corpus}' to {report.file} ({format_bytes(report.bytes)}).",
                         "done")


def import_corpus_from_menu(window) -> None:
    """File > Import corpus…: the corpus manager, with its import file picker open."""
    window.open_corpus_manager()
    window.corpus_dialog.transfer.import_dialog()
