"""A native crash of the model (issue #21) ends only its worker process: the app says what
happened and what to do, keeps the conversation, and answers the next question."""

import pytest

pytestmark = pytest.mark.slow  # a real llama.cpp model in a worker process, a real index


@pytest.fixture
def window(monkeypatch, answer_window):
    # The test hook: the first model worker segfaults (a real SIGSEGV) at its 3rd token.
    monkeypatch.setenv("SEARCHAIN_TEST_LLM_FAULT", "segv@token:3")
    window = answer_window(r_max=2)
    assert window.ctx.settings.llm.isolation == "process"  # the default
    return window


def test_a_segfault_in_the_model_is_shown_and_the_conversation_kept(qtbot, window):
    assert window.answers.ask("Where is Kestrel Bay?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    entry = window.chat.entries[-1]
    assert entry.status == "failed"
    transcript = window.chat.transcript.toPlainText()
    assert "SIGSEGV (segmentation fault)" in transcript and "conversation is saved" in transcript
    assert "another model" in transcript  # what to do
    assert window.message_bar.isVisible()
    # The question and the failed answer (with what streamed before the crash) are stored.
    store = window.ctx.workspace().conversations()
    conversation = store.get_conversation(window.conversations.current_id)
    question, answer = conversation.messages[-2:]
    assert question.content == "Where is Kestrel Bay?" and answer.state == "failed"
    assert "SIGSEGV" in answer.error
    # The app goes on: the next question starts a new model process and is answered.
    assert window.answers.ask("Where is Lisk?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    assert window.chat.entries[-1].status == "done"
    assert [m.state for m in store.get_conversation(window.conversations.current_id).messages
            if m.role == "assistant"] == ["failed", "complete"]
