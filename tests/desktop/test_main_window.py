"""The main window's flows against the real engine facade and the real conversation store."""

import json
import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import Settings


def make_window(qtbot, home, settings=None):
    ctx = AppContext(home, settings or Settings.load(home))
    window = MainWindow(ctx)
    window.confirm_destructive = False
    qtbot.addWidget(window)
    window.show()
    return window


def wait_idle(qtbot, window):
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=60_000)


def test_asking_without_a_model_shows_a_readable_error_and_keeps_working(qtbot, home):
    window = make_window(qtbot, home)
    window.chat.input.setPlainText("Who designed the Eiffel Tower?")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.message_bar.isVisible() and window.message_bar.kind == "error"
    assert "No language model is configured" in window.message_bar.message.text()
    transcript = window.chat.transcript.toPlainText()
    assert "No language model is configured" in transcript and "Traceback" not in transcript
    # The banner offers the three places where a model is set; "Settings…" opens the dialog.
    for action in ("catalogue", "open_gguf", "settings"):
        assert window.message_bar.findChild(object, f"action_{action}") is not None
    qtbot.mouseClick(window.message_bar.findChild(object, "action_settings"), Qt.MouseButton.LeftButton)
    assert window.settings_dialog.isVisible()
    window.settings_dialog.close()
    # The question and the failed answer were saved; the sidebar lists the conversation.
    store = window.ctx.workspace().conversations()
    [summary] = store.list_conversations()
    assert summary.title == "Who designed the Eiffel Tower?"
    messages = store.get_conversation(summary.id).messages
    assert [m.role for m in messages] == ["user", "assistant"] and messages[1].state == "failed"
    assert window.sidebar.titles() == ["Who designed the Eiffel Tower?"]
    # Still usable: a second question goes through the same path.
    assert window.answers.ask("And when?")
    wait_idle(qtbot, window)
    assert len(store.get_conversation(summary.id).messages) == 4


def test_the_window_opens_ready_to_type_a_question(qtbot, home):
    window = make_window(qtbot, home)
    assert window.focusWidget() is window.chat.input
    qtbot.keyClicks(window.focusWidget(), "Where")
    assert window.chat.input.toPlainText() == "Where" and window.sidebar.search.text() == ""


def test_first_run_guidance_offers_catalogue_and_gguf(qtbot, home):
    window = make_window(qtbot, home)
    window.show_first_run_guidance()
    assert "No language model" in window.message_bar.message.text()
    assert window.message_bar.findChild(object, "action_catalogue") is not None
    assert window.message_bar.findChild(object, "action_open_gguf") is not None
    assert window.model_label.text() == "Model: none installed"


def test_conversations_open_rename_search_delete_export(qtbot, home, answer_result, tmp_path):
    window = make_window(qtbot, home)
    store = window.ctx.workspace().conversations()
    from searchain.store.records import RunInfo

    cid = store.create_conversation("Eiffel")
    store.add_user_message(cid, answer_result.question)
    mid = store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings))
    store.finish_answer(mid, answer_result)
    other = store.create_conversation("Unrelated chat")
    store.add_user_message(other, "What is a township?")
    window.conversations.refresh()
    assert set(window.sidebar.titles()) == {"Eiffel", "Unrelated chat"}

    assert window.conversations.open(cid)
    assert f'href="ref:{mid}:2"' in window.chat.transcript.toHtml()
    assert "SearChain · 2 rounds · 1.5 s · corpus demo" in window.chat.transcript.toPlainText()
    assert window.reasoning.round_count() == 2
    window.chat.transcript.anchorClicked.emit(__import__("PySide6.QtCore").QtCore.QUrl(f"ref:{mid}:3"))
    assert window.passage.highlighted_text() == "Dijon"
    assert window.side_tabs.currentWidget() is window.passage

    window.sidebar.rename_requested.emit(cid, "Eiffel & Dijon")
    assert store.get_conversation(cid).title == "Eiffel & Dijon"
    window.sidebar.search.setText("township")
    assert window.sidebar.titles() == ["Unrelated chat"]
    window.sidebar.search.setText("")

    md = window.export_conversation(cid, "markdown", str(tmp_path / "chat.md"))
    assert "Dijon" in md.read_text(encoding="utf-8")
    js = window.export_conversation(cid, "json", str(tmp_path / "chat.json"))
    data = json.loads(js.read_text(encoding="utf-8"))
    assert [c["title"] for c in data["conversations"]] == ["Eiffel & Dijon"]

    window.delete_conversation(cid)
    assert window.sidebar.titles() == ["Unrelated chat"]
    assert window.conversations.current_id is None and window.chat.entries == []


