"""The app's few own colours, in a light and a dark set, picked from the widget's palette.

Qt follows the desktop's light or dark theme, so text drawn in the palette's colours flips on its
own; colours the app adds (the user's bubble, the passage highlight, banners, decision badges,
greyed notes) must flip with it or they put light text on a light background. Views ask
``colours_for(widget.palette())`` when they draw, and draw again on a palette change.

Pure data apart from reading the palette, so ``render`` stays free of Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchain.reasoning import (
    DECISION_COMPLETED,
    DECISION_CORRECTED,
    DECISION_DUPLICATE,
    DECISION_NO_ANSWER,
    DECISION_NOT_CONFIRMED,
    DECISION_NOT_READ,
    DECISION_PASS,
    DECISION_UNCHECKED,
)
from searchain.reasoning import (  # the GenGround and GEEK fates
    DECISION_EMPTY,
    DECISION_EXTRACTED,
    DECISION_GROUNDED,
    DECISION_SELF_ANSWERED,
    DECISION_UNGROUNDED,
)


@dataclass(frozen=True)
class Colours:
    dark: bool
    muted: str  # secondary text: notes, hints, empty states
    faint: str  # tertiary text: timings, corpus names
    error: str  # error text on the normal background
    warning: str  # "works, but not fully" (Help > Check set-up)
    user_background: str  # the "You" bubble
    highlight_background: str  # the supporting span of a passage
    highlight_text: str
    banner_error: tuple[str, str]  # (background, border)
    banner_info: tuple[str, str]
    badges: dict[str, str] = field(default_factory=dict)  # IR decision -> text colour

    def badge(self, decision: str) -> str:
        return self.badges.get(decision, self.faint)


LIGHT = Colours(
    dark=False, muted="#666666", faint="#737373", error="#c62828", warning="#8a5300", user_background="#e8f0fe",
    highlight_background="#fff59d", highlight_text="#000000",
    banner_error=("#fdecea", "#f5c6cb"), banner_info=("#e8f4fd", "#b6dcf7"),
    badges={DECISION_PASS: "#2e7d32", DECISION_CORRECTED: "#c62828", DECISION_COMPLETED: "#1565c0",
            DECISION_DUPLICATE: "#6d6d6d", DECISION_UNCHECKED: "#737373",
            DECISION_NOT_CONFIRMED: "#8a5300", DECISION_NO_ANSWER: "#8a5300", DECISION_NOT_READ: "#737373",
            DECISION_GROUNDED: "#2e7d32", DECISION_EXTRACTED: "#1565c0", DECISION_SELF_ANSWERED: "#6a1b9a",
            DECISION_EMPTY: "#6d6d6d", DECISION_UNGROUNDED: "#8a5300"},
)

# Every text colour keeps WCAG AA contrast (4.5:1) on its background: white for LIGHT, #1e1e1e
# (a typical dark base) for DARK; DARK uses lighter tints of LIGHT's hues.
DARK = Colours(
    dark=True, muted="#b0b0b0", faint="#9a9a9a", error="#ef9a9a", warning="#ffcc80", user_background="#25354a",
    highlight_background="#6d5e00", highlight_text="#ffffff",
    banner_error=("#4a2326", "#7a3b40"), banner_info=("#1d3346", "#35597a"),
    badges={DECISION_PASS: "#81c784", DECISION_CORRECTED: "#ef9a9a", DECISION_COMPLETED: "#90caf9",
            DECISION_DUPLICATE: "#bdbdbd", DECISION_UNCHECKED: "#9e9e9e",
            DECISION_NOT_CONFIRMED: "#ffcc80", DECISION_NO_ANSWER: "#ffcc80", DECISION_NOT_READ: "#9e9e9e",
            DECISION_GROUNDED: "#81c784", DECISION_EXTRACTED: "#90caf9", DECISION_SELF_ANSWERED: "#ce93d8",
            DECISION_EMPTY: "#bdbdbd", DECISION_UNGROUNDED: "#ffcc80"},
)


def colours_for(palette) -> Colours:
    """The set for a QPalette: dark when its window background is dark."""
    window = palette.color(palette.ColorRole.Window)
    return DARK if window.lightness() < 128 else LIGHT
