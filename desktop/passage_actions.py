"""Showing passages in the main window: a cited reference, a reasoning node, a search hit, the
whole document (read on a worker) and the source file (handed to the desktop's application).

Kept apart from ``main_window`` so the window stays small; ``MainWindow`` mixes it in.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from .views.passage import DocumentDialog


class PassageActions:
    """The passage-showing actions of ``MainWindow`` (mixed into it).

    Relies on the window's ``ctx``, ``runner``, ``passage``, ``side_tabs``, ``toggle_reasoning``,
    ``text_zoom``, ``message_bar`` and status bar.
    """

    def show_reference(self, reference) -> None:
        self.passage.show_reference(reference)
        self.side_tabs.setVisible(True)
        self.toggle_reasoning.setChecked(True)
        self.side_tabs.setCurrentWidget(self.passage)

    def show_node(self, node) -> None:
        self.passage.show_passage(node.passage, node.span, f"{node.query} → {node.answer or ''}")
        self.side_tabs.setCurrentWidget(self.passage)

    def open_document(self, passage) -> None:
        ctx = self.ctx

        def work(_on_event, _cancel):
            with ctx.workspace().corpora.open_store(passage.corpus) as store:
                return store.document(passage.doc_id)

        def show(doc) -> None:
            from .document import document_text

            text, span = document_text(doc, passage)
            self.document_dialog = DocumentDialog(passage.title, text, span, self)
            self.text_zoom.add(self.document_dialog.body)
            self.document_dialog.show()

        self.runner.start("document", work, on_done=show,
                          on_error=lambda exc: self.message_bar.show_error(exc, "Could not open the document"))

    def open_source(self, passage) -> str | None:
        """Open the file a passage was read from (its folder, for a very large file) with the
        desktop's application for it; returns the URL handed over."""
        from .document import source_target

        try:
            path, kind = source_target(passage)
        except FileNotFoundError as exc:
            self.message_bar.show_message(str(exc), kind="error")
            return None
        url = QUrl.fromLocalFile(str(path))
        if not QDesktopServices.openUrl(url):
            self.message_bar.show_message(f"No application could open {path}.", kind="error")
            return None
        if kind == "folder":
            self.statusBar().showMessage(f"{Path(passage.source).name} is large: opened its folder.", 4000)
        return url.toString()

    def _show_search_hit(self, passage) -> None:
        self.passage.show_passage(passage)
        self.side_tabs.setVisible(True)
        self.side_tabs.setCurrentWidget(self.passage)
