"""Showing passages in the main window: a cited reference, a reasoning node, a search hit, the
whole document (read on a worker) and the source file (handed to the desktop's application).

Kept apart from ``main_window`` so the window stays small; ``MainWindow`` mixes it in.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from .views.passage import DocumentDialog


def launch_detached(argv) -> None:
    """Start a viewer that outlives the app and never writes into its terminal."""
    import subprocess

    subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)


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
        desktop's application for it; returns the URL handed over.

        A PDF passage with a page opens at that page where the default viewer can be told one
        (``searchain.corpus.open_target``: a page flag, or ``#page=N`` for a browser); asking
        the desktop which viewer that is runs a child process, so it happens on a worker and
        this returns None. Where the page cannot be passed, the status bar says which it is."""
        from .document import source_target

        try:
            path, kind = source_target(passage)
        except FileNotFoundError as exc:
            self.message_bar.show_message(str(exc), kind="error")
            return None
        if kind == "file" and passage.page is not None and path.suffix.lower() == ".pdf":
            self._open_at_page(path, passage.page)
            return None
        url = QUrl.fromLocalFile(str(path))
        if not QDesktopServices.openUrl(url):
            self.message_bar.show_message(f"No application could open {path}.", kind="error")
            return None
        if kind == "folder":
            self.statusBar().showMessage(f"{Path(passage.source).name} is large: opened its folder.", 4000)
        return url.toString()

    def _open_at_page(self, path: Path, page: int) -> None:
        from searchain.corpus import open_target

        def opened(target) -> None:
            if target.command:
                try:
                    launch_detached(target.command)
                except OSError as exc:
                    self.message_bar.show_message(f"Could not start {target.command[0]}: {exc}", kind="error")
                    return
            elif not QDesktopServices.openUrl(QUrl(target.url)):
                self.message_bar.show_message(f"No application could open {path}.", kind="error")
                return
            self.statusBar().showMessage(
                target.note or f"Opened {path.name} at page {page}.", 6000)

        self.runner.start("open source", lambda _on_event, _cancel: open_target(path, page),
                          on_done=opened,
                          on_error=lambda exc: self.message_bar.show_error(exc, "Could not open the file"))

    def _show_search_hit(self, passage) -> None:
        self.passage.show_passage(passage)
        self.side_tabs.setVisible(True)
        self.side_tabs.setCurrentWidget(self.passage)
