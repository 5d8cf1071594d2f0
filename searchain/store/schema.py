"""The conversation database schema, as a list of forward migrations.

``PRAGMA user_version`` holds the number of steps applied. Opening a database applies the missing
steps in order, each in its own transaction together with its version bump, so a crash mid-way
leaves the database at the last complete version. Steps are never edited once released: a change
is a new step appended to ``MIGRATIONS``.

Rows that reproduce an ``AnswerResult`` keep their list order in an ``ordinal`` column, and every
passage a node or citation refers to is stored in full (text, source offsets, url, section; once
per answer since v6; page since v7), so a chat reopens exactly even after its corpus changed or was deleted.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

_V1_CORE = [
    """CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('streaming', 'complete', 'failed', 'cancelled')),
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    # Cascading deletes and "messages of a conversation, in order" both need this one.
    "CREATE INDEX messages_by_conversation ON messages(conversation_id, id)",
    """CREATE TABLE runs (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        model TEXT NOT NULL, corpus TEXT NOT NULL, reader TEXT NOT NULL, mode TEXT NOT NULL,
        theta REAL NOT NULL, alpha REAL NOT NULL, r_max INTEGER NOT NULL, top_k INTEGER NOT NULL,
        retriever TEXT NOT NULL
    )""",
    """CREATE TABLE results (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        question TEXT NOT NULL, mode TEXT NOT NULL, final_content TEXT NOT NULL,
        answer TEXT NOT NULL, rounds INTEGER NOT NULL, stop_reason TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL
    )""",
    """CREATE TABLE branches (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        round INTEGER NOT NULL, raw_text TEXT NOT NULL,
        parent_round INTEGER, parent_position INTEGER,
        feedback TEXT, final_content TEXT,
        PRIMARY KEY (message_id, ordinal)
    ) WITHOUT ROWID""",
    # A node is a row once: in a branch (branch_ordinal), on the final path (path_index), or
    # both when the path holds the very node of that branch.
    """CREATE TABLE nodes (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        branch_ordinal INTEGER, path_index INTEGER,
        round INTEGER NOT NULL, position INTEGER NOT NULL,
        query TEXT NOT NULL, llm_answer TEXT, unsolved INTEGER NOT NULL,
        reader_answer TEXT, confidence REAL, decision TEXT NOT NULL, source TEXT NOT NULL,
        passage_corpus TEXT, passage_pid TEXT, passage_title TEXT, passage_text TEXT,
        passage_source TEXT, passage_doc_id TEXT, passage_start INTEGER, passage_end INTEGER,
        span_start INTEGER, span_end INTEGER,
        PRIMARY KEY (message_id, ordinal)
    ) WITHOUT ROWID""",
    """CREATE TABLE citations (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        mark INTEGER NOT NULL,
        corpus TEXT NOT NULL, pid TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
        source TEXT NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
        span_start INTEGER, span_end INTEGER,
        query TEXT NOT NULL, answer TEXT NOT NULL,
        PRIMARY KEY (message_id, ordinal)
    ) WITHOUT ROWID""",
]

