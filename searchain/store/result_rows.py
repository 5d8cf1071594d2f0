"""Write an ``AnswerResult`` to the results/branches/nodes/citations tables and read it back.

The round trip is exact: ``load_results(...)[id] == result``. Floats are stored as REAL (the same
IEEE double), tuples come back as tuples, ``None`` stays ``None`` and list order is kept in
``ordinal`` columns. Each distinct passage of an answer is one ``passages`` row that nodes and
citations name by ordinal (schema v6; its page since v7), so a passage's text is read once per answer. Loading takes
one query per table for any number of messages, which is what keeps reopening a long
conversation fast.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from ..reasoning.result import AnswerResult, Branch, Node, Reference
from ..types import Passage

_NODE_COLUMNS = (
    "message_id, ordinal, branch_ordinal, path_index, round, position, query, llm_answer, "
    "unsolved, reader_answer, confidence, decision, source, passage, span_start, span_end"
)
_CITATION_COLUMNS = (
    "message_id, ordinal, mark, passage, span_start, span_end, query, answer"
)
_PASSAGE_COLUMNS = (
    'message_id, ordinal, corpus, pid, title, text, source, doc_id, start, "end", url, section, '
    "page"
)
_BRANCH_COLUMNS = (
    "message_id, ordinal, round, raw_text, parent_round, parent_position, feedback, final_content"
)
_RESULT_COLUMNS = (
    "message_id, question, mode, final_content, answer, rounds, stop_reason, prompt_tokens, "
    "completion_tokens, seconds, standalone_question"
)



def _opt_float(value) -> float | None:
    return None if value is None else float(value)


def _span_columns(span) -> tuple[int | None, int | None]:
    return (None, None) if span is None else (int(span[0]), int(span[1]))


class _PassageRows:
    """Numbers an answer's distinct passages in order of first use (each is stored once)."""

    def __init__(self, message_id: int):
        self.message_id = message_id
        self.ordinals: dict[Passage, int] = {}
        self.rows: list[tuple] = []

    def ordinal(self, p: Passage | None) -> int | None:
        if p is None:
            return None
        found = self.ordinals.get(p)
        if found is None:
            found = self.ordinals[p] = len(self.rows)
            self.rows.append((self.message_id, found, p.corpus, p.pid, p.title, p.text, p.source,
                              p.doc_id, int(p.start), int(p.end), p.url, p.section, p.page))
        return found


def _node_row(message_id: int, ordinal: int, node: Node, branch_ordinal, path_index,
              passages: _PassageRows) -> list:
    return [
        message_id, ordinal, branch_ordinal, path_index, int(node.round), int(node.position),
        node.query, node.llm_answer, int(bool(node.unsolved)), node.reader_answer,
        _opt_float(node.confidence), node.decision, node.source,
        passages.ordinal(node.passage), *_span_columns(node.span),
    ]


def save_result(conn: sqlite3.Connection, message_id: int, result: AnswerResult) -> None:
    """Insert the rows of ``result`` for ``message_id`` (inside the caller's transaction)."""
    conn.execute(
        f"INSERT INTO results ({_RESULT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (message_id, result.question, result.mode, result.final_content, result.answer,
         int(result.rounds), result.stop_reason, int(result.prompt_tokens),
         int(result.completion_tokens), float(result.seconds), result.standalone_question),
    )
    save_reasoning_rows(conn, message_id, result)


