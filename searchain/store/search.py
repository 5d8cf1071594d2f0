"""Full-text search over saved messages (FTS5), safe for any text a user types.

FTS5 has its own query language (``AND``, ``NEAR``, ``"``, ``*``, ``:``, ``^`` ...). User text is
never passed to it as such: it is cut into words and each word becomes a quoted phrase, so
``C++ "quotes" OR NEAR(`` searches for those words and cannot raise a syntax error. The last word
also matches as a prefix, so results appear while the user is still typing it.
"""

from __future__ import annotations

import re
import sqlite3

from .records import SNIPPET_CLOSE, SNIPPET_OPEN, SearchHit

# Word characters as the unicode61 tokenizer sees them (letters and digits of any script).
_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression finding messages with every word of ``text``; None if no words."""
    words = [w for w in _WORD.findall(text) if w.strip("_")]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def search_messages(conn: sqlite3.Connection, text: str, limit: int = 50) -> list[SearchHit]:
    """Best matches first (BM25), each with a snippet around the matching words."""
    query = fts_query(text)
    if query is None or limit <= 0:
        return []
    rows = conn.execute(
        """
        SELECT m.conversation_id, m.id, snippet(messages_fts, 0, ?, ?, '…', 12), c.title, m.role
        FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid
        JOIN conversations c ON c.id = m.conversation_id
        WHERE messages_fts MATCH ?
        ORDER BY messages_fts.rank
        LIMIT ?
        """,
        (SNIPPET_OPEN, SNIPPET_CLOSE, query, int(limit)),
    ).fetchall()
    return [SearchHit(conversation_id=r[0], message_id=r[1], snippet=r[2],
                      conversation_title=r[3], role=r[4]) for r in rows]