def test_window_state_and_last_conversation_restored(qtbot, home):
    window = make_window(qtbot, home)
    cid = window.ctx.workspace().conversations().create_conversation("Keep me")
    window.conversations.open(cid)
    window.resize(760, 560)  # inside the offscreen screen (800x600), which clamps geometry
    window.splitter.setSizes([180, 380, 190])
    sizes = window.splitter.sizes()
    window.close()
    saved = json.loads(home.settings_file.read_text())["ui"]
    assert saved["last_conversation"] == cid and saved["splitter"] == sizes

    again = make_window(qtbot, home)
    again.restore_last_conversation()
    qtbot.waitExposed(again)
    assert again.conversations.current_id == cid
    assert again.splitter.sizes() == sizes
    assert (again.width(), again.height()) == (760, 560)


def test_shortcuts_new_chat_and_escape_stop(qtbot, home):
    window = make_window(qtbot, home)
    window.chat.set_entries([])
    window.conversations.current_id = 5
    window.new_action.trigger()
    assert window.conversations.current_id is None
    assert window.new_action.shortcut().toString() == "Ctrl+N"


def test_answer_cut_off_by_a_crash_reopens_as_interrupted_with_its_partial_text(qtbot, home):
    from searchain.store.conversations import ConversationStore
    from searchain.store.records import RunInfo

    # An earlier run of the app checkpointed part of an answer, then died.
    store = ConversationStore.open(home.conversations_db)
    cid = store.create_conversation("Crashed")
    store.add_user_message(cid, "Where is the observatory?")
    mid = store.begin_answer(cid, RunInfo.from_settings(Settings()))
    store.checkpoint_answer(mid, "[Query 1]: Where is the <b>observatory</b>?")
    store.close()  # flushes the checkpoint; the message stays in state "streaming"

    window = make_window(qtbot, home)
    assert window.conversations.open(cid)
    html = window.chat.transcript.toHtml()
    assert "Interrupted" in html and "working" not in html
    assert "&lt;b&gt;observatory&lt;/b&gt;" in html  # partial text kept, as plain text
    assert not window.answers.busy and window.chat._pending() is None


def test_copy_answer_with_sources_and_ask_again(qtbot, home, answer_result):
    from PySide6.QtWidgets import QApplication

    from searchain.store.records import RunInfo

    window = make_window(qtbot, home)
    assert window.copy_answer() is None  # nothing to copy in an empty chat
    store = window.ctx.workspace().conversations()
    cid = store.create_conversation("Eiffel")
    store.add_user_message(cid, answer_result.question)
    store.finish_answer(store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings)), answer_result)
    window.conversations.open(cid)

    window.copy_answer_action.trigger()
    copied = QApplication.clipboard().text()
    assert copied.startswith(answer_result.final_content)
    for ref in answer_result.references:  # every cited passage, in full, as plain text
        assert f"[{ref.mark}] **{ref.passage.title}**" in copied
    assert "Gustave Eiffel was born in **Dijon** in 1832." in copied
    assert window.copy_answer_action in window.chat.context_actions

    # Ask again re-asks the last question in the same chat (here it fails: no model installed).
    window.ask_again_action.trigger()
    assert window.answers.busy and not window.ask_again_action.isEnabled()
    wait_idle(qtbot, window)
    messages = store.get_conversation(cid).messages
    assert [m.content for m in messages if m.role == "user"] == [answer_result.question] * 2
    assert messages[-1].state == "failed" and window.ask_again_action.isEnabled()


def test_every_text_view_input_and_list_has_an_accessible_name(qtbot, home):
    """Screen readers announce these widgets by name; a widget without one reads as "edit"."""
    from PySide6.QtWidgets import QLineEdit, QListWidget, QPlainTextEdit, QTextBrowser, QTreeWidget

    window = make_window(qtbot, home)
    widgets = [w for kind in (QTextBrowser, QPlainTextEdit, QLineEdit, QTreeWidget, QListWidget)
               for w in window.findChildren(kind)]
    assert len(widgets) >= 6  # transcript, question, search box, two trees, passage
    unnamed = [w.objectName() or type(w).__name__ for w in widgets if not w.accessibleName()]
    assert unnamed == []


