"""Plain records the conversation store hands out: summaries, messages, run settings, search hits.

They hold plain data only (like ``searchain.reasoning.result``) so that they compare with ``==``,
serialise with ``dataclasses.asdict`` and cross thread boundaries freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for annotations: the store never needs settings at runtime
    from ..config import Settings
    from ..reasoning.result import AnswerResult

ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLES = (ROLE_USER, ROLE_ASSISTANT)

STATE_STREAMING = "streaming"  # an answer being generated; content is the last checkpoint
STATE_COMPLETE = "complete"
STATE_FAILED = "failed"  # generation raised; ``error`` says why, content keeps the partial text
STATE_CANCELLED = "cancelled"  # the user stopped it; content keeps the partial text
STATES = (STATE_STREAMING, STATE_COMPLETE, STATE_FAILED, STATE_CANCELLED)


@dataclass
class RunInfo:
    """The settings an answer was produced with, kept so a reopened chat says how it was made."""

    model: str = ""
    corpus: str = ""
    reader: str = ""
    mode: str = ""
    theta: float = 0.0
    alpha: float = 0.0
    r_max: int = 0
    top_k: int = 0
    retriever: str = ""

    @classmethod
    def from_settings(cls, settings: "Settings", *, reader: str | None = None,
                      model: str | None = None, mode: str | None = None,
                      corpus: str | None = None) -> "RunInfo":
        """The run a question asked now would use; ``reader``/``model`` override resolved names
        (settings say ``auto`` for the reader, the engine knows which one it picked), ``mode``
        and ``corpus`` the ones chosen for this question (``ask --mode direct``, the app's
        strategy picker): the saved run must name what answered, not the default."""
        r = settings.reasoning
        model_name = model
        if model_name is None and settings.llm.backend == "openai":  # "qwen3:8b @ host:port"
            from ..llm.server.openai_backend import server_label

            model_name = server_label(settings.llm.server_url,
                                      settings.llm.server_model or "the server's first model")
        if model_name is None:
            model_name = Path(settings.llm.model_path).name if settings.llm.model_path else ""
            if not model_name and settings.llm.backend == "llama_cpp":
                from ..llm.models.starter import starter_model_path  # the starter answers unset models

                starter = starter_model_path()
                model_name = starter.name if starter is not None else ""
        return cls(
            model=model_name,
            corpus=corpus or settings.active_corpus,
            reader=reader or r.reader,
            mode=mode or r.mode,
            theta=float(r.theta),
            alpha=float(r.alpha),
            r_max=int(r.r_max),
            top_k=int(r.top_k),
            retriever=settings.retrieval.retriever + (
                f"+rerank:{settings.retrieval.reranker}" if settings.retrieval.reranker.strip() else ""),
        )


@dataclass
class Message:
    """One turn of a conversation. ``result`` is set on a finished assistant answer."""

    id: int
    role: str
    content: str
    state: str
    created_at: str  # ISO 8601, UTC
    run: RunInfo | None = None
    result: "AnswerResult | None" = None
    error: str | None = None  # why a failed answer failed
    updated_at: str = ""
    # False when the conversation was opened with ``reasoning="last"`` and this answer's tree
    # and path were left in the database (``result.branches``/``path`` are empty, references
    # are whole): ``ConversationStore.get_message(id)`` reads them when its details are opened.
    reasoning_loaded: bool = True


@dataclass
class ConversationSummary:
    """What the conversation list shows: no messages, just enough to pick one."""

    id: int
    title: str
    created_at: str
    updated_at: str
    message_count: int
    preview: str  # the start of the first question


@dataclass
class Conversation:
    """A whole conversation: the summary fields plus every message, oldest first."""

    id: int
    title: str
    created_at: str
    updated_at: str
    message_count: int
    preview: str
    messages: list[Message] = field(default_factory=list)

    @property
    def summary(self) -> ConversationSummary:
        return ConversationSummary(self.id, self.title, self.created_at, self.updated_at,
                                   self.message_count, self.preview)


@dataclass
class SearchHit:
    """A message matching a full-text search; ``snippet`` wraps each match in SNIPPET_OPEN/CLOSE."""

    conversation_id: int
    message_id: int
    snippet: str
    conversation_title: str = ""
    role: str = ""


# Match markers in SearchHit.snippet: not brackets, which the answers' [n] citation marks use.
SNIPPET_OPEN = "«"
SNIPPET_CLOSE = "»"
