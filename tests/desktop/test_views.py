"""Each view drawn from real result types: chat links, reasoning badges, passage highlight, sidebar."""

from datetime import datetime, timedelta

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QPushButton

from desktop.views.chat import ChatEntry, ChatView
from desktop.views.message_bar import MessageBar
from desktop.views.passage import DocumentDialog, PassageViewer
from desktop.views.reasoning import COL_CONF, COL_FATE, COL_LLM, COL_READER, ReasoningPanel
from desktop.views.sidebar import Sidebar
from searchain.errors import ModelError
from searchain.store.records import ConversationSummary

from .conftest import HOSTILE_TEXT


def test_chat_renders_answer_with_clickable_marks(qtbot, answer_result):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.set_entries([ChatEntry("user", "question <b>?</b>", key="1"),
                      ChatEntry("assistant", answer_result.final_content, key="2", result=answer_result)])
    html = chat.transcript.toHtml()
    assert 'href="ref:2:1"' in html and 'href="ref:2:3"' in html
    assert 'href="ref:2:9"' not in html  # [9] has no reference
    assert "<i>x</i>" in chat.transcript.toPlainText()  # model text shown literally
    assert "question <b>?</b>" in chat.transcript.toPlainText()
    with qtbot.waitSignal(chat.reference_clicked) as blocker:
        chat.transcript.anchorClicked.emit(QUrl("ref:2:2"))
    assert blocker.args[0].mark == 2 and blocker.args[0].answer == "1889"


