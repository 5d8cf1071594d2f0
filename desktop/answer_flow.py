"""Asking a question: save it, run the engine on a worker, draw its events live, save the answer.

The engine runs in ``Workspace.answer`` on a ``JobRunner`` thread; its events arrive here on the
UI thread and are dispatched to the chat pane (streamed tokens), the reasoning panel (rounds,
chains, node checks) and the store (checkpoints, the final result). Errors end up as readable
text in the transcript and in the message bar; the app keeps working.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from searchain.errors import ModelError
from searchain.corpus import FINISH_STAGE
from searchain.events import Progress
from searchain.index import OPEN_STAGE, KeywordOnly
from searchain.llm import LLMWarning
from searchain.store import answer_while_saving, title_from_question
from searchain.reasoning import (
    PHASE_REWRITE, ChainDrafted, ChainGenerated, ChainUnreadable, Done, DraftStarted, FeedbackGiven, NodeChecked,
    QuestionRewritten, RoundStarted, TokenGenerated, describe_strategy_event,
)
from searchain.units import counted

from .context import AppContext
from .render import describe_error, progress_line
from .views.chat import ChatView
from .views.message_bar import MessageBar
from .views.reasoning import ReasoningPanel
from .workers import Job, JobRunner

log = logging.getLogger("desktop.answers")

# Banner buttons for a missing or unloadable model (handled by the main window).
MODEL_FIX_ACTIONS = [("catalogue", "Model catalogue…"), ("open_gguf", "Open GGUF file…"),
                     ("settings", "Settings…")]


@dataclass(frozen=True)
class AnswerSaved:
    """The worker saved the question and opened the answer's message in the store."""

    conversation_id: int
    message_id: int
    typical_seconds: float | None = None  # how long such answers usually take here


