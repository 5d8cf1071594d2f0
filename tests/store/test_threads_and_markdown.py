"""One store used from two threads (the app's UI and worker), and the Markdown layout."""

import threading

from searchain.store import ConversationStore
from searchain.store.markdown import answer_markdown, conversation_markdown


def test_worker_streams_while_ui_thread_reads(tmp_path, sample_result, sample_run):
    store = ConversationStore.open(tmp_path / "c.db", checkpoint_interval=0.0)
    cid = store.create_conversation()
    store.add_user_message(cid, sample_result.question)
    errors = []

    def worker():
        try:
            for n in range(8):
                mid = store.begin_answer(cid, sample_run)
                for t in range(10):
                    store.checkpoint_answer(mid, f"answer {n} token {t}")
                store.finish_answer(mid, sample_result)
        except Exception as exc:  # reported to the main thread below
            errors.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    reads = 0
    while thread.is_alive() or reads == 0:
        conv = store.get_conversation(cid)
        assert all(m.result == sample_result for m in conv.messages
                   if m.role == "assistant" and m.state == "complete")
        store.list_conversations()
        store.search("Stanley")
        reads += 1
    thread.join()
    assert errors == []
    assert store.get_conversation(cid).message_count == 9
    store.close()


def test_markdown_puts_each_answer_before_its_numbered_references(conversation_store,
                                                                  sample_result, sample_run):
    s = conversation_store
    cid = s.create_conversation("County seat")
    s.add_user_message(cid, sample_result.question)
    mid = s.begin_answer(cid, sample_run)
    s.finish_answer(mid, sample_result)
    s.add_user_message(cid, "And its population?")
    s.fail_answer(s.begin_answer(cid, sample_run), "model file missing", partial_text="It")
    md = conversation_markdown(s.get_conversation(cid))
    order = [md.index(x) for x in (
        "# County seat", "## Question", sample_result.final_content, "### References",
        "[1] **Van Hook Township, Mountrail County, North Dakota**",
        "in **Mountrail County** in", "[2] **Mountrail County Courthouse**",
        "> The Mountrail County Courthouse in **Stanley**,", "And its population?",
        "*(failed: model file missing)*")]
    assert order == sorted(order)
    assert "corpus `musique`, passage `musique-2hop-270105-1`" in md


def test_one_answer_as_markdown_carries_its_sources_in_full(sample_result):
    md = answer_markdown(sample_result)
    order = [md.index(x) for x in (
        sample_result.final_content, "References:",
        "[1] **Van Hook Township, Mountrail County, North Dakota**", "in **Mountrail County** in",
        "[2] **Mountrail County Courthouse**", "> The Mountrail County Courthouse in **Stanley**,")]
    assert order == sorted(order)
    assert "Answered as" not in md  # asked on its own, not as a follow-up
