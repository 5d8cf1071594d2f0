"""Saved conversations, with reasoning trees and cited passages (SQLite via sqlite-utils).

``ConversationStore`` is the API; see ``searchain.store.conversations`` for how the engine and
the app use it, and ``docs/store.md`` for the schema and its guarantees.
"""

from .conversations import ConversationStore, title_from_question
from .markdown import answer_markdown
from .records import (ROLE_ASSISTANT, ROLE_USER, SNIPPET_CLOSE, SNIPPET_OPEN, STATE_CANCELLED,
                      STATE_COMPLETE, STATE_FAILED, STATE_STREAMING, STATES, Conversation,
                      ConversationSummary, Message, RunInfo, SearchHit)
from .schema import CURRENT_VERSION
from .streamed import answer_while_saving

__all__ = [
    "ConversationStore", "Conversation", "ConversationSummary", "Message", "RunInfo", "SearchHit",
    "ROLE_USER", "ROLE_ASSISTANT", "STATES", "STATE_STREAMING", "STATE_COMPLETE", "STATE_FAILED",
    "STATE_CANCELLED", "SNIPPET_OPEN", "SNIPPET_CLOSE", "CURRENT_VERSION", "answer_markdown",
    "answer_while_saving", "title_from_question",
]
