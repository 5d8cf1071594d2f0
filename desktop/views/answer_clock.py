"""The clock beside the phase line while an answer is built: how long it has taken so far, and
how long answers by this model and strategy usually take on this machine (the median of recent
ones, ``ConversationStore.typical_answer_seconds``), so a user on a slow CPU knows what to expect
before the answer comes: "12 s · usually about 15 s here"."""

from __future__ import annotations

import time
from typing import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

from searchain.units import duration


class AnswerClock(QLabel):
    """``start()`` when an answer begins, ``stop()`` when it ends; ticks once a second."""

    def __init__(self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__("", parent)
        self.setObjectName("answerClock")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setToolTip("Time since the question was sent; 'usually' is the median of this "
                        "model's recent answers with this strategy on this computer.")
        self.setVisible(False)
        self._clock = clock
        self._started: float | None = None
        self.typical: float | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)

    def start(self) -> None:
        self._started, self.typical = self._clock(), None
        self._timer.start()
        self.setVisible(True)
        self.tick()

    def stop(self) -> None:
        self._timer.stop()
        self._started = None
        self.setVisible(False)
        self.setText("")

    def set_typical(self, seconds: float | None) -> None:
        self.typical = seconds
        self.tick()

    def tick(self) -> None:
        if self._started is None:
            return
        text = f"{self._clock() - self._started:.0f} s"
        if self.typical:
            text += f" · usually about {duration(self.typical)} here"
        self.setText(text)