def test_find_in_conversation_from_the_menu_and_from_the_sidebar_search(qtbot, home, answer_result):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication

    from searchain.store.records import RunInfo

    window = make_window(qtbot, home)
    store = window.ctx.workspace().conversations()
    cid = store.create_conversation("Eiffel")
    store.add_user_message(cid, answer_result.question)
    store.finish_answer(store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings)), answer_result)
    window.conversations.refresh()

    # Found through the sidebar's search: opening it shows where the word is.
    window.sidebar.search.setText("Dijon")
    assert window.conversations.open(cid)
    bar = window.chat.find_bar
    assert bar.isVisible() and bar.query() == "Dijon" and bar.count_label.text().startswith("1 of ")
    bar.close_bar()

    # Edit > Find (Ctrl+F) searches for the selected words.
    cursor = window.chat.transcript.document().find("Paris")
    window.chat.transcript.setTextCursor(cursor)
    find = next(a for a in window.menuBar().actions()[1].menu().actions() if "Find in" in a.text())
    assert find.shortcut().toString() == "Ctrl+F"
    find.trigger()
    assert bar.isVisible() and bar.query() == "Paris" and window.focusWidget() is bar.field

    # Esc in the find field closes the bar rather than stopping an answer (the window's Esc): the
    # field claims Esc in the shortcut-override round that Qt runs before any shortcut fires,
    # which a read-only transcript does not.
    def claims_escape(widget) -> bool:
        event = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier)
        event.ignore()  # as Qt sends it
        QApplication.sendEvent(widget, event)
        return event.isAccepted()

    assert claims_escape(bar.field) and not claims_escape(window.chat.transcript)
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_import_conversations_opens_the_first_and_a_bad_file_changes_nothing(qtbot, home, answer_result, tmp_path):
    from searchain.store.records import RunInfo

    window = make_window(qtbot, home)
    store = window.ctx.workspace().conversations()
    cid = store.create_conversation("Eiffel")
    store.add_user_message(cid, answer_result.question)
    store.finish_answer(store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings)), answer_result)
    exported = window.export_conversation(cid, "json", str(tmp_path / "chat.json"))

    def imported(path):
        job = window.import_conversations(path)
        assert "Importing conversations" in window.message_bar.message.text()  # it runs on a worker
        qtbot.waitUntil(lambda: not job.running, timeout=10_000)
        return job

    bad = tmp_path / "bad.json"
    bad.write_text('{"conversations": [', encoding="utf-8")
    assert imported(str(bad)).outcome == "failed"
    assert window.message_bar.kind == "error" and "not valid JSON" in window.message_bar.message.text()
    assert len(store.list_conversations()) == 1

    job = imported(str(exported))
    assert job.worker_thread_id != threading.get_ident()
    [new_id] = job.result
    assert new_id != cid and window.conversations.current_id == new_id
    assert window.sidebar.titles() == ["Eiffel", "Eiffel"]
    assert "Imported 1 conversation from" in window.message_bar.message.text()
    # The imported chat is whole: its answer, marks and reasoning tree.
    assert window.chat.last_result().final_content == answer_result.final_content
    assert window.reasoning.round_count() == 2


def test_open_source_file_hands_the_file_or_its_folder_to_the_desktop(qtbot, home, tmp_path, opened_files):
    from searchain.types import Passage

    window = make_window(qtbot, home)
    notes = tmp_path / "notes.md"
    notes.write_text("The mill was built in 1820.", encoding="utf-8")
    passage = Passage(corpus="notes", pid="notes.md#0", title="Mill", text="The mill was built in 1820.",
                      source=str(notes), doc_id="notes.md")
    window.passage.show_passage(passage)
    assert window.passage.open_source.isEnabled()
    qtbot.mouseClick(window.passage.open_source, Qt.MouseButton.LeftButton)
    assert opened_files == [str(notes)]
    # A very large source (a Wikipedia dump) opens its folder instead.
    from desktop.document import source_target
    assert source_target(passage, limit=5) == (tmp_path, "folder")
    # A document's passage (it knows its page or section) opens the file itself at any size.
    from dataclasses import replace
    assert source_target(replace(passage, section="Mill"), limit=5) == (notes, "file")
    # Moved away: said plainly, nothing opened.
    notes.unlink()
    assert window.open_source(passage) is None
    assert "is not there any more" in window.message_bar.message.text()
    assert opened_files == [str(notes)]
    window.passage.show_passage(Passage(corpus="x", pid="1", title="t", text="t"))
    assert not window.passage.open_source.isEnabled()  # no source recorded