# v2: full-text search over message contents. An external-content FTS5 table kept in step by
# triggers, so the text is stored once; the final 'rebuild' indexes messages saved under v1.
_V2_SEARCH = [
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content='messages', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END""",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    """CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END""",
    "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
]

# v3: the conversation list is ordered newest first; without this index listing 10,000 chats
# sorts the whole table on every call.
_V3_LIST_ORDER = [
    "CREATE INDEX conversations_by_update ON conversations(updated_at DESC, id DESC)",
]


# v4: a follow-up question is answered as rewritten from the conversation; keep what was searched.
# NULL means the question was answered as typed (every answer saved before v4).
_V4_STANDALONE = [
    "ALTER TABLE results ADD COLUMN standalone_question TEXT",
]


# v5: listing 10,000 chats ran two subqueries per chat, and the preview one read each chat's first
# question row from a table full of long answers (60 % of the list's time). The list now reads
# both from the conversation row; triggers keep them in step with every insert, edit and delete.
# ``preview`` is NULL until the first question (then its first 120 characters, PREVIEW_CHARS).
_FIRST_QUESTION = """(SELECT substr(m.content, 1, 120) FROM messages m
    WHERE m.conversation_id = {cid} AND m.role = 'user' ORDER BY m.id LIMIT 1)"""
_V5_LIST_COLUMNS = [
    "ALTER TABLE conversations ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE conversations ADD COLUMN preview TEXT",
    f"""UPDATE conversations SET
        message_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = conversations.id),
        preview = {_FIRST_QUESTION.format(cid='conversations.id')}""",
    # Ids only grow, so a new question is the first one exactly when there was none before.
    """CREATE TRIGGER conversations_count_insert AFTER INSERT ON messages BEGIN
        UPDATE conversations SET message_count = message_count + 1,
            preview = CASE WHEN preview IS NULL AND new.role = 'user'
                           THEN substr(new.content, 1, 120) ELSE preview END
        WHERE id = new.conversation_id;
    END""",
    f"""CREATE TRIGGER conversations_count_delete AFTER DELETE ON messages BEGIN
        UPDATE conversations SET message_count = message_count - 1,
            preview = CASE WHEN old.role = 'user' THEN {_FIRST_QUESTION.format(cid='old.conversation_id')}
                           ELSE preview END
        WHERE id = old.conversation_id;
    END""",
    f"""CREATE TRIGGER conversations_preview_update AFTER UPDATE OF content ON messages
        WHEN new.role = 'user' BEGIN
        UPDATE conversations SET preview = {_FIRST_QUESTION.format(cid='new.conversation_id')}
        WHERE id = new.conversation_id;
    END""",
]

# v6: every node and citation carried its passage in full, and an answer cites the passages its
# nodes were checked against, so most texts were stored two or three times, in WITHOUT ROWID rows
# too big for that layout (overflow pages). Reopening a 1,000-message chat spent 55 of its ~90 ms
# reading them. Each distinct passage of an answer is now one row of ``passages`` (with the
# ``url`` and ``section`` passages gained in #33, which were not kept before), and nodes and
# citations name it by ordinal. Ordinals follow first use: nodes in order, then citations.
_PASSAGE_KEY = 'corpus, pid, title, text, source, doc_id, start, "end"'
_V6_PASSAGES = [
    """CREATE TABLE passages (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        corpus TEXT NOT NULL, pid TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
        source TEXT NOT NULL, doc_id TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
        url TEXT NOT NULL DEFAULT '', section TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (message_id, ordinal)
    )""",
    f"""INSERT INTO passages (message_id, ordinal, {_PASSAGE_KEY})
        SELECT message_id,
               row_number() OVER (PARTITION BY message_id ORDER BY min(seq)) - 1, {_PASSAGE_KEY}
        FROM (SELECT message_id, passage_corpus AS corpus, passage_pid AS pid,
                     passage_title AS title, passage_text AS text, passage_source AS source,
                     passage_doc_id AS doc_id, passage_start AS start, passage_end AS "end",
                     ordinal AS seq
              FROM nodes WHERE passage_text IS NOT NULL
              UNION ALL
              SELECT message_id, {_PASSAGE_KEY}, 1000000000 + ordinal FROM citations)
        GROUP BY message_id, {_PASSAGE_KEY}""",
    """CREATE TABLE nodes_v6 (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        branch_ordinal INTEGER, path_index INTEGER,
        round INTEGER NOT NULL, position INTEGER NOT NULL,
        query TEXT NOT NULL, llm_answer TEXT, unsolved INTEGER NOT NULL,
        reader_answer TEXT, confidence REAL, decision TEXT NOT NULL, source TEXT NOT NULL,
        passage INTEGER, span_start INTEGER, span_end INTEGER,
        PRIMARY KEY (message_id, ordinal)
    ) WITHOUT ROWID""",
    """INSERT INTO nodes_v6
        SELECT n.message_id, n.ordinal, n.branch_ordinal, n.path_index, n.round, n.position,
               n.query, n.llm_answer, n.unsolved, n.reader_answer, n.confidence, n.decision,
               n.source, p.ordinal, n.span_start, n.span_end
        FROM nodes n LEFT JOIN passages p ON p.message_id = n.message_id
            AND p.corpus = n.passage_corpus AND p.pid = n.passage_pid
            AND p.title = n.passage_title AND p.text = n.passage_text
            AND p.source = n.passage_source AND p.doc_id = n.passage_doc_id
            AND p.start = n.passage_start AND p."end" = n.passage_end""",
    "DROP TABLE nodes",
    "ALTER TABLE nodes_v6 RENAME TO nodes",
    """CREATE TABLE citations_v6 (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        mark INTEGER NOT NULL, passage INTEGER NOT NULL,
        span_start INTEGER, span_end INTEGER,
        query TEXT NOT NULL, answer TEXT NOT NULL,
        PRIMARY KEY (message_id, ordinal)
    ) WITHOUT ROWID""",
    """INSERT INTO citations_v6
        SELECT c.message_id, c.ordinal, c.mark, p.ordinal, c.span_start, c.span_end,
               c.query, c.answer
        FROM citations c JOIN passages p ON p.message_id = c.message_id
            AND p.corpus = c.corpus AND p.pid = c.pid AND p.title = c.title AND p.text = c.text
            AND p.source = c.source AND p.doc_id = c.doc_id AND p.start = c.start
            AND p."end" = c."end" """,
    "DROP TABLE citations",
    "ALTER TABLE citations_v6 RENAME TO citations",
]

# v7 (#34): where in its file a cited passage is: its page (PDF); the heading path is ``section``,
# kept since v6. NULL for passages saved before, and for those of files without pages.
_V7_PAGE = [
    "ALTER TABLE passages ADD COLUMN page INTEGER",
]

# v8 (#34): the corpora a chat searches, chosen per chat: names joined by commas (a corpus name
# never holds one). NULL for chats saved before, and for chats that never chose: they search
# the settings' active corpus, as they always did.
_V8_CORPORA = [
    "ALTER TABLE conversations ADD COLUMN corpora TEXT",
]


def _statements(statements: list[str]) -> Callable[[sqlite3.Connection], None]:
    def step(conn: sqlite3.Connection) -> None:
        for sql in statements:
            conn.execute(sql)

    return step


# MIGRATIONS[i] takes a database from version i to version i + 1.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _statements(_V1_CORE),
    _statements(_V2_SEARCH),
    _statements(_V3_LIST_ORDER),
    _statements(_V4_STANDALONE),
    _statements(_V5_LIST_COLUMNS),
    _statements(_V6_PASSAGES),
    _statements(_V7_PAGE),
    _statements(_V8_CORPORA),
]
CURRENT_VERSION = len(MIGRATIONS)


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = CURRENT_VERSION) -> list[int]:
    """Apply the steps that take the database up to ``target``; returns the versions reached.

    ``conn`` must be in autocommit mode (``isolation_level=None``): each step runs in its own
    ``BEGIN IMMEDIATE`` transaction, so two processes opening a fresh file cannot both migrate.
    Tests pass a lower ``target`` to build databases as earlier releases left them.
    """
    reached: list[int] = []
    if user_version(conn) >= target:
        return reached  # the usual case: no write lock needed, so a busy database still opens
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = user_version(conn)  # re-read under the write lock
            if version >= target:
                conn.execute("ROLLBACK")
                return reached
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        reached.append(version + 1)
