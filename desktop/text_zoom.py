"""Text size of the reading views (transcript, passage, whole document), remembered across runs.

View > Bigger text / Smaller text / Actual size change the point size of the views that show
answers and passages, not of menus and buttons; the offset from the desktop's font size is kept
in ``settings.ui["text_zoom"]``, so the next start reads at the same size.
"""

from __future__ import annotations

from typing import Any, Iterable

from PySide6.QtWidgets import QApplication, QWidget

MIN_ZOOM, MAX_ZOOM = -4, 16  # points from the desktop's size: 5 pt at the least for a 9 pt font
SETTING = "text_zoom"


class TextZoom:
    """Applies one point-size offset to a set of widgets and records it in ``ui``."""

    def __init__(self, ui: dict[str, Any], widgets: Iterable[QWidget] = (), *, restore: bool = True):
        """``restore``: start at the size saved in ``ui`` (applied by ``apply()``), else at 0."""
        self.ui = ui
        self.widgets: list[QWidget] = list(widgets)
        self.base = QApplication.font().pointSizeF()
        saved = ui.get(SETTING, 0) if restore else 0
        self.zoom = _clamp(saved) if isinstance(saved, int) and not isinstance(saved, bool) else 0

    @property
    def point_size(self) -> float:
        return self.base + self.zoom

    def add(self, widget: QWidget) -> None:
        """Follow the current size from now on (e.g. a document window opened later)."""
        self.widgets.append(widget)
        self._apply_to(widget)

    def step(self, delta: int | None) -> float:
        """Bigger (+1), smaller (-1) or back to the desktop's size (None); returns the point size."""
        self.zoom = 0 if delta is None else _clamp(self.zoom + delta)
        self.ui[SETTING] = self.zoom
        self.apply()
        return self.point_size

    def apply(self) -> None:
        self.widgets = [w for w in self.widgets if _alive(w)]
        for widget in self.widgets:
            self._apply_to(widget)

    def _apply_to(self, widget: QWidget) -> None:
        font = widget.font()
        font.setPointSizeF(self.point_size)
        widget.setFont(font)


def _clamp(zoom: int) -> int:
    return max(MIN_ZOOM, min(MAX_ZOOM, zoom))


def _alive(widget: QWidget) -> bool:
    try:
        widget.objectName()  # raises once Qt has deleted the C++ object (a closed dialog)
    except RuntimeError:
        return False
    return True
