"""``ConversationStore``: every conversation, its reasoning and the passages it cited, in SQLite.

One store owns one connection (sqlite-utils ``Database`` over an autocommit ``sqlite3``
connection) and serialises its use with a lock, so the app may call it from its UI thread and its
worker thread alike. Every write is one ``BEGIN IMMEDIATE`` transaction: a message is durable once
the call that wrote it returns. Streaming answers are checkpointed through ``CheckpointThrottle``.

Typical use by the engine/app::

    store = ConversationStore.open(paths.conversations_db)
    chat = store.create_conversation()
    store.add_user_message(chat, question)
    mid = store.begin_answer(chat, RunInfo.from_settings(settings, reader="dpr"))
    ... store.checkpoint_answer(mid, text_so_far)   # on every token
    store.finish_answer(mid, result)                # or fail_answer / cancel_answer
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Callable, TypeVar

import sqlite_utils

from ..errors import StoreError
from ..reasoning.followup import PriorTurn
from ..units import timestamp
from . import connection as _conn
from .answers import AnswerLifecycleMixin, insert_message
from .checkpoints import CheckpointThrottle
from .corpora import CorporaMixin
from .exchange import ExchangeMixin
from .records import (ROLE_ASSISTANT, ROLE_USER, STATE_COMPLETE,
                      STATE_STREAMING, Conversation, ConversationSummary, Message, RunInfo,
                      SearchHit)
from .result_rows import load_results
from .schema import CURRENT_VERSION, migrate, user_version
from .search import search_messages

T = TypeVar("T")
PREVIEW_CHARS = 120  # the v5 triggers in schema.py keep this many characters

# The count and preview live on the conversation row (schema v5, kept by triggers), so the list
# reads one table through its order index and touches no message.
_SUMMARY_SQL = """
    SELECT c.id, c.title, c.created_at, c.updated_at, c.message_count, coalesce(c.preview, '')
    FROM conversations c
"""
_MESSAGE_SQL = """
    SELECT m.id, m.role, m.content, m.state, m.created_at, m.error, m.updated_at,
           r.model, r.corpus, r.reader, r.mode, r.theta, r.alpha, r.r_max, r.top_k, r.retriever
    FROM messages m LEFT JOIN runs r ON r.message_id = m.id
