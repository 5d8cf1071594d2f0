"""The main window's menu bar: every command, its shortcut and the window method it calls.

Kept apart from ``main_window`` so the window's behaviour and its menu layout can be read (and
changed) separately; Help > Keyboard shortcuts reads the shortcuts back from these actions.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence

from .views.corpora.transfer import import_corpus_from_menu
from .views.strategy import STRATEGY_CHOICES, ask_again_with


def build_menus(window) -> None:
    """Fill ``window``'s menu bar; the actions other code needs become attributes of it
    (``new_action``, ``copy_answer_action``, ``ask_again_action``, ``toggle_reasoning``)."""
    def add(menu, text: str, slot, shortcut: Any = None) -> QAction:
        action = QAction(text, window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    bar = window.menuBar()
    file = bar.addMenu("&File")
    window.new_action = add(file, "&New chat", window.conversations.new, QKeySequence.StandardKey.New)
    add(file, "Export as &Markdown…", lambda: window.export_conversation(None, "markdown"))
    add(file, "Export as &JSON…", lambda: window.export_conversation(None, "json"))
    add(file, "Export &all conversations…", window.export_all_conversations)
    add(file, "&Import conversations…", window.import_conversations)
    add(file, "Import &corpus…", lambda: import_corpus_from_menu(window))
    file.addSeparator()
    add(file, "Open &GGUF file…", window.open_gguf_file)
    file.addSeparator()
    add(file, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    edit = bar.addMenu("&Edit")
    window.copy_answer_action = add(edit, "&Copy answer with sources", window.copy_answer, "Ctrl+Shift+A")
    window.ask_again_action = add(edit, "&Ask again", window.ask_again, "Ctrl+Shift+R")
    again_with = edit.addMenu("Ask again &with")
    for mode, label in STRATEGY_CHOICES:
        add(again_with, label, lambda _checked=False, m=mode: ask_again_with(window, m))
    window.ask_again_with_menu = again_with
    window.chat.context_actions = [window.copy_answer_action, window.ask_again_action, again_with.menuAction()]
    edit.addSeparator()
    add(edit, "&Find in conversation…", window.find_in_conversation, QKeySequence.StandardKey.Find)
    add(edit, "Find &next", window.chat.find_bar.find_next, QKeySequence.StandardKey.FindNext)
    add(edit, "Find pre&vious", window.chat.find_bar.find_previous, QKeySequence.StandardKey.FindPrevious)
    corpus = bar.addMenu("&Corpus")
    add(corpus, "&Manage corpora…", window.open_corpus_manager, "Ctrl+Shift+C")
    add(corpus, "&Search the corpus…", window.open_search, "Ctrl+Shift+F")
    settings = bar.addMenu("&Settings")
    add(settings, "&Model and reasoning…", window.open_settings, QKeySequence.StandardKey.Preferences)
    add(settings, "Model &catalogue…", window.open_model_catalogue)
    view = bar.addMenu("&View")
    window.toggle_reasoning = add(view, "&Reasoning panel", window.toggle_side_panel, "Ctrl+R")
    window.toggle_reasoning.setCheckable(True)
    window.toggle_reasoning.setChecked(True)
    add(view, "&Collapse reasoning tree", lambda: window.reasoning.set_collapsed(True))
    add(view, "&Expand reasoning tree", lambda: window.reasoning.set_collapsed(False))
    view.addSeparator()
    bigger = add(view, "&Bigger text", lambda: window.zoom_text(+1))
    bigger.setShortcuts([QKeySequence(QKeySequence.StandardKey.ZoomIn), QKeySequence("Ctrl+=")])
    add(view, "&Smaller text", lambda: window.zoom_text(-1), QKeySequence.StandardKey.ZoomOut)
    add(view, "&Actual size", lambda: window.zoom_text(None), "Ctrl+0")
    help_menu = bar.addMenu("&Help")
    add(help_menu, "&Keyboard shortcuts", window.show_shortcuts, "Ctrl+/")
    add(help_menu, "&Check set-up…", window.check_setup)
    add(help_menu, "Open &log folder", window.open_log_folder)
    help_menu.addSeparator()
    add(help_menu, "&About SearChain", window.show_about)