def test_demo_corpus_examples_are_offered_only_while_it_is_active(qtbot, home):
    from searchain.library.demo import demo_questions

    window = make_window(qtbot, home)
    first = demo_questions()[0]
    assert window.chat.suggestions == demo_questions(limit=3) and first in window.chat.transcript.toPlainText()
    window.ctx.settings.active_corpus = "wiki"
    window.update_status()
    assert window.chat.suggestions == [] and first not in window.chat.transcript.toPlainText()


def test_keyboard_shortcuts_dialog_lists_every_menu_shortcut(qtbot, home):
    window = make_window(qtbot, home)
    window.show_shortcuts()
    dialog = window.shortcuts_dialog
    table = [tuple(dialog.table.item(r, c).text() for c in range(3)) for r in range(dialog.table.rowCount())]
    commands = {command: keys for _where, command, keys in table}
    assert commands["New chat"] == "Ctrl+N" and commands["Find in conversation"] == "Ctrl+F"
    assert commands["Bigger text"] == "Ctrl++ or Ctrl+="
    assert commands["Keyboard shortcuts"] == "Ctrl+/" and commands["Send the question"] == "Enter"
    # Read from the actions: every menu action with a shortcut is listed, none invented.
    with_keys = [a for top in window.menuBar().actions() for a in top.menu().actions() if a.shortcuts()]
    assert len([row for row in table if row[0] not in ("Chat", "Find bar", "Conversations")]) == len(with_keys)


def test_export_all_writes_a_backup_that_import_reads_back(qtbot, home, answer_result, tmp_path):
    from searchain.store.records import RunInfo

    window = make_window(qtbot, home)
    store = window.ctx.workspace().conversations()
    for title in ("First", "Second"):
        cid = store.create_conversation(title)
        store.add_user_message(cid, answer_result.question)
        store.finish_answer(store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings)), answer_result)
    backup = tmp_path / "backup.json"
    job = window.export_all_conversations(str(backup))
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert job.outcome == "finished" and "Exported 2 conversations to" in window.message_bar.message.text()
    assert [c["title"] for c in json.loads(backup.read_text())["conversations"]] == ["First", "Second"]

    for cid in [c.id for c in store.list_conversations()]:
        store.delete(cid)
    window.conversations.refresh()
    job = window.import_conversations(str(backup))
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert sorted(window.sidebar.titles()) == ["First", "Second"]
    assert window.chat.last_result().final_content == answer_result.final_content

    job = window.export_all_conversations(str(tmp_path))  # a folder, not a file
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert job.outcome == "failed" and "it is a folder" in window.message_bar.message.text()


def test_each_nodes_fate_is_in_view_at_the_default_size(qtbot, home, answer_result):
    from desktop.views.reasoning import COL_FATE, COL_QUERY

    window = make_window(qtbot, home)
    window.side_tabs.setCurrentWidget(window.reasoning)
    window.reasoning.show_result(answer_result)
    tree = window.reasoning.tree
    qtbot.waitUntil(lambda: tree.viewport().width() > 0)
    header = tree.header()
    for col in (COL_QUERY, COL_FATE):  # the query and what became of it, without scrolling
        assert 0 <= header.sectionViewportPosition(col)
        assert header.sectionViewportPosition(col) + header.sectionSize(col) <= tree.viewport().width()


def test_delete_on_the_selected_conversation_deletes_it_but_not_while_its_title_is_edited(qtbot, home):
    window = make_window(qtbot, home)
    store = window.ctx.workspace().conversations()
    keep, gone = store.create_conversation("Keep me"), store.create_conversation("Delete me")
    window.conversations.refresh()
    assert window.conversations.open(gone)
    tree = window.sidebar.tree
    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    tree.setFocus()
    window.sidebar.start_rename(gone)  # Delete in the title editor deletes characters, not the chat
    editor = QApplication.focusWidget()
    assert editor is not tree
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    assert set(window.sidebar.titles()) == {"Keep me", "Delete me"}
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: tree.state() != tree.State.EditingState)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Delete)
    assert window.sidebar.titles() == ["Keep me"] and [c.id for c in store.list_conversations()] == [keep]