class AnswerFlow(QObject):
    busy_changed = Signal(bool)
    answered = Signal(object)  # AnswerResult
    status = Signal(str, int)  # a status-bar line and how many ms it shows (0: until replaced)

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
        self.warm_job: Job | None = None
        self.message_id: Any = None
        self.events_seen: list[str] = []

    @property
    def busy(self) -> bool:
        return self.job is not None

    def ask(self, question: str, mode: str | None = None) -> bool:
        """Start answering ``question`` in the current conversation (a new one if none).

        ``mode``: the strategy for this question; else the chat's picker, else the settings.

        Every store write happens on the worker too (SQLite commits fsync, which would stall the
        UI); the worker reports the saved ids with an ``AnswerSaved`` event.
        """
        question = question.strip()
        if not question or self.busy:
            return False
        self.cancel_warm_up()  # its call in flight finishes first: the question needs that part too
        self.events_seen = []
        self.message_id = None
        ctx = self.ctx
        mode = mode or self.chat.strategy.chosen() or ctx.settings.reasoning.mode
        corpora = self.chat.corpora.chosen()  # [] = the active corpus, as in Settings
        run = self._run_info(mode, corpora)  # the stored run names the strategy used, not the default
        self.chat.begin_answer(question, key="pending", run=run)
        self.chat.set_phase("Loading the model…")
        self.reasoning.clear("Starting…")
        followup_turns = self.ctx.settings.reasoning.followup_turns
        conversation_id = self.conversations.current_id
        title = title_from_question(question)

        def work(on_event, cancel):  # worker thread
            store = ctx.workspace().conversations()
            if conversation_id is None:
                cid, history = store.create_conversation(title), []
                if corpora:  # chosen before the chat existed: saved with it
                    store.set_corpora(cid, corpora)
            else:  # a follow-up is read with the turns before it (taken before it is saved)
                cid, history = conversation_id, store.prior_turns(conversation_id, followup_turns)
            store.add_user_message(cid, question)
            mid = store.begin_answer(cid, run)
            on_event(AnswerSaved(cid, mid, store.typical_answer_seconds(run.model, run.mode)))
            return answer_while_saving(
                store, mid, lambda relay: ctx.workspace().answer(
                    question, mode=mode, corpus=corpora or None, history=history, on_event=relay,
                    cancel=cancel),
                on_event, describe=lambda exc: " ".join(describe_error(exc)).strip())

        self.job = self.runner.start(
            "answer", work, on_event=self._on_event, on_done=self._on_done,
            on_error=self._on_error, on_cancelled=self._on_cancelled,
        )
        self.busy_changed.emit(True)
        return True

    def warm_up(self) -> Job | None:
        """Load the model and read the fixed part of its prompts in the background
        (``Workspace.warm_up``), so that the first question is answered as fast as the next.

        Only for a model run here (``llm.warm_up``; a server keeps its own cache), never while a
        question is answered; a question cancels it. A model the settings replaced is closed by
        the warm-up's worker as it loads the new one (``Workspace.replace_llm``), or by the next
        question's. A model that cannot be loaded is named in the status bar: asking shows the
        full message with its fixes."""
        ctx = self.ctx
        if self.busy or not (ctx.settings.llm.warm_up and ctx.settings.llm.backend == "llama_cpp"):
            return None
        self.cancel_warm_up()

        def work(_on_event, cancel):  # worker thread
            workspace = ctx.workspace()
            if not workspace.resolved_model().path:
                return None  # no model yet: the first-run guidance says where to get one
            return workspace.warm_up(cancel=cancel)

        def ended(job_line: tuple[str, int] | None) -> None:
            if self.warm_job is job:  # not a newer warm-up's
                self.warm_job = None
                if job_line is not None:
                    self.status.emit(*job_line)

        def failed(exc: BaseException) -> None:
            log.info("warm-up failed: %s", exc)
            ended((f"The model could not be prepared: {describe_error(exc)[0]}", 10_000))

        self.status.emit("Preparing the model…", 0)
        job = self.runner.start(
            "warm-up", work, on_error=failed,
            on_done=lambda warm: ended(("Model ready", 3000) if warm is not None else ("", 1)),
            on_cancelled=lambda: ended(None))
        self.warm_job = job
        return job

    def cancel_warm_up(self) -> None:
        if self.warm_job is not None:
            self.warm_job.cancel()
            self.warm_job = None

    def stop(self) -> None:
        if self.job is not None:
            self.chat.set_phase("Stopping…")
            self.job.cancel()

    # -- events (UI thread) --------------------------------------------------------------------
    def _on_event(self, event: Any) -> None:
        self.events_seen.append(type(event).__name__)
        if isinstance(event, AnswerSaved):
            self.message_id = event.message_id
            self.conversations.adopt(event.conversation_id)
            self.chat.clock.set_typical(event.typical_seconds)
        elif isinstance(event, Progress) and event.stage in (OPEN_STAGE, FINISH_STAGE):  # slow first steps
            self.chat.set_phase(progress_line(event))
        elif isinstance(event, TokenGenerated):
            if event.phase == PHASE_REWRITE:  # the rewrite is shown once parsed, not raw
                self.chat.set_phase("Reading the question with the conversation…")
            else:
                self.chat.append_token(event.text, event.phase)
        elif isinstance(event, DraftStarted):  # its prompt is read before the first token comes
            self.chat.set_phase("Drafting an answer from the question's passages…")
        elif (line := describe_strategy_event(event)) is not None:  # a GenGround / GEEK step
            self.reasoning.note_strategy(line)
            self.chat.set_phase(line)
        elif isinstance(event, QuestionRewritten):
            if event.standalone != event.original:
                self.chat.note_rewrite(event.standalone)
        elif isinstance(event, RoundStarted):
            self.reasoning.start_round(event.round)
            self.chat.set_phase(f"Round {event.round}: {event.activity}…")
        elif isinstance(event, ChainDrafted):  # the steps written so far, before the chain ends
            self.reasoning.add_branch(event.branch)
            line = f"Round {event.round}: {counted(len(event.branch.nodes), 'step')} written so far…"
            self.reasoning.summary.setText(line)
            self.chat.set_phase(line)
        elif isinstance(event, ChainGenerated):
            self.reasoning.add_branch(event.branch)
            self.chat.set_phase(f"Round {event.round}: checking each step against the corpus…")
        elif isinstance(event, ChainUnreadable):
            then = "asking again" if event.retrying else "showing its text, unchecked"
            self.chat.set_phase(f"Round {event.round}: the model's chain could not be read; {then}…")
        elif isinstance(event, NodeChecked):
            self.reasoning.update_node(event.node)
        elif isinstance(event, FeedbackGiven):
            self.reasoning.note_feedback(event.round, event.text)
            self.chat.set_phase(f"Round {event.round}: IR {event.kind} feedback sent; revising…")
        elif isinstance(event, Done):
            self.chat.set_phase("Writing the answer with references…")
        elif isinstance(event, LLMWarning):  # e.g. a base model without a chat template
            self.message_bar.show_message(event.message, event.hint, kind="warning")
        elif isinstance(event, KeywordOnly):  # a corpus whose vector index is still to be built
            self.message_bar.show_message(event.message, event.hint, kind="info", topic="keyword-only")

    def _on_done(self, result: Any) -> None:
        self.chat.finish_answer(result, key=str(self.message_id))
        self.reasoning.show_result(result)
        self._end()
        self.answered.emit(result)

    def _on_error(self, exc: BaseException) -> None:
        message, hint = describe_error(exc)
        self.chat.fail_answer(f"{message}\n{hint}" if hint else message)
        self.reasoning.summary.setText("The answer failed; see the message above the chat.")
        # A missing or broken model is fixed in one of three places: offer them as buttons.
        actions = MODEL_FIX_ACTIONS if isinstance(exc, ModelError) else None
        self.message_bar.show_error(exc, "The question could not be answered", actions=actions)
        self._end()

    def _on_cancelled(self) -> None:
        self.chat.fail_answer("Stopped.", cancelled=True)
        self.reasoning.summary.setText("Stopped by you.")
        self._end()

    # -- helpers ----------------------------------------------------------------------------
    def _end(self) -> None:
        self.job = None
        self.chat.set_busy(False)
        self.conversations.refresh()
        self.busy_changed.emit(False)

    def _run_info(self, mode: str, corpora: list[str] | None = None):
        from searchain.store import RunInfo

        return RunInfo.from_settings(self.ctx.settings, mode=mode, corpus=",".join(corpora or []) or None)

