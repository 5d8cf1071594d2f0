"""Light and dark colour sets: readable on their backgrounds, and the views switch with the theme."""

import pytest
from PySide6.QtGui import QColor, QPalette

from desktop.colours import DARK, LIGHT, colours_for
from desktop.views.reasoning import COL_FATE


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("colours, base, text", [(LIGHT, "#ffffff", "#000000"), (DARK, "#1e1e1e", "#e0e0e0")])
def test_every_text_colour_meets_wcag_aa_on_its_background(colours, base, text):
    for name in ("muted", "faint", "error", "warning"):
        assert contrast(getattr(colours, name), base) >= 4.5, name
    for decision, colour in colours.badges.items():
        assert contrast(colour, base) >= 4.5, decision
    assert contrast(colours.highlight_text, colours.highlight_background) >= 4.5
    # The palette's own text colour stays readable on the backgrounds the app adds.
    for background in (colours.user_background, colours.banner_error[0], colours.banner_info[0]):
        assert contrast(text, background) >= 4.5, background


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in [(QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.Base, "#1e1e1e"),
                         (QPalette.ColorRole.Text, "#e0e0e0"), (QPalette.ColorRole.WindowText, "#e0e0e0")]:
        palette.setColor(role, QColor(colour))
    return palette


def test_palette_picks_the_set():
    assert colours_for(dark_palette()) is DARK
    light = QPalette()
    light.setColor(QPalette.ColorRole.Window, QColor("#efefef"))
    assert colours_for(light) is LIGHT


def test_views_redraw_in_the_dark_set_when_the_theme_turns_dark(qtbot, home, answer_result):
    from desktop.context import AppContext
    from desktop.main_window import MainWindow
    from searchain.config import Settings
    from searchain.store.records import RunInfo

    window = MainWindow(AppContext(home, Settings.load(home)), restore=False)
    qtbot.addWidget(window)
    window.setPalette(QPalette(QColor("#efefef")))  # a light theme, whatever the test machine's
    store = window.ctx.workspace().conversations()
    cid = store.create_conversation("t")
    store.add_user_message(cid, answer_result.question)
    store.finish_answer(store.begin_answer(cid, RunInfo.from_settings(window.ctx.settings)), answer_result)
    window.conversations.refresh()
    window.conversations.open(cid)
    ref = next(r for r in answer_result.references if r.span)
    window.show_reference(ref)
    window.message_bar.show_message("note", kind="info")
    node = answer_result.branches[0].nodes[0]
    item = window.reasoning.node_item(node.round, node.position)

    def drawn():
        return (window.chat.transcript.toHtml().lower(), window.passage.body.toHtml().lower(),
                window.message_bar.styleSheet(), item.foreground(COL_FATE).color().name())

    transcript, passage, banner, badge = drawn()
    assert LIGHT.user_background in transcript and LIGHT.highlight_background in passage
    assert LIGHT.banner_info[0] in banner and badge == LIGHT.badge(node.decision)

    window.setPalette(dark_palette())  # the desktop switched to dark: Qt sends PaletteChange
    transcript, passage, banner, badge = drawn()
    assert DARK.user_background in transcript and LIGHT.user_background not in transcript
    assert DARK.highlight_background in passage and DARK.highlight_text in passage
    assert DARK.banner_info[0] in banner and badge == DARK.badge(node.decision)
    assert answer_result.final_content.split("[")[0].strip() in window.chat.transcript.toPlainText()
