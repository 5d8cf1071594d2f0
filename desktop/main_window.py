"""The main window: sidebar | chat | reasoning + passage, menus, shortcuts, status bar.

It wires views to flows and owns window state (geometry, splitter sizes, last conversation),
which it keeps in ``settings.ui``. Nothing here imports torch or llama.cpp: the engine is opened
lazily by ``AppContext.workspace()`` and anything slow runs through the ``JobRunner``.
Showing passages, documents and source files is ``passage_actions`` (mixed in).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QCloseEvent, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from searchain.config import resources_dir
from searchain.llm import STARTER_BEST_MODE, server_label, starter_app_notice, starter_label
from searchain.units import counted

from .answer_flow import AnswerFlow
from .context import AppContext
from .conversation_actions import ConversationActions
from .conversation_flow import ConversationFlow
from .folder_sync import FolderSync, sync_message
from .found_offer import FOUND_TOPIC, use_found_model
from .menus import build_menus
from .passage_actions import PassageActions
from .text_zoom import TextZoom
from .views.chat import ChatView
from .views.corpora.chat_picker import connect_chat_corpora
from .views.message_bar import MessageBar
from .views.passage import PassageViewer
from .views.reasoning import ReasoningPanel
from .views.sidebar import Sidebar
from .workers import JobRunner

DEFAULT_SIZE = (1280, 800)
DEFAULT_SPLITTER = [240, 620, 420]


def app_icon() -> QIcon:
    return QIcon(str(resources_dir() / "icons" / "searchain.svg"))


class MainWindow(PassageActions, ConversationActions, QMainWindow):
    def __init__(self, ctx: AppContext, *, restore: bool = True):
        super().__init__()
        self.ctx = ctx
        self.setWindowTitle("SearChain")
        self.setWindowIcon(app_icon())
        self.runner = JobRunner(self)
        self.confirm_destructive = True  # tests switch the confirmation dialogs off

        self.sidebar = Sidebar(self)
        self.chat = ChatView(self)
        self.reasoning = ReasoningPanel(self)
        self.passage = PassageViewer(self)
        self.message_bar = MessageBar(self)
        self.side_tabs = QTabWidget(self)
        self.side_tabs.setObjectName("sideTabs")
        self.side_tabs.addTab(self.reasoning, "Reasoning")
        self.side_tabs.addTab(self.passage, "Passage")

        centre = QWidget(self)
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        centre_layout.addWidget(self.message_bar)
        centre_layout.addWidget(self.chat, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(centre)
        self.splitter.addWidget(self.side_tabs)
        self.splitter.setChildrenCollapsible(True)
        self.splitter.setStretchFactor(1, 1)
        self.setCentralWidget(self.splitter)

        self.conversations = ConversationFlow(ctx, self.sidebar, self.chat, self.reasoning, self.message_bar, self)
        self.answers = AnswerFlow(ctx, self.runner, self.chat, self.reasoning, self.conversations,
                                  self.message_bar, self)
        self.conversations.is_busy = lambda: self.answers.busy
        connect_chat_corpora(self)
        self.chat.send_requested.connect(self.answers.ask)
        self.chat.stop_requested.connect(self.answers.stop)
        self.chat.reference_clicked.connect(self.show_reference)
        self.reasoning.node_activated.connect(self.show_node)
        self.passage.document_requested.connect(self.open_document)
        self.passage.source_requested.connect(self.open_source)
        self.sidebar.delete_requested.connect(self.delete_conversation)
        self.sidebar.export_requested.connect(self.export_conversation)
        self.message_bar.action_triggered.connect(self._on_banner_action)
        self.answers.busy_changed.connect(self._on_busy)
        self.answers.status.connect(lambda text, ms: self.statusBar().showMessage(text, ms))

        self.text_zoom = TextZoom(ctx.settings.ui, [self.chat.transcript, self.passage.body], restore=restore)
        self._build_status_bar()
        build_menus(self)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.answers.stop)
        self.resize(*DEFAULT_SIZE)
        self.splitter.setSizes(DEFAULT_SPLITTER)
        if restore:
            self.restore_state()
        self.update_status()
        self.folder_sync = FolderSync(ctx, self.runner, self)  # corpus.sync_folders (off by default)
        self.folder_sync.synced.connect(
            lambda name, report: self.statusBar().showMessage(sync_message(name, report), 8000))
        self.folder_sync.start()
        self.chat.input.setFocus()  # a chat window opens ready to type (not in the chat search)

    # -- status -----------------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        self.model_label = QLabel(self)
        self.corpus_label = QLabel(self)
        self.gpu_label = QLabel("GPU offload: not checked yet", self)
        for label in (self.model_label, self.corpus_label, self.gpu_label):
            label.setTextFormat(Qt.TextFormat.PlainText)
            self.statusBar().addPermanentWidget(label)

    def update_status(self) -> None:
        llm = self.ctx.settings.llm
        model = llm.model_path
        starter = starter_label(llm, self.ctx.paths.models_dir)
        if llm.backend == "openai":
            self.model_label.setText(f"Model: {server_label(llm.server_url, llm.server_model or 'first listed')}"
                                     " (server)")
        else:
            self.model_label.setText(f"Model: {Path(model).name}" if model else
                                     f"Model: {starter} (tiny starter)" if starter else "Model: none installed")
        if not starter:
            self.message_bar.withdraw("starter")  # a real model is chosen: the notice has done its job
        if model or llm.backend == "openai":
            self.message_bar.withdraw(FOUND_TOPIC)  # so has the offer of a model found here
        self._offer_demo_questions()
        retrieval = self.ctx.settings.retrieval
        reranker = retrieval.reranker.strip()
        kind = {"dense": ", dense only", "bm25": ", BM25 only"}.get(retrieval.retriever, "")
        self.corpus_label.setText(f"Corpus: {self.ctx.settings.active_corpus}{kind}"
                                  + (f", re-ranked by {Path(reranker).name}" if reranker else ""))

    def show_starter_notice(self) -> None:
        """No model chosen, the starter installed: say once, above the chat, that it is tiny, with
        a button to choose a real model and one for the mode it answers best with."""
        mode = self.ctx.settings.reasoning.mode
        message, hint = starter_app_notice(mode)
        actions = [("catalogue", "Choose a model…")]
        if mode != STARTER_BEST_MODE:
            actions.append(("starter_mode", "Answer with Retrieve then read"))
        self.message_bar.show_message(message, hint, kind="info", actions=actions, topic="starter")

    def use_starter_mode(self) -> None:
        """Make Retrieve then read the default mode (what the starter answers best with)."""
        self.ctx.settings.reasoning.mode = STARTER_BEST_MODE
        self.chat.strategy.choose(None)  # "as in Settings", which now says RAG
        self.ctx.save_settings()
        self.show_starter_notice()  # the same notice, without the button it no longer needs
        self.statusBar().showMessage("Questions are now answered with Retrieve then read.", 5000)

    def _offer_demo_questions(self) -> None:
        from searchain.library import DEMO_NAME, demo_questions

        try:
            questions = demo_questions(limit=3) if self.ctx.settings.active_corpus == DEMO_NAME else []
        except (OSError, ValueError, KeyError):  # a damaged install: no examples, nothing else lost
            questions = []
        self.chat.set_suggestions(questions)

    def set_gpu_status(self, supported: bool | None) -> None:
        text = {True: "GPU offload: available", False: "GPU offload: not available (CPU only)"}
        self.gpu_label.setText(text.get(supported, "GPU offload: unknown"))

    def zoom_text(self, delta: int | None) -> float:
        """Bigger (+1), smaller (-1) or actual-size (None) text in the reading views."""
        size = self.text_zoom.step(delta)
        self.statusBar().showMessage(f"Text size {size:g} pt", 2000)
        return size

    def toggle_side_panel(self) -> None:
        self.side_tabs.setVisible(self.toggle_reasoning.isChecked())

    def _on_busy(self, busy: bool) -> None:
        self.new_action.setEnabled(not busy)
        self.ask_again_action.setEnabled(not busy)
        self.statusBar().showMessage("Answering…" if busy else "Ready", 0 if busy else 3000)

    # -- answers -----------------------------------------------------------------------------
    def copy_answer(self) -> str | None:
        """Put the latest answer, with its numbered sources in full, on the clipboard (Markdown)."""
        from searchain.store import answer_markdown

        result = self.chat.last_result()
        if result is None:
            self.statusBar().showMessage("No answer to copy yet.", 3000)
            return None
        text = answer_markdown(result, escape_html=False)  # pasted as the user saw it
        QApplication.clipboard().setText(text)
        self.statusBar().showMessage(f"Copied the answer and its {counted(len(result.references), 'source')}.", 3000)
        return text

    def find_in_conversation(self) -> None:
        """Open the transcript's find bar, searching for the selected words if there are some."""
        selected = self.chat.transcript.textCursor().selectedText()
        self.chat.find_bar.open(selected if selected and "\u2029" not in selected else None)

    def ask_again(self) -> bool:
        """Ask the conversation's last question once more (after a failure, a stop, or a new model)."""
        question = self.chat.last_question()
        return bool(question) and self.answers.ask(question)

    # -- first run ---------------------------------------------------------------------------
    def show_first_run_guidance(self) -> None:
        """No model configured: say so and offer the catalogue, a GGUF file, or corpus search."""
        self.message_bar.show_message(
            "No language model is installed yet.",
            "Download one from the catalogue or open a GGUF file you already have. "
            f"Meanwhile the '{self.ctx.settings.active_corpus}' corpus is ready to search.",
            kind="info",
            actions=[("catalogue", "Model catalogue…"), ("open_gguf", "Open GGUF file…"),
                     ("search", "Search the corpus…")], topic="first_run",
        )

    def _on_banner_action(self, action: str) -> None:
        {"catalogue": self.open_model_catalogue, "open_gguf": self.open_gguf_file,
         "starter_mode": self.use_starter_mode, "use_found": lambda: use_found_model(self),
         "search": self.open_search, "settings": self.open_settings,
         "logs": self.open_log_folder, "doctor": self.check_setup}.get(action, lambda: None)()

    # -- dialogs -----------------------------------------------------------------------------
    def open_corpus_manager(self) -> None:
        from .views.corpora.manager import CorpusManagerDialog

        self.corpus_dialog = CorpusManagerDialog(self.ctx, self.runner, self)
        self.corpus_dialog.active_changed.connect(lambda _name: self.update_status())
        self.corpus_dialog.show()

    def open_search(self) -> None:
        from .views.search import SearchDialog

        self.search_dialog = SearchDialog(self.ctx, self.runner, self)
        self.search_dialog.passage_opened.connect(self._show_search_hit)
        self.search_dialog.show()

    def open_settings(self) -> None:
        from .views.settings_dialog import SettingsDialog

        self.settings_dialog = SettingsDialog(self.ctx, self.runner, self)
        self.settings_dialog.applied.connect(self._settings_applied)
        self.settings_dialog.show()

    def open_model_catalogue(self) -> None:
        from .views.model_choice.dialog import ModelDialog

        self.model_dialog = ModelDialog(self.ctx, self.runner, self)
        self.model_dialog.model_chosen.connect(self.use_model)
        self.model_dialog.server_chosen.connect(self.use_server)
        if self.ctx.settings.llm.backend == "openai":  # a server answers: its tab is the one to fix
            self.model_dialog.show_servers()
        self.model_dialog.show()

    def open_gguf_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open GGUF model", str(Path.home()), "GGUF models (*.gguf)")
        if path:
            self.use_model(path)

    def use_model(self, path: str) -> None:
        if not Path(path).is_file():
            self.message_bar.show_message(f"The model file {path} does not exist.",
                                          "Pick an existing .gguf file.", kind="error")
            return
        self.ctx.settings.llm.model_path = str(path)
        self.ctx.settings.llm.backend = "llama_cpp"  # a file, not a server, answers from now on
        self._settings_applied(model_changed=True)
        self.message_bar.show_message(f"Model set to {Path(path).name}. " + (
            "It is loading now." if self.ctx.settings.llm.warm_up else "It loads when you ask a question."))

    def use_server(self, label: str) -> None:
        """The model dialog saved a server in the settings (``llm.backend = openai``)."""
        from searchain.llm import server_grammar_note

        self._settings_applied(model_changed=True)
        self.message_bar.show_message(f"Answers now come from {label}.",
                                      server_grammar_note(self.ctx.settings.llm.server_grammar))

    def _settings_applied(self, model_changed: bool = True) -> None:
        if self.answers.busy:
            self.message_bar.show_message("Settings saved; they apply from the next question.")
        self.ctx.settings_changed(model_changed)
        self.answers.warm_up()
        self.update_status()

    def show_shortcuts(self) -> None:
        from .views.shortcuts import ShortcutsDialog

        self.shortcuts_dialog = ShortcutsDialog(self.menuBar(), self)
        self.shortcuts_dialog.show()

    def check_setup(self):
        """Help > Check set-up: the dialog (reused), with a fresh run of the checks."""
        from .diagnostics import SetupCheck

        if getattr(self, "setup_check", None) is None:
            self.setup_check = SetupCheck(self)
        self.setup_check.dialog.show()
        self.setup_check.dialog.raise_()
        return self.setup_check.run()

    def open_log_folder(self) -> str:
        from .diagnostics import open_log_folder

        return open_log_folder(self)

    def show_about(self) -> None:
        from searchain import __version__

        QMessageBox.about(self, "About SearChain",
                          f"SearChain Desktop {__version__} — offline Search-in-the-Chain question "
                          "answering with cited passages (Xu et al., WWW 2024).")

    # -- state -------------------------------------------------------------------------------
    def restore_state(self) -> None:
        ui = self.ctx.settings.ui
        geometry = ui.get("geometry")
        if isinstance(geometry, str) and geometry:
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
        state = ui.get("splitter_state")
        if isinstance(state, str) and state:
            self.splitter.restoreState(QByteArray.fromBase64(state.encode("ascii")))
        self.text_zoom.apply()
        if ui.get("reasoning_visible") is False:
            self.toggle_reasoning.setChecked(False)
            self.side_tabs.setVisible(False)

    def restore_last_conversation(self) -> None:
        last = self.ctx.settings.ui.get("last_conversation")
        self.conversations.refresh()
        if last is not None:
            self.conversations.open(last)

    def save_state(self) -> None:
        ui = self.ctx.settings.ui
        ui["geometry"] = bytes(self.saveGeometry().toBase64()).decode("ascii")
        ui["splitter"] = [int(s) for s in self.splitter.sizes()]  # readable copy of the state
        ui["splitter_state"] = bytes(self.splitter.saveState().toBase64()).decode("ascii")
        ui["reasoning_visible"] = self.toggle_reasoning.isChecked()
        ui["last_conversation"] = self.conversations.current_id
        try:
            self.ctx.save_settings()
        except Exception as exc:  # noqa: BLE001 - closing must not fail on a read-only config dir
            self.message_bar.show_error(exc, "Could not save window state")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.save_state()
        self.folder_sync.stop()
        self.runner.cancel_all()
        self.runner.wait(10_000)
        self.ctx.close()
        super().closeEvent(event)
