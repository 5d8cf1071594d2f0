"""Find in the transcript: counts, stepping with wrap, match case, Esc, highlights after re-renders."""

from PySide6.QtCore import Qt

from desktop.views.chat import ChatEntry, ChatView

ENTRIES = [
    ChatEntry("user", "Who founded Lantern Hall?", key="1"),
    ChatEntry("assistant", "The lantern makers' guild founded Lantern Hall in 1820.", key="2"),
    ChatEntry("user", "And who restored the LANTERN roof?", key="3"),
]


def make_chat(qtbot, entries=ENTRIES) -> ChatView:
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show()
    chat.set_entries(list(entries))
    return chat


def selected(chat) -> str:
    return chat.transcript.textCursor().selectedText()


def current_highlight(bar) -> str:
    """The text under the last extra selection: the current match's, drawn on top."""
    selections = bar.view.extraSelections()  # held: the cursors live as long as the list
    cursor = selections[-1].cursor
    return cursor.selectedText()


def test_typing_finds_every_match_and_steps_through_them_with_wrap(qtbot):
    chat = make_chat(qtbot)
    bar = chat.find_bar
    assert not bar.isVisible()
    bar.open()
    assert bar.isVisible() and chat.focusWidget() is bar.field  # the window's focus child
    qtbot.keyClicks(bar.field, "lantern")
    # Case-insensitive by default: "Lantern" in the first question, "lantern" and "Lantern" in the
    # answer, "LANTERN" in the last question.
    assert len(bar.matches) == 4
    assert bar.count_label.text() == "1 of 4"
    assert selected(chat) == "Lantern" and current_highlight(bar) == "Lantern"
    # One highlight per match, plus the current one on top.
    assert len(chat.transcript.extraSelections()) == 5
    positions = []
    for _ in range(4):
        positions.append(bar.matches[bar.current][0])
        qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert positions == sorted(positions)
    assert bar.count_label.text() == "1 of 4"  # wrapped to the top
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == "4 of 4" and selected(chat) == "LANTERN"  # and back to the end
    assert bar.find_previous() and bar.count_label.text() == "3 of 4"


def test_match_case_and_no_match(qtbot):
    chat = make_chat(qtbot)
    bar = chat.find_bar
    bar.open("LANTERN")
    assert bar.count_label.text() == "1 of 4"
    bar.case_box.setChecked(True)
    assert len(bar.matches) == 1 and selected(chat) == "LANTERN"
    bar.field.setText("zeppelin")
    assert bar.matches == [] and bar.count_label.text() == "No matches"
    assert chat.transcript.extraSelections() == []
    assert not bar.find_next()


def test_escape_closes_the_bar_and_clears_the_highlights(qtbot):
    chat = make_chat(qtbot)
    bar = chat.find_bar
    bar.open("hall")
    assert chat.transcript.extraSelections()
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert chat.transcript.extraSelections() == []


def test_highlights_follow_a_re_render_and_streamed_text(qtbot):
    chat = make_chat(qtbot, ENTRIES[:1])
    bar = chat.find_bar
    bar.open("lantern")
    assert len(bar.matches) == 1
    chat.set_entries(list(ENTRIES))  # a new answer arrives: the document is rebuilt
    qtbot.waitUntil(lambda: len(bar.matches) == 4)
    assert len(chat.transcript.extraSelections()) == 5
    chat.begin_answer("Tell me more", key="9")
    chat.append_token("A lantern festival is held each year.")
    qtbot.waitUntil(lambda: len(bar.matches) == 5)


def test_reveal_shows_a_found_word_without_taking_the_focus(qtbot):
    chat = make_chat(qtbot)
    chat.input.setFocus()
    bar = chat.find_bar
    assert not bar.reveal("zeppelin") and not bar.isVisible()
    assert bar.reveal("roof")
    assert bar.isVisible() and bar.count_label.text() == "1 of 1"
    assert chat.focusWidget() is chat.input
    assert current_highlight(bar) == "roof"


def _qt_find_all(document, query):
    from PySide6.QtGui import QTextCursor

    found, cursor = [], QTextCursor(document)
    while True:
        cursor = document.find(query, cursor)
        if cursor.isNull():
            return found
        found.append((cursor.selectionStart(), cursor.selectionEnd()))


def test_matches_are_at_the_positions_qt_itself_finds(qtbot, answer_result):
    # The bar searches the raw text with a regular expression; its positions must be the
    # document's own, through the question's table, the answer's links and the reference list.
    chat = make_chat(qtbot, ENTRIES + [ChatEntry("assistant", "", key="9", result=answer_result)])
    for query in ("Dijon", "the", "<b>", "é", "[2]"):
        chat.find_bar.field.setText(query)
        assert chat.find_bar.matches == _qt_find_all(chat.transcript.document(), query), query


def test_a_very_common_word_highlights_a_window_around_the_current_match(qtbot):
    from desktop.views.find_bar import MAX_HIGHLIGHTS

    chat = make_chat(qtbot, [ChatEntry("assistant", "the mill " * (MAX_HIGHLIGHTS + 500), key="1")])
    bar = chat.find_bar
    bar.open("mill")
    assert bar.count_label.text() == f"1 of {MAX_HIGHLIGHTS + 500}"
    assert len(chat.transcript.extraSelections()) == MAX_HIGHLIGHTS + 1
    bar.find_previous()  # wraps to the last match: the window moves with it
    selections = chat.transcript.extraSelections()
    last = selections[-1].cursor
    assert bar.current == MAX_HIGHLIGHTS + 499 and last.selectionStart() == bar.matches[-1][0]
