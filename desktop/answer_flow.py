"""Asking a question: save it, run the engine on a worker, draw its events live, save the answer.

The engine runs in ``Workspace.answer`` on a ``JobRunner`` thread; its events arrive here on the
UI thread and are dispatched to the chat pane (streamed tokens), the reasoning panel (rounds,
chains, node checks) and the store (checkpoints, the final result). Errors end up as readable
text in the transcript and in the message bar; the app keeps working.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from searchain.reasoning import events as ev

from .context import AppContext
from .render import describe_error
from .views.chat import ChatView
from .views.message_bar import MessageBar
from .views.reasoning import ReasoningPanel
from .workers import Job, JobRunner


class AnswerFlow(QObject):
    busy_changed = Signal(bool)
    answered = Signal(object)  # AnswerResult

    def __init__(self, ctx: AppContext, runner: JobRunner, chat: ChatView, reasoning: ReasoningPanel,
                 conversations: Any, message_bar: MessageBar, parent: QObject | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.runner = runner
        self.chat = chat
        self.reasoning = reasoning
        self.conversations = conversations  # ConversationFlow
        self.message_bar = message_bar
        self.job: Job | None = None
        self.message_id: Any = None
        self.events_seen: list[str] = []

    @property
    def busy(self) -> bool:
        return self.job is not None

    def ask(self, question: str) -> bool:
        """Start answering ``question`` in the current conversation (a new one if none)."""
        question = question.strip()
        if not question or self.busy:
            return False
        try:
            store = self.ctx.workspace().conversations()
            conversation_id = self.conversations.ensure_current(question)
            store.add_user_message(conversation_id, question)
            self.message_id = store.begin_answer(conversation_id, run=self._run_info())
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.message_bar.show_error(exc, "Could not save the question")
            return False
        self.events_seen = []
        self.chat.begin_answer(question, key=str(self.message_id))
        self.chat.set_phase("Loading the model…")
        self.reasoning.clear("Starting…")
        mode = self.ctx.settings.reasoning.mode
        ctx = self.ctx

        def work(on_event, cancel):  # worker thread
            return ctx.workspace().answer(question, mode=mode, on_event=on_event, cancel=cancel)

        self.job = self.runner.start(
            "answer", work, on_event=self._on_event, on_done=self._on_done,
            on_error=self._on_error, on_cancelled=self._on_cancelled,
        )
        self.busy_changed.emit(True)
        return True

    def stop(self) -> None:
        if self.job is not None:
            self.chat.set_phase("Stopping…")
            self.job.cancel()

    # -- events (UI thread) --------------------------------------------------------------------
    def _on_event(self, event: Any) -> None:
        self.events_seen.append(type(event).__name__)
        if isinstance(event, ev.TokenGenerated):
            self.chat.append_token(event.text, event.phase)
        elif isinstance(event, ev.RoundStarted):
            self.reasoning.start_round(event.round)
            self.chat.set_phase(f"Round {event.round}: writing a chain of queries…")
        elif isinstance(event, ev.ChainGenerated):
            self.reasoning.add_branch(event.branch)
            self.chat.set_phase(f"Round {event.round}: checking each step against the corpus…")
            self._checkpoint()
        elif isinstance(event, ev.NodeChecked):
            self.reasoning.update_node(event.node)
        elif isinstance(event, ev.FeedbackGiven):
            self.reasoning.note_feedback(event.round, event.text)
            self.chat.set_phase(f"Round {event.round}: IR {event.kind} feedback sent; revising…")
        elif isinstance(event, ev.Done):
            self.chat.set_phase("Writing the answer with references…")

    def _on_done(self, result: Any) -> None:
        self.chat.finish_answer(result, key=str(self.message_id))
        self.reasoning.show_result(result)
        try:
            self.ctx.workspace().conversations().finish_answer(self.message_id, result)
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "The answer could not be saved")
        self._end()
        self.answered.emit(result)

    def _on_error(self, exc: BaseException) -> None:
        message, hint = describe_error(exc)
        self.chat.fail_answer(f"{message}\n{hint}" if hint else message)
        self.reasoning.summary.setText("The answer failed; see the message above the chat.")
        self.message_bar.show_error(exc, "The question could not be answered")
        self._store_failure(message, cancelled=False)
        self._end()

    def _on_cancelled(self) -> None:
        self.chat.fail_answer("Stopped.", cancelled=True)
        self.reasoning.summary.setText("Stopped by you.")
        self._store_failure("", cancelled=True)
        self._end()

    # -- helpers ----------------------------------------------------------------------------
    def _end(self) -> None:
        self.job = None
        self.chat.set_busy(False)
        self.conversations.refresh()
        self.busy_changed.emit(False)

    def _checkpoint(self) -> None:
        try:
            self.ctx.workspace().conversations().checkpoint_answer(self.message_id, self.chat.streamed_text)
        except Exception:  # noqa: BLE001 - a missed checkpoint loses nothing that the end does not save
            pass

    def _store_failure(self, message: str, cancelled: bool) -> None:
        try:
            store = self.ctx.workspace().conversations()
            if cancelled:
                store.cancel_answer(self.message_id, self.chat.streamed_text)
            else:
                store.fail_answer(self.message_id, message, partial_text=self.chat.streamed_text)
        except Exception as exc:  # noqa: BLE001
            self.message_bar.show_error(exc, "The failed answer could not be saved")

    def _run_info(self):
        from searchain.store.records import RunInfo

        return RunInfo.from_settings(self.ctx.settings)