def test_chat_input_enter_sends_shift_enter_newlines(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    sent = []
    chat.send_requested.connect(sent.append)
    qtbot.keyClicks(chat.input, "first line")
    qtbot.keyClick(chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(chat.input, "second")
    assert sent == []
    qtbot.keyClick(chat.input, Qt.Key.Key_Return)
    assert sent == ["first line\nsecond"]
    assert chat.input.toPlainText() == ""


def test_up_in_the_empty_input_brings_back_the_last_question_to_edit(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    qtbot.keyClick(chat.input, Qt.Key.Key_Up)
    assert chat.input.toPlainText() == ""  # no question yet
    chat.set_entries([ChatEntry("user", "Who built the mill?", key="1"),
                      ChatEntry("assistant", "Ada.", key="2"),
                      ChatEntry("user", "When was it built?", key="3")])
    qtbot.keyClick(chat.input, Qt.Key.Key_Up)
    assert chat.input.toPlainText() == "When was it built?"
    qtbot.keyClicks(chat.input, " And by whom?")  # the cursor was left at the end
    assert chat.input.toPlainText() == "When was it built? And by whom?"
    qtbot.keyClick(chat.input, Qt.Key.Key_Up)  # not empty: Up moves the cursor as usual
    assert chat.input.toPlainText() == "When was it built? And by whom?"


def test_chat_streaming_is_plain_text_and_stop_shows(qtbot, answer_result):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show()
    chat.begin_answer("Q?", key="7")
    assert chat.stop_button.isVisible() and not chat.send_button.isVisible()
    chat.append_token("[Query 1]: <b>", "chain")
    chat.append_token("x</b>", "chain")
    assert chat.transcript.toPlainText().endswith("[Query 1]: <b>x</b>")
    chat.append_token("Final", "final")  # a new phase replaces the chain text
    assert chat.transcript.toPlainText().endswith("Final")
    assert "[Query 1]" not in chat.transcript.toPlainText()
    chat.finish_answer(answer_result, key="7")
    assert not chat.stop_button.isVisible()
    assert 'href="ref:7:1"' in chat.transcript.toHtml()



def test_a_searchain_draft_stays_marked_as_one_until_the_final_answer_replaces_it(qtbot, answer_result):
    from desktop.views.chat import DRAFT_LABEL

    chat = ChatView()
    qtbot.addWidget(chat)
    chat.begin_answer("Q?", key="7")
    chat.append_token("Toronto <b>Coach</b>", "draft")
    chat.append_token(" Terminal", "draft")
    assert chat.transcript.toPlainText().endswith(DRAFT_LABEL + "Toronto <b>Coach</b> Terminal")
    chat.append_token("[Query 1]: x", "chain")  # the chain and the reader work below the draft
    chat.append_token("Kevin", "reader")
    assert chat.transcript.toPlainText().endswith("Toronto <b>Coach</b> Terminal")
    assert chat.streamed_text == "Toronto <b>Coach</b> Terminal"  # what a cancel keeps: the draft
    chat.append_token("Final", "final")
    text = chat.transcript.toPlainText()
    assert text.endswith("Final") and DRAFT_LABEL.strip() not in text and "Toronto <b>" not in text
    chat.finish_answer(answer_result, key="7")
    assert DRAFT_LABEL.strip() not in chat.transcript.toPlainText()


def test_chat_says_what_a_follow_up_was_answered_as_in_plain_text(qtbot, answer_result):
    from dataclasses import replace

    chat = ChatView()
    qtbot.addWidget(chat)
    chat.begin_answer("Where was <i>he</i> born?", key="8")
    chat.note_rewrite("Where was <b>Kevin Drew</b> born?")
    assert "Answered as: Where was <b>Kevin Drew</b> born?" in chat.transcript.toPlainText()
    chat.append_token("[Query 1]: x", "chain")  # streaming still goes below the note
    assert chat.transcript.toPlainText().endswith("[Query 1]: x")
    chat.finish_answer(replace(answer_result, standalone_question="Where was <b>Kevin Drew</b> born?"), key="8")
    text = chat.transcript.toPlainText()
    assert "Answered as: Where was <b>Kevin Drew</b> born?" in text
    assert text.index("Answered as") < text.index(answer_result.answer[:10])
    chat.set_entries([ChatEntry("assistant", "x", key="9", result=answer_result)])
    assert "Answered as" not in chat.transcript.toPlainText()  # a question answered as typed


def test_chat_failure_is_readable(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.begin_answer("Q?", key="1")
    chat.fail_answer("No language model is configured.")
    text = chat.transcript.toPlainText()
    assert "No language model is configured." in text and "Traceback" not in text
    assert not chat.busy


def test_reasoning_panel_shows_rounds_nodes_and_badges(qtbot, answer_result):
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.show_result(answer_result)
    assert panel.round_count() == 2
    corrected = panel.node_item(1, 1)
    assert corrected.text(COL_LLM) == "1899" and corrected.text(COL_READER) == "1889"
    assert corrected.text(COL_CONF) == "3.10" and corrected.text(COL_FATE) == "corrected by IR"
    assert panel.node_item(1, 0).text(COL_FATE) == "verified"
    assert panel.node_item(2, 0).text(COL_FATE) == "skipped: duplicate"
    completed = panel.node_item(2, 1)
    assert completed.text(COL_LLM) == "[unsolved]" and completed.text(COL_FATE) == "completed by IR"
    assert "2 rounds, stopped" in panel.summary.text()
    # Each badge explains itself; so do the column headers.
    assert "above θ" in corrected.toolTip(COL_FATE) and "unsolved" in completed.toolTip(COL_FATE)
    assert "θ" in panel.tree.headerItem().toolTip(COL_CONF)
    panel.set_collapsed(True)
    assert not panel.tree.topLevelItem(0).isExpanded()
    with qtbot.waitSignal(panel.node_activated) as blocker:
        panel.tree.itemDoubleClicked.emit(completed, 0)
    assert blocker.args[0].reader_answer == "Dijon"


def test_reasoning_panel_live_updates(qtbot, answer_result):
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    branch = answer_result.branches[0]
    panel.start_round(1)
    unchecked = [type(n)(n.round, n.position, n.query, n.llm_answer) for n in branch.nodes]
    panel.add_branch(type(branch)(1, branch.raw_text, unchecked))
    assert panel.node_item(1, 1).text(COL_FATE) == "unchecked"
    panel.update_node(branch.nodes[1])
    assert panel.node_item(1, 1).text(COL_FATE) == "corrected by IR"


def test_passage_viewer_highlights_span_and_escapes(qtbot, answer_result):
    viewer = PassageViewer()
    qtbot.addWidget(viewer)
    viewer.show_reference(answer_result.references[0])
    assert viewer.title.text() == "France <capital>"
    assert viewer.body.toPlainText() == HOSTILE_TEXT
    assert viewer.highlighted_text() == "Paris"
    assert "background-color:#fff59d" in viewer.body.toHtml()
    assert "demo" in viewer.corpus.text()
    assert viewer.open_document.isEnabled()
    with qtbot.waitSignal(viewer.document_requested) as blocker:
        viewer.open_document.click()
    assert blocker.args[0].pid == "p1"
    dialog = DocumentDialog("France", "Intro.\n\n" + HOSTILE_TEXT, (8, 13))
    qtbot.addWidget(dialog)
    assert "<script>" in dialog.body.toPlainText()


def test_passage_viewer_shows_where_in_the_file_as_plain_text(qtbot, answer_result):
    from dataclasses import replace

    viewer = PassageViewer()
    qtbot.addWidget(viewer)
    viewer.show()
    plain = answer_result.references[0].passage
    viewer.show_passage(plain)
    assert viewer.location.isHidden()  # a Wikipedia-like passage: nothing to say
    located = replace(plain, source="/home/u/papers/report.pdf", page=12,
                      section="3.2 Results <b>&amp;</b>")
    viewer.show_passage(located)
    assert viewer.location.isVisible() and viewer.location_label.isVisible()
    assert viewer.location.text() == "report.pdf, p. 12 - 3.2 Results <b>&amp;</b>"
    assert viewer.location.textFormat() == Qt.TextFormat.PlainText
    viewer.show_empty()
    assert viewer.location.isHidden()


def test_passage_viewer_shows_article_section_and_address_as_plain_text(qtbot):
    from searchain.types import Passage

    viewer = PassageViewer()
    qtbot.addWidget(viewer)
    zim = Passage("wiki", "A/Ellin#2", "River <Ellin>", "Barges sailed it.", "w.zim", "A/Ellin", 0, 17,
                  url="https://en.wikipedia.org/wiki/River_Ellin", section="History > <b>Barges</b>")
    viewer.show_passage(zim)
    assert viewer.title.text() == "River <Ellin>"
    # one "Found in:" row for where in the file (here the article's section path)
    assert viewer.location.text() == "w.zim - History > <b>Barges</b>"
    assert viewer.location.textFormat() == Qt.TextFormat.PlainText
    assert viewer.url.text() == "https://en.wikipedia.org/wiki/River_Ellin"
    assert viewer.url.textFormat() == Qt.TextFormat.PlainText
    assert not viewer.location.isHidden() and not viewer.url.isHidden()
    viewer.show_passage(Passage("demo", "p1", "Plain", "No article facts."))
    assert viewer.location.text() == "" and viewer.url.isHidden() and viewer.location.isHidden()


def test_sidebar_groups_and_requests(qtbot):
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    now = datetime.now()
    summaries = [
        ConversationSummary(1, "Eiffel <tower>", now.isoformat(), now.isoformat(), 2, ""),
        ConversationSummary(2, "Older", "", (now - timedelta(days=40)).isoformat(), 2, ""),
    ]
    sidebar.set_conversations(summaries)
    assert sidebar.group_labels()[0] == "Today" and len(sidebar.group_labels()) == 2
    assert sidebar.titles() == ["Eiffel <tower>", "Older"]
    with qtbot.waitSignal(sidebar.conversation_selected) as blocker:
        sidebar._items[2].setSelected(True)
    assert blocker.args == [2]
    with qtbot.waitSignal(sidebar.rename_requested) as blocker:
        sidebar._items[1].setText(0, "Renamed")
    assert blocker.args == [1, "Renamed"]
    sidebar.set_conversations([])
    assert not sidebar.empty.isHidden()


def test_message_bar_shows_error_without_traceback(qtbot):
    bar = MessageBar()
    qtbot.addWidget(bar)
    bar.show_error(ModelError("The model file x.gguf does not exist.", hint="Check the path."))
    assert bar.message.text() == "The model file x.gguf does not exist."
    assert bar.hint.text() == "Check the path." and bar.kind == "error"
    bar.show_message("No model", actions=[("catalogue", "Catalogue…")])
    with qtbot.waitSignal(bar.action_triggered) as blocker:
        bar.findChild(QPushButton, "action_catalogue").click()
    assert blocker.args == ["catalogue"]


def test_parameter_counts_read_naturally_at_every_scale():
    from desktop.views.model_choice.found_panel import parameters_label

    assert parameters_label(1_543_714_304) == "1.54 B"
    assert parameters_label(135_000_000) == "135 M"
    assert parameters_label(133_312) == "133,312"  # a tiny test model is not "0.00 B"


def test_empty_chat_offers_example_questions_that_fill_the_input(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    assert "Try one" not in chat.transcript.toPlainText()
    chat.set_suggestions(["Who built <the> mill?", "When?"])
    html = chat.transcript.toHtml()
    assert "Who built &lt;the&gt; mill?" in html and "suggest:1" in html  # escaped, linked
    chat.transcript.anchorClicked.emit(QUrl("suggest:0"))
    assert chat.input.toPlainText() == "Who built <the> mill?"
    chat.set_entries([ChatEntry("user", "x", key="1")])
    assert "Try one" not in chat.transcript.toPlainText()  # only an empty chat offers them


def test_progress_row_names_engine_stages_in_words(qtbot):
    from desktop.views.progress import ProgressRow
    from searchain.events import Progress

    row = ProgressRow()
    qtbot.addWidget(row)
    row.start("Indexing")
    row.update_progress(Progress("embed 2nd", 3, 10))
    assert row.label.text() == "Embedding with the second model"
    assert (row.bar.value(), row.bar.maximum()) == (3, 10)
    # A stage's own message wins (e.g. which model is loading); unknown codes show as they are.
    row.update_progress(Progress("embed 2nd", 0, 0, "loading sentence-transformers/all-mpnet-base-v2"))
    assert row.label.text() == "loading sentence-transformers/all-mpnet-base-v2"
    assert row.bar.maximum() == 0  # busy: no count yet
    row.update_progress(Progress("something new", 1, 2))
    assert row.label.text() == "Something new"


def test_the_answer_clock_counts_seconds_and_says_what_is_usual(qtbot):
    from desktop.views.answer_clock import AnswerClock

    now = [100.0]
    clock = AnswerClock(clock=lambda: now[0])
    qtbot.addWidget(clock)
    assert clock.isHidden()
    clock.start()
    assert not clock.isHidden() and clock.text() == "0 s"
    now[0] += 12.4
    clock.tick()
    assert clock.text() == "12 s"
    clock.set_typical(95.0)
    assert clock.text() == "12 s · usually about 2 min here"
    clock.stop()
    assert clock.isHidden() and clock.text() == ""
    clock.tick()  # a tick after the answer ended changes nothing
    assert clock.text() == ""
    clock.start()  # the next answer starts from nothing, not from the last one's usual time
    assert clock.text() == "0 s" and clock.typical is None
