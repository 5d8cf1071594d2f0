"""Asking questions in the main window, through the real engine: tiny GGUF + the demo corpus."""

import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a real llama.cpp model and a real index


@pytest.fixture
def window(answer_window):
    return answer_window(r_max=2)


def test_answer_streams_draws_tree_and_is_saved(qtbot, window):
    tokens = []
    main = threading.get_ident()
    window.chat.transcript.textChanged.connect(lambda: tokens.append(threading.get_ident()))
    assert window.answers.ask("Where is Kestrel Bay?")
    assert window.chat.stop_button.isVisible()
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    seen = window.answers.events_seen
    assert "RoundStarted" in seen and "ChainGenerated" in seen and "TokenGenerated" in seen
    assert "Progress" in seen  # the first answer opened the corpus's index, and said so
    assert all(thread == main for thread in tokens)  # widgets touched only on the UI thread
    assert window.reasoning.round_count() >= 1
    assert window.reasoning.node_item(1, 0) is not None
    entry = window.chat.entries[-1]
    assert entry.status == "done" and entry.result is not None
    assert "draft" in entry.result.tokens_by_phase  # RAG's answer streamed first, as a draft
    store = window.ctx.workspace().conversations()
    conversation = store.get_conversation(window.conversations.current_id)
    answer = conversation.messages[-1]
    assert answer.state == "complete" and answer.result == entry.result
    assert window.sidebar.titles() == ["Where is Kestrel Bay?"]
    assert window.message_bar.isHidden()
    # The answer names the model file and corpus that made it, live and once reopened.
    made_by = f"· {Path(window.ctx.settings.llm.model_path).name} · corpus demo"
    assert made_by in window.chat.transcript.toPlainText()
    window.conversations.open(window.conversations.current_id)
    assert made_by in window.chat.transcript.toPlainText()



