"""Schema v5 (count and preview on the conversation row) and v6 (each passage once per answer).

Old databases are written with the old layout's own SQL (``old_layout``) and must read back
exactly; new saves keep what they did before, plus the passage fields v1-v5 dropped.
"""

import copy
import dataclasses
import sqlite3

from searchain.store import ConversationStore
from searchain.store import schema
from searchain.types import Passage
from tests.store.old_layout import build_old, save_v1_reasoning_rows


def _varied_result(sample_result, i):
    """The sample with twists the dedup must not merge: same text under another pid, a passage
    only a citation names, and a path node that is not in any branch."""
    r = copy.deepcopy(sample_result)
    r.question = f"{r.question} #{i}"
    twin = dataclasses.replace(r.references[0].passage, pid=f"other-pid-{i}")
    lone = dataclasses.replace(r.references[1].passage, title=f"Only cited {i}", start=5)
    r.references.append(dataclasses.replace(r.references[0], mark=3, passage=twin))
    r.references.append(dataclasses.replace(r.references[1], mark=4, passage=lone, span=None))
    r.path.append(dataclasses.replace(r.path[0], round=9, passage=twin))
    return r


def test_a_v5_database_with_many_answers_migrates_exactly(tmp_path, sample_result):
    path = tmp_path / "v5.db"
    build_old(path, 5, sample_result)
    conn = sqlite3.connect(path, isolation_level=None)
    expected = {}
    conn.execute("BEGIN")
    for i in range(40):  # chat 8: 40 questions and answers, as v5 wrote them
        r = _varied_result(sample_result, i)
        if i == 0:
            conn.execute("INSERT INTO conversations (id, title, created_at, updated_at) "
                         "VALUES (8, 'Long', 't', 'u')")
        q = conn.execute("INSERT INTO messages (conversation_id, role, content, state, "
                         "created_at, updated_at) VALUES (8, 'user', ?, 'complete', 't', 't')",
                         (r.question,)).lastrowid
        a = conn.execute("INSERT INTO messages (conversation_id, role, content, state, "
                         "created_at, updated_at) VALUES (8, 'assistant', ?, 'complete', 't', "
                         "'t')", (r.final_content,)).lastrowid
        conn.execute("INSERT INTO results (message_id, question, mode, final_content, answer, "
                     "rounds, stop_reason, prompt_tokens, completion_tokens, seconds) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (a, r.question, r.mode, r.final_content, r.answer, r.rounds,
                      r.stop_reason, r.prompt_tokens, r.completion_tokens, r.seconds))
        save_v1_reasoning_rows(conn, a, r)
        expected[a] = r
        assert q
    conn.execute("COMMIT")
    conn.close()

    with ConversationStore.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        conv = store.get_conversation(8)
        got = {m.id: m.result for m in conv.messages if m.result is not None}
        assert got == expected
        assert store.get_conversation(7).messages[1].result == sample_result
        # 4 distinct passages per answer (2 shared, a twin, a cited-only one), not 5 + 4 rows.
        counts = store.db.execute("SELECT count(*) FROM passages GROUP BY message_id").fetchall()
        assert sorted({c[0] for c in counts}) == [2, 4]
        summary = {s.id: s for s in store.list_conversations()}
        assert (summary[8].message_count, summary[8].preview) == (80, expected[min(expected)]
                                                                   .question[:120])
        assert summary[7].message_count == 2


def test_passages_keep_url_and_section(conversation_store, sample_result, sample_run):
    r = copy.deepcopy(sample_result)
    with_url = dataclasses.replace(r.references[0].passage, url="https://en.wikipedia.org/wiki/X",
                                   section="History > Early years")
    r.references[0] = dataclasses.replace(r.references[0], passage=with_url)
    cid = conversation_store.create_conversation()
    conversation_store.add_user_message(cid, r.question)
    mid = conversation_store.begin_answer(cid, sample_run)
    conversation_store.finish_answer(mid, r)
    back = conversation_store.get_message(mid).result
    assert back == r and back.references[0].passage.section == "History > Early years"
    assert isinstance(back.references[0].passage, Passage)
    # A JSON export imports back with them too.
    (copy_id,) = conversation_store.import_json(conversation_store.export_json([cid]))
    assert conversation_store.get_conversation(copy_id).messages[1].result == r


def test_list_counts_and_previews_follow_every_change(conversation_store, sample_result,
                                                      sample_run):
    store = conversation_store
    empty = store.create_conversation("empty")
    cid = store.create_conversation("chat")
    mid = store.begin_answer(cid, sample_run)  # an answer before any question: no preview yet
    store.fail_answer(mid, "boom")
    store.add_user_message(cid, "First question " + "x" * 200)
    store.add_user_message(cid, "Second question")
    by_id = {s.id: s for s in store.list_conversations()}
    assert (by_id[empty].message_count, by_id[empty].preview) == (0, "")
    assert by_id[cid].message_count == 3
    assert by_id[cid].preview == ("First question " + "x" * 200)[:120]
    # The first question removed: the next one becomes the preview (triggers, not the app).
    store.db.execute("DELETE FROM messages WHERE content LIKE 'First question%'")
    by_id = {s.id: s for s in store.list_conversations()}
    assert (by_id[cid].message_count, by_id[cid].preview) == (2, "Second question")
    assert store.get_conversation(cid).message_count == 2
    store.delete(cid)  # cascades through the triggers without error
    assert [s.id for s in store.list_conversations()] == [empty]


def test_listing_reads_no_message(conversation_store):
    from searchain.store.conversations import _SUMMARY_SQL

    plan = " ".join(str(r) for r in conversation_store.db.execute(
        "EXPLAIN QUERY PLAN " + _SUMMARY_SQL + " ORDER BY c.updated_at DESC, c.id DESC"))
    assert "conversations_by_update" in plan and "messages" not in plan


def test_opening_for_a_transcript_reads_the_last_tree_only(conversation_store, sample_result,
                                                           sample_run):
    store = conversation_store
    cid = store.create_conversation()
    ids = []
    for i in range(3):
        store.add_user_message(cid, f"question {i}")
        mid = store.begin_answer(cid, sample_run)
        store.finish_answer(mid, sample_result)
        ids.append(mid)
    store.add_user_message(cid, "a question still unanswered")
    light = store.get_conversation(cid, reasoning="last")
    whole = store.get_conversation(cid)
    answers = {m.id: m for m in light.messages if m.result is not None}
    assert [m.id for m in light.messages] == [m.id for m in whole.messages]
    # The last answer is whole; the earlier ones keep text, run and references, not the tree.
    assert answers[ids[2]].result == sample_result and answers[ids[2]].reasoning_loaded
    for mid in ids[:2]:
        kept = answers[mid]
        assert not kept.reasoning_loaded
        assert (kept.result.branches, kept.result.path) == ([], [])
        assert kept.result.references == sample_result.references
        assert kept.result.final_content == sample_result.final_content
        assert kept.run == sample_run
        # Opening the message's details reads the rest.
        detail = store.get_message(mid)
        assert detail.result == sample_result and detail.reasoning_loaded
    assert all(m.reasoning_loaded for m in whole.messages)
    assert all(m.reasoning_loaded for m in light.messages if m.result is None)
