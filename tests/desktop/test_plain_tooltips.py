"""Tooltips show model, passage and question text as the characters they are.

Qt renders a tooltip as rich text when its first line looks like a tag (``Qt.mightBeRichText``):
a conversation titled ``<img src=x>`` showed an image, and ``<a href=javascript:…>`` a live link.
``shown`` below is what the tooltip displays, decided the way Qt decides it.
"""

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's Qt namespace

from desktop.context import AppContext
from desktop.render import plain_tooltip
from desktop.views.reasoning import COL_QUERY, ReasoningPanel
from desktop.views.search import SearchDialog
from desktop.views.sidebar import Sidebar
from desktop.workers import JobRunner
from searchain.config import Settings
from searchain.reasoning.result import Branch, Node
from searchain.store.records import ConversationSummary
from searchain.types import Hit, Passage

HOSTILE = ["<img src=x>", "<a href=javascript:alert(1)>x</a>", "<b>bold</b>", "<script>alert(1)</script>",
           "<p style='color:red'>red</p> & &amp; &lt;b&gt;", "Tom & Jerry <3", "line one\n<b>line two</b>"]


def shown(tip: str) -> str:
    """The text a tooltip displays: Qt's own rich-text test, then its HTML reader for rich text."""
    if not GuiQt.mightBeRichText(tip):
        return tip
    doc = QTextDocument()
    doc.setHtml(tip)
    return doc.toPlainText()


@pytest.mark.parametrize("text", HOSTILE)
def test_plain_tooltip_shows_exactly_the_text(text):
    assert shown(plain_tooltip(text)) == text


def test_plain_tooltip_keeps_line_breaks_and_empty_stays_empty():
    assert shown(plain_tooltip("a\n\nb <i>c</i>")) == "a\n\nb <i>c</i>"
    assert plain_tooltip("") == ""


@pytest.mark.parametrize("text", HOSTILE)
def test_sidebar_title_tooltip_is_plain(qtbot, text):
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.set_conversations([ConversationSummary(1, text, "", "", 1, "")])
    assert shown(sidebar._items[1].toolTip(0)) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_search_hit_tooltip_is_plain(qtbot, home, text):
    dialog = SearchDialog(AppContext(home, Settings()), JobRunner())
    qtbot.addWidget(dialog)
    passage = Passage("c", pid=text, title=text, text=f"{text} in a passage")
    dialog._show([Hit(passage, 0.5, "bm25")])
    tip = shown(dialog.results.item(0).toolTip())
    assert tip.startswith(text) and tip.endswith(f"{text} in a passage")


@pytest.mark.parametrize("text", HOSTILE)
def test_reasoning_node_and_feedback_tooltips_are_plain(qtbot, text):
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.start_round(1)
    panel.add_branch(Branch(1, text, [Node(1, 0, text, text)]))
    tip = shown(panel.node_item(1, 0).toolTip(COL_QUERY))
    assert f"Q: {text}" in tip and f"LLM: {text}" in tip
    panel.note_feedback(1, text)
    assert shown(panel.tree.topLevelItem(0).toolTip(COL_QUERY)) == text