def test_a_follow_up_is_read_with_the_conversation(qtbot, window):
    assert window.answers.ask("Where is Kestrel Bay?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert "QuestionRewritten" not in window.answers.events_seen  # a first question stands alone
    first_conversation = window.conversations.current_id
    assert window.answers.ask("Who founded it?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert window.conversations.current_id == first_conversation
    # Only a question with earlier turns is rewritten: the history reached the engine.
    assert "QuestionRewritten" in window.answers.events_seen
    entry = window.chat.entries[-1]
    assert entry.status == "done" and entry.result.question == "Who founded it?"
    store = window.ctx.workspace().conversations()
    saved = store.get_conversation(first_conversation).messages[-1].result
    assert saved == entry.result
    standalone = entry.result.standalone_question  # random weights: whatever they wrote, or None
    text = window.chat.transcript.toPlainText()
    assert ("Answered as: " + standalone in text) if standalone else ("Answered as" not in text)


def test_stop_cancels_and_keeps_the_partial_answer(qtbot, window):
    assert window.answers.ask("Who founded Corvine Hall?")
    qtbot.waitUntil(lambda: "TokenGenerated" in window.answers.events_seen, timeout=300_000)
    window.answers.stop()
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=120_000)
    assert window.chat.entries[-1].status == "cancelled"
    assert "Stopped." in window.chat.transcript.toPlainText()
    store = window.ctx.workspace().conversations()
    answer = store.get_conversation(window.conversations.current_id).messages[-1]
    assert answer.state == "cancelled"
    # The app keeps working after a stop.
    assert window.answers.ask("Where is Lisk?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert window.chat.entries[-1].status == "done"


def test_opening_a_large_index_is_shown_while_the_answer_waits(window):
    from searchain.events import Progress
    from searchain.index.layout import OPEN_STAGE

    window.answers._on_event(Progress(OPEN_STAGE, 0, 0, "opening the search index of 'wiki' (7.4 GB, about 23 s)"))
    assert window.chat.phase.text() == "Opening the search index of 'wiki' (7.4 GB, about 23 s)…"


def test_the_first_node_shows_while_the_chain_is_still_written(window):
    """#37: the tree gets each step as soon as the model finished it; the parsed chain replaces them."""
    from searchain.reasoning import Branch, ChainDrafted, ChainGenerated, Node

    first = Node(round=1, position=0, query="Who founded <b>Kestrel</b> Bay?", llm_answer="Ada")
    window.answers._on_event(ChainDrafted(1, Branch(round=1, raw_text="", nodes=[first])))
    item = window.reasoning.node_item(1, 0)
    assert item is not None and "Who founded <b>Kestrel</b> Bay?" in item.text(0)  # plain text
    assert "1 step written" in window.chat.phase.text()
    second = Node(round=1, position=1, query="Where is Kestrel Bay?", llm_answer="Norway")
    window.answers._on_event(ChainGenerated(1, Branch(round=1, raw_text="", nodes=[first, second])))
    assert window.reasoning.round_count() == 1 and window.reasoning.node_item(1, 1) is not None


def test_the_first_step_shows_then_the_draft_replaces_its_text_and_stays(window):
    """#37 (``reasoning.draft_after_first_step``): the chain's first step streams and shows in the
    tree, then the draft replaces the step's text in the chat, said so, and stays while the chain
    goes on, until the final answer replaces it."""
    from searchain.reasoning import PHASE_DRAFT, Branch, ChainDrafted, DraftStarted, Node, TokenGenerated
    from desktop.views.chat import DRAFT_LABEL

    window.chat.begin_answer("Who founded Kestrel Bay?")
    on_event = window.answers._on_event
    on_event(TokenGenerated("[Query 1]: Who founded <i>Kestrel</i> Bay?", "chain"))
    step = Node(round=1, position=0, query="Who founded <i>Kestrel</i> Bay?", llm_answer="Ada")
    on_event(ChainDrafted(1, Branch(round=1, raw_text="", nodes=[step])))
    assert window.reasoning.node_item(1, 0) is not None
    on_event(DraftStarted())  # said while its prompt is read, before any of its tokens
    assert window.chat.phase.text() == "Drafting an answer from the question's passages…"
    on_event(TokenGenerated("Ada founded it <b>[1]</b>.", PHASE_DRAFT))
    shown = window.chat.transcript.toPlainText()
    assert DRAFT_LABEL.strip() in shown and "Ada founded it <b>[1]</b>." in shown and "[Query 1]" not in shown
    on_event(TokenGenerated("\n[Query 2]: Where", "chain"))  # the chain goes on behind the draft
    assert "[Query 2]" not in window.chat.transcript.toPlainText()
    assert window.chat.streamed_text == "Ada founded it <b>[1]</b>."  # the draft, as streamed
    on_event(TokenGenerated("Ada founded Kestrel Bay.", "final"))
    assert DRAFT_LABEL.strip() not in window.chat.transcript.toPlainText()


@pytest.mark.warm_up
def test_the_model_is_prepared_in_the_background_and_a_question_cancels_that(qtbot, window):
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    job = window.answers.warm_up()
    assert job is not None and messages[-1] == "Preparing the model…"
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "finished" and job.result.calls == 3 and "Model ready" in messages
    assert window.ctx.workspace()._llm is not None and window.answers.warm_job is None
    # Asked while warming up: the warm-up stops before its next call and the question is answered.
    job = window.answers.warm_up()
    assert window.answers.ask("Where is Kestrel Bay?")
    assert job.cancel_token.cancelled and window.answers.warm_job is None
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert window.chat.entries[-1].status == "done"
    assert window.answers.warm_up() is not None  # idle again: a settings change may warm up again


@pytest.mark.warm_up
def test_a_model_that_cannot_be_prepared_is_named_in_the_status_bar(qtbot, home, tmp_path):
    from desktop.context import AppContext
    from desktop.main_window import MainWindow
    from searchain.config import Settings

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file at all")
    settings = Settings.load(home)
    settings.llm.model_path = str(broken)
    window = MainWindow(AppContext(home, settings))
    qtbot.addWidget(window)
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    job = window.answers.warm_up()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "failed"
    assert any(m.startswith("The model could not be prepared: ") and "broken.gguf" in m for m in messages), messages
    settings.llm.warm_up = False
    assert window.answers.warm_up() is None  # off in the settings


@pytest.mark.warm_up
def test_a_new_model_replaces_the_old_one_off_the_ui_thread(qtbot, window, tiny_gguf):
    job = window.answers.warm_up()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    workspace = window.ctx.workspace()
    old, closed_on, close = workspace._llm, [], workspace._llm.close

    def recorded_close():
        closed_on.append(threading.get_ident())
        close()

    old.close = recorded_close
    window.use_model(str(tiny_gguf))  # chosen again: loaded afresh, as any new file would be
    job = window.answers.warm_job
    assert job is not None and "It is loading now." in window.message_bar.message.text()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    # Closed on the worker: a warm-up's call in flight would have held the UI thread otherwise.
    assert closed_on == [closed_on[0]] and closed_on[0] != threading.get_ident()
    assert workspace._llm is not None and workspace._llm is not old and job.outcome == "finished"


def test_a_model_replaced_with_the_warm_up_off_is_closed_by_the_next_question(qtbot, window, tiny_gguf):
    window.ctx.settings.llm.warm_up = False
    assert window.answers.ask("Where is Kestrel Bay?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    workspace = window.ctx.workspace()
    old, reader = workspace._llm, workspace._reader
    window.use_model(str(tiny_gguf))
    assert window.answers.warm_job is None and workspace._llm is old  # nothing runs until asked
    assert window.answers.ask("Where is Kestrel Bay?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert workspace._llm is not old and workspace._reader is not reader
    assert window.chat.entries[-1].status == "done"


def test_the_clock_says_how_long_answers_take_here_while_one_is_built(qtbot, window, sample_result):
    from dataclasses import replace

    store = window.ctx.workspace().conversations()
    run = window.answers._run_info(window.ctx.settings.reasoning.mode)  # what the question will save
    earlier = store.create_conversation("earlier")
    for seconds in (8.0, 10.0, 30.0):
        mid = store.begin_answer(earlier, run)
        store.finish_answer(mid, replace(sample_result, seconds=seconds))
    assert window.answers.ask("Where is Kestrel Bay?")
    assert not window.chat.clock.isHidden()
    qtbot.waitUntil(lambda: window.chat.clock.typical is not None, timeout=60_000)
    assert window.chat.clock.typical == 10.0
    assert window.chat.clock.text().endswith(" s · usually about 10 s here")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert window.chat.clock.isHidden() and window.chat.clock.text() == ""
