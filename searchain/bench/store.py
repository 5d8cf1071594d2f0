"""``searchain bench store [--json]``: conversation store speed, each figure beside a baseline.

Builds, in a temporary folder, a store holding ``--conversations`` chats (a real question and a
passage-long answer each, from ``../shared/eval`` when it is there) plus one chat of
``--long-messages`` messages whose answers carry full reasoning, then measures (medians):

- ``save_message_p50_ms``: ``finish_answer`` of an answer with 10 citations (2 branches, 6
  nodes). Baselines, same rows, plain ``sqlite3``: ``naive`` commits each row on its own in the
  default rollback journal (how it is usually first written); ``floor`` is one transaction in
  WAL with no FTS, no checks (what SQLite itself costs).
- ``open_conversation_1000_messages_ms``: ``get_conversation(reasoning="last")``, what the app
  does when a chat is opened (every answer's text and sources, the last answer's tree);
  ``open_conversation_all_trees_ms``: ``get_conversation()``, every tree too (exports, CLI);
  baseline loads each message by itself (``get_message`` per id, the N+1 pattern).
- ``list_10000_conversations_ms``: ``list_conversations()``; baselines: the same query on a
  copy of the database without the v3 ``conversations_by_update`` index (also for the first
  page of 50, where the index matters most), and the v4 query, which counted each chat's
  messages and read its first question in two subqueries (``list_10000_conversations_v4_query_ms``).
- ``search_ms``: ``search`` over every message; baseline, the same words matched with
  ``LIKE '%word%'`` (a full scan, what one does without FTS5).

Prints ONE JSON object.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Callable

from ..eval.datasets import SHARED_EVAL_DIR

# What listing ran until v5 put the count and preview on the conversation row.
_V4_SUMMARY_SQL = """
    SELECT c.id, c.title, c.created_at, c.updated_at,
        (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
        coalesce((SELECT substr(m.content, 1, 120) FROM messages m
                  WHERE m.conversation_id = c.id AND m.role = 'user' ORDER BY m.id LIMIT 1), '')
    FROM conversations c
"""
TARGETS_MS = {"save_message_p50_ms": 5.0, "open_conversation_1000_messages_ms": 100.0,
              "list_10000_conversations_ms": 50.0, "search_ms": 50.0}


def register(sub) -> None:
    p = sub.add_parser("store", help="conversation store: save, open, list, search vs baselines")
    p.add_argument("--conversations", type=int, default=10_000)
    p.add_argument("--long-messages", type=int, default=1000,
                   help="messages in the long conversation that is reopened (default 1000)")
    p.add_argument("--repeats", type=int, default=200, help="timed saves (default 200)")
    p.add_argument("--work", help="folder for the databases (default: a temporary one)")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from .workdir import in_work_folder

    print(json.dumps(in_work_folder(args.work, "searchain-bench-store-", lambda work: measure(work, args)), indent=2))
    return 0


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm the page cache and statement cache
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 3)


def _texts() -> tuple[list[str], list[str], str]:
    """(questions, answer texts, where they came from): real eval data, else generated."""
    questions, answers = [], []
    for name, q_key, p_key in (("musique/dev_200.jsonl", "question", "paragraphs"),
                               ("hotpotqa/dev_500.jsonl", "question_text", "contexts")):
        path = SHARED_EVAL_DIR / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                questions.append(record[q_key])
                answers.extend(p["paragraph_text"] for p in record[p_key][:3])
    if questions:
        return questions, answers, str(SHARED_EVAL_DIR)
    rng = random.Random(0)
    words = [f"{a}{b}" for a in ("kar", "mel", "tor", "vin", "sul") for b in
             ("ba", "do", "ne", "ri", "sko", "tha", "u", "wy")]
    questions = [" ".join(rng.choices(words, k=9)) + "?" for _ in range(500)]
    answers = [" ".join(rng.choices(words, k=80)) + "." for _ in range(1500)]
    return questions, answers, "generated words"


def _big_result(question: str, passages: list[str]):
    """An answer with 10 references, 2 branches of 3 nodes: what a long SearChain answer saves."""
    from ..reasoning.result import AnswerResult, Branch, Node, Reference
    from ..types import Passage

    ps = [Passage("bench", f"p{i}", f"Title {i}", passages[i % len(passages)], "bench.jsonl",
                  f"doc{i}", 0, len(passages[i % len(passages)])) for i in range(10)]
    nodes = [[Node(round=r, position=k, query=f"Sub-question {r}.{k}?", llm_answer="An answer.",
                   reader_answer="A span", confidence=1.25 + k, decision="verified",
                   passage=ps[(3 * r + k) % 10], span=(0, 6)) for k in range(3)]
             for r in (1, 2)]
    branches = [Branch(round=r, raw_text="[Query 1]: ...\n[Answer 1]: ...", nodes=nodes[r - 1],
                       parent=None if r == 1 else (1, 1), feedback="According to ...")
                for r in (1, 2)]
    final = " ".join(f"Claim {i} [{i + 1}]." for i in range(10))
    return AnswerResult(
        question=question, mode="searchain", final_content=final, answer="Claim.",
        references=[Reference(i + 1, ps[i], (0, 6), f"Sub-question {i}?", "A span")
                    for i in range(10)],
        path=nodes[0] + nodes[1], branches=branches, rounds=2, prompt_tokens=2000,
        completion_tokens=300, seconds=9.5)


def _fill_many(store, n: int, questions: list[str], answers: list[str]) -> None:
    """``n`` two-message chats in one transaction (the store's own tables and triggers)."""
    from ..units import timestamp

    conn = store.db.conn
    now = timestamp("microseconds")
    conn.execute("BEGIN")
    for i in range(n):
        cid = conn.execute("INSERT INTO conversations (title, created_at, updated_at) "
                           "VALUES (?, ?, ?)", (questions[i % len(questions)][:60], now,
                                                f"{now}{i:06d}")).lastrowid
        conn.executemany(
            "INSERT INTO messages (conversation_id, role, content, state, created_at, updated_at)"
            " VALUES (?, ?, ?, 'complete', ?, ?)",
            [(cid, "user", questions[i % len(questions)], now, now),
             (cid, "assistant", answers[i % len(answers)], now, now)])
    conn.execute("COMMIT")


def _row_inserts(message_id: int, result) -> list[tuple[str, tuple]]:
    """The same rows ``finish_answer`` writes, as plain INSERT statements (for the baselines)."""
    from ..store import result_rows

    class Recorder:  # captures what save_result executes, to replay it elsewhere
        def __init__(self):
            self.statements: list[tuple[str, tuple]] = []

        def execute(self, sql, params=()):
            self.statements.append((sql, tuple(params)))

        def executemany(self, sql, rows):
            self.statements.extend((sql, tuple(r)) for r in rows)

    recorder = Recorder()
    recorder.execute("UPDATE messages SET content = ?, state = 'complete' WHERE id = ?",
                     (result.final_content, message_id))
    result_rows.save_result(recorder, message_id, result)
    return recorder.statements


def _baseline_db(path: Path, wal: bool) -> sqlite3.Connection:
    from ..store.schema import _V1_CORE, _V4_STANDALONE, _V6_PASSAGES, _V7_PAGE

    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    # The same tables, without FTS or the v5 triggers (foreign keys stay off: sqlite3's default).
    for sql in _V1_CORE + _V4_STANDALONE + _V6_PASSAGES + _V7_PAGE:
        conn.execute(sql)
    conn.execute("INSERT INTO conversations VALUES (1, 't', '', '')")
    return conn


def _plain_saver(conn: sqlite3.Connection, result, count: int, per_row: bool):
    """A function saving ``result``'s rows with plain sqlite3, for ``count`` calls."""
    conn.execute("BEGIN")  # the streaming messages exist beforehand, as for the store
    conn.executemany("INSERT INTO messages VALUES (?, 1, 'assistant', '', 'streaming', "
                     "NULL, '', '')", [(i,) for i in range(1, count + 2)])
    conn.execute("COMMIT")
    counter = iter(range(1, count + 2))

    def save_plain():
        statements = _row_inserts(next(counter), result)
        if per_row:  # naive: every statement commits on its own
            for sql, params in statements:
                conn.execute(sql, params)
            return
        conn.execute("BEGIN")  # floor: one transaction, one executemany per statement
        for sql, group in itertools.groupby(statements, key=lambda st: st[0]):
            conn.executemany(sql, [params for _, params in group])
        conn.execute("COMMIT")
    return save_plain


def _measure_save(work: Path, store, questions, answers, repeats: int) -> dict:
    from ..store import RunInfo

    result = _big_result(questions[0], answers)
    cid = store.create_conversation("save benchmark")
    run = RunInfo("m.gguf", "bench", "dpr", "searchain", 1.5, 0.35, 5, 1, "hybrid")
    pending = iter([store.begin_answer(cid, run) for _ in range(repeats + 1)])
    floor_conn = _baseline_db(work / "baseline-floor.db", wal=True)
    floor = _plain_saver(floor_conn, result, repeats + 1, per_row=False)
    # Store and floor alternate, so that both meet the same disk (fsync cost varies a lot on a
    # shared machine); the first of each is a warm-up.
    ours_ms, floor_ms = [], []
    for i in range(repeats + 1):
        for fn, times in ((lambda: store.finish_answer(next(pending), result), ours_ms),
                          (floor, floor_ms)):
            started = time.perf_counter()
            fn()
            if i:
                times.append((time.perf_counter() - started) * 1000)
    floor_conn.close()
    ours = round(statistics.median(ours_ms), 3)
    out = {"save_message_p50_ms": ours,
           "save_message_floor_p50_ms": round(statistics.median(floor_ms), 3)}
    # The naive way costs two fsyncs per row: fewer repeats keep the run short.
    naive_n = max(3, repeats // 10)
    naive_conn = _baseline_db(work / "baseline-naive.db", wal=False)
    out["save_message_naive_p50_ms"] = _median_ms(
        _plain_saver(naive_conn, result, naive_n + 1, per_row=True), naive_n)
    naive_conn.close()
    out["save_speedup_vs_naive"] = round(out["save_message_naive_p50_ms"] / ours, 2)
    out["save_ratio_vs_floor"] = round(ours / out["save_message_floor_p50_ms"], 2)
    return out


def measure(work: Path, args) -> dict:
    from ..store import ConversationStore
    from ..store.conversations import _SUMMARY_SQL
    from ..store.search import fts_query

    questions, answers, origin = _texts()
    db_path = work / "conversations.db"
    store = ConversationStore.open(db_path)
    try:
        started = time.perf_counter()
        _fill_many(store, args.conversations, questions, answers)
        long_id = store.create_conversation("long conversation")
        result = _big_result(questions[1], answers)
        from ..store import RunInfo
        run = RunInfo("m.gguf", "bench", "dpr", "searchain", 1.5, 0.35, 5, 1, "hybrid")
        for i in range(args.long_messages // 2):
            store.add_user_message(long_id, questions[i % len(questions)])
            store.finish_answer(store.begin_answer(long_id, run), result)
        build_s = time.perf_counter() - started
        out: dict = {"conversations": args.conversations + 1,
                     "messages": store.db["messages"].count, "texts_from": origin}

        out.update(_measure_save(work, store, questions, answers, args.repeats))

        opened = store.get_conversation(long_id)
        assert len(opened.messages) == 2 * (args.long_messages // 2)
        out["open_conversation_1000_messages_ms"] = _median_ms(
            lambda: store.get_conversation(long_id, reasoning="last"), 5)
        out["open_conversation_all_trees_ms"] = _median_ms(
            lambda: store.get_conversation(long_id), 5)
        message_ids = [m.id for m in opened.messages]
        out["open_conversation_n_plus_1_ms"] = _median_ms(
            lambda: [store.get_message(m) for m in message_ids], 3)

        out["list_10000_conversations_ms"] = _median_ms(store.list_conversations, 5)
        out["list_first_page_ms"] = _median_ms(lambda: store.list_conversations(limit=50), 20)
        copy = sqlite3.connect(work / "no-index.db", isolation_level=None)
        store.db.conn.backup(copy)
        copy.execute("DROP INDEX conversations_by_update")
        order = " ORDER BY c.updated_at DESC, c.id DESC LIMIT ?"
        out["list_10000_conversations_no_index_ms"] = _median_ms(
            lambda: copy.execute(_SUMMARY_SQL + order, (-1,)).fetchall(), 5)
        out["list_first_page_no_index_ms"] = _median_ms(
            lambda: copy.execute(_SUMMARY_SQL + order, (50,)).fetchall(), 20)
        out["list_10000_conversations_v4_query_ms"] = _median_ms(
            lambda: store.db.conn.execute(_V4_SUMMARY_SQL + order, (-1,)).fetchall(), 5)

        rng = random.Random(1)
        queries = []
        for q in rng.sample(questions, 20):
            words = [w for w in q.rstrip("?").split() if len(w) > 4]
            queries.append(" ".join(words[:2]) or q.split()[0])
        out["search_ms"] = _median_ms(lambda: [store.search(q) for q in queries], 3)
        out["search_ms"] = round(out["search_ms"] / len(queries), 3)

        def like_scan():
            for q in queries:
                words = [w.strip('"*') for w in fts_query(q).split()]
                where = " AND ".join("m.content LIKE ?" for _ in words)
                copy.execute(f"SELECT m.conversation_id, m.id FROM messages m WHERE {where} "
                             "LIMIT 50", [f"%{w}%" for w in words]).fetchall()
        out["search_like_scan_ms"] = round(_median_ms(like_scan, 3) / len(queries), 3)
        copy.close()
        out["search_queries"] = queries[:5]
        out["build_s"] = round(build_s, 2)
        out["db_size_mb"] = round(db_path.stat().st_size / 2**20, 1)
    finally:
        store.close()
    out["sqlite_version"] = sqlite3.sqlite_version
    out["synchronous"] = "FULL"
    out["targets_ms"] = TARGETS_MS
    out["meets_targets"] = {k: out[k] <= v for k, v in TARGETS_MS.items()}
    return out