def save_reasoning_rows(conn: sqlite3.Connection, message_id: int, result: AnswerResult) -> None:
    """The branches, nodes, passages and citations of ``result`` (the v6 layout)."""
    conn.executemany(
        f"INSERT INTO branches ({_BRANCH_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
        [
            (message_id, i, int(b.round), b.raw_text,
             *(_span_columns(b.parent)), b.feedback, b.final_content)
            for i, b in enumerate(result.branches)
        ],
    )
    passages = _PassageRows(message_id)
    node_rows: list[list] = []
    branch_rows: list[list[int]] = []  # row index of each branch node, parallel to branch.nodes
    for b_ord, branch in enumerate(result.branches):
        branch_rows.append([])
        for node in branch.nodes:
            branch_rows[-1].append(len(node_rows))
            node_rows.append(_node_row(message_id, len(node_rows), node, b_ord, None, passages))
    for path_index, node in enumerate(result.path):
        # A path node equal to a branch node of its round shares that node's row.
        row = _find_branch_row(result.branches, branch_rows, node, node_rows)
        if row is not None:
            node_rows[row][3] = path_index
        else:
            node_rows.append(_node_row(message_id, len(node_rows), node, None, path_index,
                                       passages))
    citation_rows = [
        (message_id, i, int(r.mark), passages.ordinal(r.passage), *_span_columns(r.span),
         r.query, r.answer)
        for i, r in enumerate(result.references)
    ]
    conn.executemany(f"INSERT INTO passages ({_PASSAGE_COLUMNS}) VALUES ({','.join('?' * 13)})",
                     passages.rows)
    conn.executemany(f"INSERT INTO nodes ({_NODE_COLUMNS}) VALUES ({','.join('?' * 16)})",
                     node_rows)
    conn.executemany(f"INSERT INTO citations ({_CITATION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                     citation_rows)


def _find_branch_row(branches, branch_rows, node, node_rows) -> int | None:
    """The row of a branch node equal to ``node`` not yet claimed by another path entry."""
    for branch, rows in zip(branches, branch_rows):
        if branch.round != node.round:
            continue
        for candidate, row in zip(branch.nodes, rows):
            if node_rows[row][3] is None and candidate == node:
                return row
    return None


_PASSAGE_FIELDS = ("corpus", "pid", "title", "text", "source", "doc_id", "start", "end", "url",
                   "section", "page")


def _passage(row) -> Passage:
    """The Passage in ``row[2:13]``, built without the frozen dataclass's ``__init__``.

    Reopening a long chat builds thousands of passages, and ``__init__`` (``object.__setattr__``
    per field) was the largest single cost in Python; filling ``__dict__`` gives the same object.
    """
    passage = object.__new__(Passage)
    passage.__dict__.update(zip(_PASSAGE_FIELDS, row[2:13]))
    return passage


def _span(start, end) -> tuple[int, int] | None:
    return None if start is None else (start, end)


def _node(row, passages: dict) -> Node:
    # Positional, in Node's field order (round, position, query, llm_answer, unsolved,
    # reader_answer, confidence, decision, source, passage, span): keywords cost more.
    return Node(row[4], row[5], row[6], row[7], bool(row[8]), row[9], row[10], row[11], row[12],
                None if row[13] is None else passages[row[13]], _span(row[14], row[15]))


def load_results(conn: sqlite3.Connection, where: str, params: tuple, *,
                 tree_where: str | None = None, tree_params: tuple = ()
                 ) -> dict[int, AnswerResult]:
    """Results of the messages selected by ``message_id IN (SELECT id FROM messages WHERE ...)``.

    ``where`` (and ``tree_where``) are fixed SQL conditions on ``messages`` written by this
    package, never user text. With ``tree_where``, branches and nodes (the reasoning tree and
    path) are read only for the messages it selects; the others come back with empty
    ``branches`` and ``path`` but their references in full (what a transcript shows).
    """
    select_ids = f"message_id IN (SELECT id FROM messages WHERE {where})"
    tree_ids, tree_args = select_ids, params
    if tree_where is not None:
        tree_ids = f"message_id IN (SELECT id FROM messages WHERE {tree_where})"
        tree_args = tree_params
    results: dict[int, AnswerResult] = {}
    for row in conn.execute(f"SELECT {_RESULT_COLUMNS} FROM results WHERE {select_ids}", params):
        results[row[0]] = AnswerResult(
            question=row[1], mode=row[2], final_content=row[3], answer=row[4], rounds=row[5],
            stop_reason=row[6], prompt_tokens=row[7], completion_tokens=row[8], seconds=row[9],
            standalone_question=row[10],
        )
    if not results:
        return results
    branches: dict[int, list[Branch]] = defaultdict(list)
    for row in conn.execute(
        f"SELECT {_BRANCH_COLUMNS} FROM branches WHERE {tree_ids} ORDER BY message_id, ordinal",
        tree_args,
    ):
        branches[row[0]].append(Branch(round=row[2], raw_text=row[3],
                                       parent=_span(row[4], row[5]), feedback=row[6],
                                       final_content=row[7]))
    # Each answer's passages, by ordinal: one object per distinct passage of an answer.
    passages: dict[int, dict[int, Passage]] = defaultdict(dict)
    for row in conn.execute(f"SELECT {_PASSAGE_COLUMNS} FROM passages WHERE {select_ids}",
                            params):
        passages[row[0]][row[1]] = _passage(row)
    paths: dict[int, list[tuple[int, Node]]] = defaultdict(list)
    for row in conn.execute(
        f"SELECT {_NODE_COLUMNS} FROM nodes WHERE {tree_ids} ORDER BY message_id, ordinal",
        tree_args,
    ):
        node = _node(row, passages[row[0]])
        if row[2] is not None:
            branches[row[0]][row[2]].nodes.append(node)
        if row[3] is not None:
            paths[row[0]].append((row[3], node))
    references: dict[int, list[Reference]] = defaultdict(list)
    for row in conn.execute(
        f"SELECT {_CITATION_COLUMNS} FROM citations WHERE {select_ids} ORDER BY message_id, ordinal",
        params,
    ):
        span = None if row[4] is None else (row[4], row[5])
        # Positional, in field order (mark, passage, span, query, answer).
        references[row[0]].append(Reference(row[2], passages[row[0]][row[3]], span, row[6],
                                            row[7]))
    for message_id, result in results.items():
        result.branches = branches.get(message_id, [])
        result.path = [node for _, node in sorted(paths.get(message_id, []), key=lambda p: p[0])]
        result.references = references.get(message_id, [])
    return results
