"""Databases as earlier releases wrote them, for migration tests.

The rows are written with the SQL of the release that wrote them (v1-v5 stored each node's and
citation's passage in full on the row; v6 once per answer in ``passages``, without the page v7
added), never with the store's current writers as they are, so a test of a migration reads what
users really have on disk.
"""

from __future__ import annotations

import sqlite3

from searchain.store import schema

_V1_NODE_COLUMNS = (
    "message_id, ordinal, branch_ordinal, path_index, round, position, query, llm_answer, "
    "unsolved, reader_answer, confidence, decision, source, passage_corpus, passage_pid, "
    "passage_title, passage_text, passage_source, passage_doc_id, passage_start, passage_end, "
    "span_start, span_end"
)
_V1_CITATION_COLUMNS = ('message_id, ordinal, mark, corpus, pid, title, text, source, doc_id, '
                        'start, "end", span_start, span_end, query, answer')


def _passage_columns(p) -> tuple:
    if p is None:
        return (None,) * 8
    return (p.corpus, p.pid, p.title, p.text, p.source, p.doc_id, p.start, p.end)


def _span(span) -> tuple:
    return (None, None) if span is None else tuple(span)


def _node_row(message_id, ordinal, node, branch_ordinal, path_index) -> list:
    return [message_id, ordinal, branch_ordinal, path_index, node.round, node.position,
            node.query, node.llm_answer, int(node.unsolved), node.reader_answer, node.confidence,
            node.decision, node.source, *_passage_columns(node.passage), *_span(node.span)]


def save_v1_reasoning_rows(conn: sqlite3.Connection, message_id: int, result) -> None:
    """Branches, nodes and citations in the v1-v5 layout (a passage in full on every row)."""
    conn.executemany(
        "INSERT INTO branches (message_id, ordinal, round, raw_text, parent_round, "
        "parent_position, feedback, final_content) VALUES (?,?,?,?,?,?,?,?)",
        [(message_id, i, b.round, b.raw_text, *_span(b.parent), b.feedback, b.final_content)
         for i, b in enumerate(result.branches)])
    rows: list[list] = []
    branch_nodes: list[tuple[int, object]] = []  # (row index, node) of every branch node
    for b_ord, branch in enumerate(result.branches):
        for node in branch.nodes:
            branch_nodes.append((len(rows), node))
            rows.append(_node_row(message_id, len(rows), node, b_ord, None))
    for path_index, node in enumerate(result.path):
        # As v1 did: a path node equal to an unclaimed branch node shares that node's row.
        match = next((i for i, candidate in branch_nodes
                      if rows[i][3] is None and candidate == node), None)
        if match is None:
            rows.append(_node_row(message_id, len(rows), node, None, path_index))
        else:
            rows[match][3] = path_index
    conn.executemany(f"INSERT INTO nodes ({_V1_NODE_COLUMNS}) VALUES ({','.join('?' * 23)})",
                     rows)
    conn.executemany(
        f"INSERT INTO citations ({_V1_CITATION_COLUMNS}) VALUES ({','.join('?' * 15)})",
        [(message_id, i, r.mark, *_passage_columns(r.passage), *_span(r.span), r.query, r.answer)
         for i, r in enumerate(result.references)])


def save_v6_reasoning_rows(conn: sqlite3.Connection, message_id: int, result) -> None:
    """Branches, nodes, passages and citations in the v6 layout: today's rows without the
    ``page`` column of ``passages`` (v7)."""
    from searchain.store.result_rows import save_reasoning_rows

    class V6Layout:
        def executemany(self, sql, rows):
            head, _, _ = sql.partition(") VALUES")
            table, _, columns = head.partition(" (")
            names = [c.strip() for c in columns.split(",")]
            keep = [i for i, name in enumerate(names)
                    if not (table.endswith("INTO passages") and name == "page")]
            conn.executemany(f"{table} ({', '.join(names[i] for i in keep)}) "
                             f"VALUES ({','.join('?' * len(keep))})",
                             [[row[i] for i in keep] for row in rows])

    save_reasoning_rows(V6Layout(), message_id, result)


def build_old(path, version: int, result) -> None:
    """A database as release ``version`` left it (chat 7: question 70, answer 71 with ``result``),
    built with the migration steps themselves and that release's SQL."""
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=version)
    assert schema.user_version(conn) == version
    if version >= 1:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO conversations (id, title, created_at, updated_at) "
                     "VALUES (7, 'Old chat', '2024-01-02T03:04:05.000000+00:00', "
                     "'2024-01-02T03:04:06.000000+00:00')")
        conn.execute("INSERT INTO messages (id, conversation_id, role, content, state, "
                     "created_at, updated_at) VALUES (70, 7, 'user', ?, 'complete', "
                     "'2024-01-02T03:04:05.000000+00:00', '2024-01-02T03:04:05.000000+00:00')",
                     (result.question,))
        conn.execute("INSERT INTO messages (id, conversation_id, role, content, state, "
                     "created_at, updated_at) VALUES (71, 7, 'assistant', ?, 'complete', "
                     "'2024-01-02T03:04:06.000000+00:00', '2024-01-02T03:04:06.000000+00:00')",
                     (result.final_content,))
        conn.execute("INSERT INTO runs VALUES (71, 'm.gguf', 'musique', 'dpr', 'searchain', "
                     "1.5, 0.35, 5, 1, 'hybrid')")
        r = result  # the results row with the v1 columns, then the v1 reasoning tables
        conn.execute("INSERT INTO results (message_id, question, mode, final_content, answer, "
                     "rounds, stop_reason, prompt_tokens, completion_tokens, seconds) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (71, r.question, r.mode, r.final_content, r.answer, r.rounds, r.stop_reason,
                      r.prompt_tokens, r.completion_tokens, r.seconds))
        if version >= 6:
            save_v6_reasoning_rows(conn, 71, result)
        else:
            save_v1_reasoning_rows(conn, 71, result)
        conn.execute("COMMIT")
    conn.close()