"""


class ConversationStore(AnswerLifecycleMixin, ExchangeMixin, CorporaMixin):
    """Saved conversations. Open with ``ConversationStore.open(path)``; close when done."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, retries: int,
                 checkpoint_interval: float):
        self._conn = conn
        self.db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
        self.path = path
        self._retries = retries
        self._lock = threading.RLock()
        self._closed = False
        self._throttle = CheckpointThrottle(self._write_checkpoint, self._lock,
                                            checkpoint_interval)

    # ---- opening and closing -------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, *, busy_timeout: float = 5.0, retries: int = 3,
             checkpoint_interval: float = 0.5, synchronous: str = "FULL") -> "ConversationStore":
        """Open (creating and migrating as needed) the database at ``path``.

        Raises ``StoreError`` when the file is damaged (after copying it aside), was written by
        a newer SearChain, is locked by another program, or cannot be created.
        """
        path = Path(path)
        conn = _conn.connect(path, busy_timeout)
        try:
            _conn.check_integrity(conn, path)
            version = _conn.with_retry(lambda: user_version(conn), path, retries)
            if version > CURRENT_VERSION:
                raise StoreError(
                    f"The conversation database {path} was written by a newer SearChain "
                    f"(schema v{version}; this version knows up to v{CURRENT_VERSION}).",
                    hint="Update SearChain, or point it at another home with --home.")

            def setup() -> None:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute(f"PRAGMA synchronous={synchronous}")
                migrate(conn)

            _conn.with_retry(setup, path, retries)
        except BaseException:
            conn.close()
            raise
        return cls(conn, path, retries=retries, checkpoint_interval=checkpoint_interval)

    def close(self) -> None:
        """Write any held-back checkpoint, then close. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            try:
                self._throttle.flush_all()
            finally:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> "ConversationStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self._read(lambda c: user_version(c))

    # ---- plumbing --------------------------------------------------------------------------

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            self._check_open()
            return _conn.with_retry(lambda: fn(self._conn), self.path, self._retries)

    def _snapshot(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """A read of several queries that must see one consistent state of the database."""
        def run() -> T:
            self._conn.execute("BEGIN")
            try:
                return fn(self._conn)
            finally:
                self._conn.execute("COMMIT")
        return self._read(lambda _c: run())

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            with _conn.transaction(self._conn) as c:
                return fn(c)
        with self._lock:
            self._check_open()
            return _conn.with_retry(run, self.path, self._retries)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"The conversation store {self.path} is closed.",
                             hint="Open it again with ConversationStore.open().")

    def _require_conversation(self, c: sqlite3.Connection, conversation_id: int) -> None:
        if c.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone():
            return
        raise StoreError(f"There is no conversation with id {conversation_id}.",
                         hint="`searchain chats list` shows the ids of saved conversations.")

    def _touch(self, c: sqlite3.Connection, conversation_id: int, when: str) -> None:
        c.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (when, conversation_id))

    # ---- conversations ---------------------------------------------------------------------

    def create_conversation(self, title: str = "New chat") -> int:
        title = _clean_title(title)
        now = timestamp("microseconds")
        return self._write(lambda c: c.execute(
            "INSERT INTO conversations (title, created_at, updated_at) VALUES (?, ?, ?)",
            (title, now, now)).lastrowid)

    def list_conversations(self, limit: int | None = None, offset: int = 0
                           ) -> list[ConversationSummary]:
        """Newest (most recently updated) first."""
        sql = _SUMMARY_SQL + " ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?"
        params = (-1 if limit is None else int(limit), int(offset))
        return self._read(lambda c: [ConversationSummary(*row)
                                     for row in c.execute(sql, params)])

    def get_conversation(self, conversation_id: int, *, reasoning: str = "all") -> Conversation:
        """The conversation with every message, oldest first.

        ``reasoning="all"`` reads every answer whole (exports, the CLI). ``"last"`` is what a
        transcript needs: every answer's text, run and references (with their passages), but
        the reasoning tree and path of the last answer only; the others have
        ``reasoning_loaded=False`` and ``get_message`` reads them on demand. In a long chat the
        trees are most of the rows, so this opens it faster.
        """
        if reasoning not in ("all", "last"):
            raise ValueError(f"reasoning must be 'all' or 'last', not {reasoning!r}")

        def load(c: sqlite3.Connection) -> Conversation:
            row = c.execute(_SUMMARY_SQL + " WHERE c.id = ?", (conversation_id,)).fetchone()
            if row is None:
                self._require_conversation(c, conversation_id)
            last = None  # no answer yet: nothing to leave out
            if reasoning == "last":
                last = c.execute("SELECT max(r.message_id) FROM results r JOIN messages m "
                                 "ON m.id = r.message_id WHERE m.conversation_id = ?",
                                 (conversation_id,)).fetchone()[0]
            messages = self._messages(c, "conversation_id = ?", (conversation_id,), last)
            return Conversation(*row, messages=messages)
        return self._snapshot(load)

    def get_message(self, message_id: int) -> Message:
        """One message, its answer whole (reasoning tree, path, references)."""
        def load(c: sqlite3.Connection) -> Message:
            messages = self._messages(c, "id = ?", (message_id,))
            if not messages:
                raise StoreError(f"There is no message with id {message_id}.")
            return messages[0]
        return self._snapshot(load)

    def _messages(self, c: sqlite3.Connection, where: str, params: tuple,
                  tree_only: int | None = None) -> list[Message]:
        # ``where`` is one of this module's fixed conditions on ``messages``, never user text.
        # ``tree_only``: read the reasoning of that answer alone (None: of every answer).
        if tree_only is None:
            results = load_results(c, where, params)
        else:
            results = load_results(c, where, params, tree_where="id = ?", tree_params=(tree_only,))
        rows = c.execute(f"{_MESSAGE_SQL} WHERE m.{where} ORDER BY m.id", params).fetchall()
        return [
            Message(id=r[0], role=r[1], content=r[2], state=r[3], created_at=r[4],
                    run=RunInfo(*r[7:16]) if r[7] is not None else None,
                    result=results.get(r[0]), error=r[5], updated_at=r[6],
                    reasoning_loaded=tree_only in (None, r[0]) or r[0] not in results)
            for r in rows
        ]

    def rename(self, conversation_id: int, title: str) -> None:
        title = _clean_title(title)

        def run(c: sqlite3.Connection) -> None:
            self._require_conversation(c, conversation_id)
            c.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))
        self._write(run)

    def delete(self, conversation_id: int) -> None:
        """Remove the conversation and, by cascade, its messages, runs, reasoning and citations."""
        def run(c: sqlite3.Connection) -> list[int]:
            self._require_conversation(c, conversation_id)
            streaming = [r[0] for r in c.execute(
                "SELECT id FROM messages WHERE conversation_id = ? AND state = ?",
                (conversation_id, STATE_STREAMING))]
            c.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            return streaming
        with self._lock:
            for message_id in self._write(run):
                self._throttle.forget(message_id)  # its held-back text has nowhere to go

    def search(self, text: str, limit: int = 50) -> list[SearchHit]:
        """Messages containing every word of ``text`` (any text is safe), best first."""
        return self._read(lambda c: search_messages(c, text, limit))

    def prior_turns(self, conversation_id: int, limit: int) -> list[PriorTurn]:
        """The last ``limit`` answered questions of a conversation, oldest first (for follow-ups).

        A question counts once its answer completed; failed or stopped answers are left out,
        since they hold nothing a follow-up could refer to. Reads only message texts, so it stays
        cheap however long the conversation is.
        """
        if limit <= 0:
            return []

        def load(c: sqlite3.Connection) -> list[PriorTurn]:
            self._require_conversation(c, conversation_id)
            rows = c.execute(
                "SELECT role, content, state FROM messages WHERE conversation_id = ? "
                "ORDER BY id DESC LIMIT ?", (conversation_id, 4 * limit + 2)).fetchall()
            turns: list[PriorTurn] = []
            answer: str | None = None
            for role, content, state in rows:  # newest first
                if role == ROLE_ASSISTANT:
                    answer = content if state == STATE_COMPLETE else None
                elif answer is not None:
                    turns.append(PriorTurn(content, answer))
                    answer = None
                    if len(turns) == limit:
                        break
            return turns[::-1]
        return self._read(load)

    # ---- messages --------------------------------------------------------------------------

    def add_user_message(self, conversation_id: int, text: str) -> int:
        if not isinstance(text, str) or not text.strip():
            raise StoreError("A question cannot be empty.", hint="Type a question first.")
        now = timestamp("microseconds")

        def run(c: sqlite3.Connection) -> int:
            self._require_conversation(c, conversation_id)
            mid = insert_message(c, conversation_id, ROLE_USER, text, STATE_COMPLETE, now)
            self._touch(c, conversation_id, now)
            return mid
        return self._write(run)


def _clean_title(title: str) -> str:
    if not isinstance(title, str) or not title.strip():
        raise StoreError("A conversation title cannot be empty.", hint="Give it a few words.")
    return " ".join(title.split())


TITLE_CHARS = 60


def title_from_question(question: str, limit: int = TITLE_CHARS) -> str:
    """A new conversation's title: its first question on one line, cut at a word with "…" when
    longer than ``limit`` characters ("Who designed the bridge in the hometown of the author…")."""
    text = " ".join((question or "").split())
    if len(text) <= limit:
        return text or "New chat"
    head = text[: limit - 1]  # room for the "…"
    cut = head.rsplit(" ", 1)[0] if " " in head else head  # at a word, unless it is one long word
    return cut.rstrip(" ,;:.-–—") + "…"
