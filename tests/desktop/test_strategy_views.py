"""The strategy picker, "Ask again with", and the reasoning panel's plain-text strategy log."""

import pytest

from desktop.render import BADGES
from desktop.views.reasoning import ReasoningPanel
from desktop.views.strategy import StrategyPicker, ask_again_with
from searchain.reasoning.result import DECISIONS
from tests.reasoning.test_strategy_wiring import geek_result, genground_result


def test_panel_shows_geek_branches_and_votes_then_hides_for_searchain(qtbot, answer_result):
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_result(geek_result())
    text = panel.strategy_log.toPlainText()
    assert panel.strategy_log.isVisible() and "Branch 2 (from the question): answer yes" in text
    assert "Votes: no 1, yes 1 -> yes (tied" in text
    assert panel.round_count() == 2  # the branches are also drawn as the tree's rounds
    panel.show_result(answer_result)  # a SearChain answer has no strategy log
    assert not panel.strategy_log.isVisible() and panel.strategy_log.toPlainText() == ""


def test_panel_log_is_plain_text_and_lists_genground_batches(qtbot):
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.note_strategy("[1] Deduce: <b>bold</b> & <script>x</script>")
    assert "<b>bold</b> & <script>x</script>" in panel.strategy_log.toPlainText()
    panel.show_result(genground_result())
    assert "Batch 1 (Filler 1; Filler 2; Filler 3): Empty" in panel.strategy_log.toPlainText()


def test_every_decision_has_a_badge_and_the_picker_lists_the_strategies(qtbot):
    assert set(DECISIONS) <= set(BADGES)
    picker = StrategyPicker()
    qtbot.addWidget(picker)
    assert picker.chosen() is None
    picker.choose("genground")
    assert picker.chosen() == "genground"
    assert [picker.itemData(i) for i in range(picker.count())][:4] == ["", "searchain", "coq", "direct"]
    with pytest.raises(ValueError):
        picker.choose("nope")


@pytest.mark.slow
def test_ask_with_the_picker_then_again_with_another_strategy(qtbot, answer_window):
    window = answer_window(r_max=1)
    window.chat.strategy.choose("geek")
    assert window.answers.ask("Is Kestrel Bay a town?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    first = window.chat.entries[-1]
    assert first.status == "done" and first.result.mode == "geek"
    assert "Votes:" in window.reasoning.strategy_log.toPlainText()
    assert "StrategyStep" in window.answers.events_seen
    assert ask_again_with(window, "genground")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    second = window.chat.entries[-1]
    assert second.result.mode == "genground" and second is not first
    store = window.ctx.workspace().conversations()
    messages = store.get_conversation(window.conversations.current_id).messages
    assert [m.run.mode for m in messages if m.role == "assistant"] == ["geek", "genground"]
    assert [m.result.mode for m in messages if m.role == "assistant"] == ["geek", "genground"]
