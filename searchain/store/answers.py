"""An answer's life in the store: begun (``streaming``), checkpointed as it streams, then
finished with its reasoning and citations, failed or cancelled, each end keeping what streamed.

``AnswerLifecycleMixin`` relies on the store's ``_lock``, ``_write``, ``_throttle``,
``_check_open``, ``_require_conversation`` and ``_touch``.
"""

from __future__ import annotations

import sqlite3
import statistics
from dataclasses import astuple

from ..errors import StoreError
from ..reasoning.result import AnswerResult
from ..units import timestamp
from .records import ROLE_ASSISTANT, STATE_CANCELLED, STATE_COMPLETE, STATE_FAILED, STATE_STREAMING, RunInfo
from .result_rows import save_result


def insert_message(c: sqlite3.Connection, conversation_id: int, role: str, content: str, state: str,
                   now: str) -> int:
    """A new message row (a question, or an answer about to stream); its id."""
    return c.execute("INSERT INTO messages (conversation_id, role, content, state, created_at, updated_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (conversation_id, role, content, state, now, now)).lastrowid


# "Usually about N s here": the median of this many recent answers, said from this many on.
TYPICAL_RECENT, TYPICAL_MIN = 20, 3


class AnswerLifecycleMixin:
    """``begin_answer``, ``checkpoint_answer``, ``finish_answer``, ``fail_answer``, ``cancel_answer``;
    ``typical_answer_seconds`` for what an answer about to start will take."""

    def typical_answer_seconds(self, model: str, mode: str, *, recent: int = TYPICAL_RECENT) -> float | None:
        """How long an answer by ``model`` in ``mode`` takes on this machine: the median of the
        last ``recent`` finished ones (a failed or stopped answer has no result row), None while
        there are fewer than ``TYPICAL_MIN``. The app says it as an answer starts."""
        def read(c: sqlite3.Connection) -> list[float]:
            return [row[0] for row in c.execute(
                "SELECT r.seconds FROM results r JOIN runs u ON u.message_id = r.message_id "
                "WHERE u.model = ? AND u.mode = ? ORDER BY r.message_id DESC LIMIT ?",
                (model, mode, recent))]
        seconds = self._read(read)
        return statistics.median(seconds) if len(seconds) >= TYPICAL_MIN else None

    def begin_answer(self, conversation_id: int, run: RunInfo) -> int:
        """Create the assistant message an answer streams into (state ``streaming``)."""
        now = timestamp("microseconds")

        def write(c: sqlite3.Connection) -> int:
            self._require_conversation(c, conversation_id)
            mid = insert_message(c, conversation_id, ROLE_ASSISTANT, "", STATE_STREAMING, now)
            c.execute("INSERT INTO runs (message_id, model, corpus, reader, mode, theta, alpha, "
                      "r_max, top_k, retriever) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      (mid, *_run_values(run)))
            self._touch(c, conversation_id, now)
            return mid
        with self._lock:
            mid = self._write(write)
            self._throttle.started(mid)
        return mid

    def checkpoint_answer(self, message_id: int, partial_text: str) -> bool:
        """Note the text streamed so far; cheap enough for every token.

        The database is written at most every ``checkpoint_interval`` (0.5 s) per message, and
        held-back text is written by a timer when the interval ends. Returns True when this
        call wrote to the database (then the text is durable).
        """
        with self._lock:
            self._check_open()
            return self._throttle.offer(message_id, partial_text)

    def _write_checkpoint(self, message_id: int, text: str) -> None:
        def run(c: sqlite3.Connection) -> None:
            updated = c.execute(
                "UPDATE messages SET content = ?, updated_at = ? WHERE id = ? AND state = ?",
                (text, timestamp("microseconds"), message_id, STATE_STREAMING)).rowcount
            if not updated:
                self._not_streaming(c, message_id)
        self._write(run)

    def _not_streaming(self, c: sqlite3.Connection, message_id: int):
        row = c.execute("SELECT role, state FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise StoreError(f"There is no message with id {message_id}.")
        raise StoreError(
            f"Message {message_id} is not an answer being generated (it is a {row[0]} message, "
            f"state {row[1]}).", hint="Start an answer with begin_answer() first.")

    def finish_answer(self, message_id: int, result: AnswerResult) -> None:
        """Save the final answer with its reasoning and citations in one transaction."""
        now = timestamp("microseconds")

        def run(c: sqlite3.Connection) -> None:
            row = c.execute("SELECT conversation_id FROM messages WHERE id = ? AND state = ?",
                            (message_id, STATE_STREAMING)).fetchone()
            if row is None:
                self._not_streaming(c, message_id)
            c.execute("UPDATE messages SET content = ?, state = ?, error = NULL, updated_at = ? "
                      "WHERE id = ?", (result.final_content, STATE_COMPLETE, now, message_id))
            save_result(c, message_id, result)
            self._touch(c, row[0], now)
        with self._lock:
            self._write(run)
            self._throttle.forget(message_id)

    def fail_answer(self, message_id: int, error_text: str, *,
                    partial_text: str | None = None) -> None:
        """The answer broke off: keep what streamed so far and why."""
        self._end_answer(message_id, STATE_FAILED, error_text, partial_text)

    def cancel_answer(self, message_id: int, partial_text: str | None = None) -> None:
        """The user stopped the answer: keep what streamed so far."""
        self._end_answer(message_id, STATE_CANCELLED, None, partial_text)

    def _end_answer(self, message_id: int, state: str, error: str | None,
                    partial_text: str | None) -> None:
        now = timestamp("microseconds")
        with self._lock:
            if partial_text is None:
                partial_text = self._throttle.pending_text(message_id)

            def run(c: sqlite3.Connection) -> None:
                row = c.execute("SELECT conversation_id, content FROM messages "
                                "WHERE id = ? AND state = ?",
                                (message_id, STATE_STREAMING)).fetchone()
                if row is None:
                    self._not_streaming(c, message_id)
                content = row[1] if partial_text is None else partial_text
                c.execute("UPDATE messages SET content = ?, state = ?, error = ?, updated_at = ? "
                          "WHERE id = ?", (content, state, error, now, message_id))
                self._touch(c, row[0], now)
            self._write(run)
            self._throttle.forget(message_id)


def _run_values(run: RunInfo) -> tuple:
    model, corpus, reader, mode, theta, alpha, r_max, top_k, retriever = astuple(run)
    return (model, corpus, reader, mode, float(theta), float(alpha), int(r_max), int(top_k),
            retriever)
