"""An answer saved while it is written: what the app and ``ask --chat`` share.

The text streams into the message row as it comes (``checkpoint_answer``, throttled by the
store), so an answer that breaks off (a model that crashes, a server killed mid-answer, a cancel)
keeps what was written, beside the reason. Each phase's tokens start the text over, as the chat
pane shows them, except that a SearChain draft stays until the final answer starts
(``streamed_text_action``); the question rewrite is not answer text and is left out.
"""

from __future__ import annotations

from typing import Callable

from ..errors import Cancelled, SearchainError
from ..reasoning.events import PHASE_REWRITE, TokenGenerated, streamed_text_action
from ..reasoning.result import AnswerResult


class PartialText:
    """What has streamed in the current phase (a new phase starts over)."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.text = ""

    def add(self, event: TokenGenerated) -> str | None:
        """The text so far with ``event``'s token; None when the token is not answer text (a
        draft stays until the final answer starts), so there is nothing new to save."""
        action = streamed_text_action(self.phase, event.phase)
        if action == "keep":
            return None
        if action == "replace":
            self.phase, self.text = event.phase, ""
        self.text += event.text
        return self.text


def error_text(exc: BaseException) -> str:
    """The reason saved with a failed answer: an engine error's message and hint, else the
    exception's own words."""
    if isinstance(exc, SearchainError):
        return " ".join(p for p in (exc.message, exc.hint) if p)
    return str(exc) or type(exc).__name__


def answer_while_saving(store, message_id: int, answer: Callable[[Callable], AnswerResult],
                        on_event: Callable | None = None, *,
                        describe: Callable[[BaseException], str] = error_text) -> AnswerResult:
    """Run ``answer(relay)`` (which must pass ``relay`` as the engine's ``on_event``) and keep
    message ``message_id`` up to date: streamed text as it comes, then the finished result, or
    the partial text with a cancel or with ``describe(exc)`` for a failure (re-raised)."""
    partial = PartialText()

    def relay(event) -> None:
        if isinstance(event, TokenGenerated) and event.phase != PHASE_REWRITE:
            text = partial.add(event)
            if text is not None:  # the chain's tokens behind a draft leave the saved text as it is
                store.checkpoint_answer(message_id, text)
        if on_event is not None:
            on_event(event)

    try:
        result = answer(relay)
    except (Cancelled, KeyboardInterrupt):
        store.cancel_answer(message_id, partial.text)
        raise
    except BaseException as exc:
        store.fail_answer(message_id, describe(exc), partial_text=partial.text)
        raise
    store.finish_answer(message_id, result)
    return result
