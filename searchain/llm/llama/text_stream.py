"""Turning generated token bytes into streamed text, with stop sequences.

Tokens are byte pieces: a UTF-8 character may span two tokens, so bytes go through an
incremental decoder. Text that might be the start of a stop sequence is held back from
``on_token`` until it is clear it is not, so a listener never sees any part of a stop string.
"""

from __future__ import annotations

import codecs
from typing import Callable, Sequence


class StopTextStream:
    def __init__(self, stops: Sequence[str], on_token: Callable[[str], None] | None):
        self._stops = tuple(s for s in stops if s)
        self._max_stop = max((len(s) for s in self._stops), default=0)
        self._on_token = on_token
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._text = ""
        self._emitted = 0
        self.stopped = False
        self.stop_text = ""  # the stop sequence that ended the text, once one has

    def feed(self, piece: bytes) -> bool:
        """Add a token's bytes; return True when a stop sequence has just completed."""
        before = len(self._text)
        self._text += self._decoder.decode(piece)
        if self._stops:
            hit = self._find_stop(max(0, before - self._max_stop + 1))
            if hit is not None:
                self.stop_text = next(s for s in self._stops if self._text.startswith(s, hit))
                self._text = self._text[:hit]
                self._emit(len(self._text))
                self.stopped = True
                return True
            self._emit(len(self._text) - self._held_back())
        else:
            self._emit(len(self._text))
        return False

    def finish(self) -> str:
        """Flush what was held back (unless a stop sequence ended the text); return all text."""
        if not self.stopped:
            self._text += self._decoder.decode(b"", final=True)
            self._emit(len(self._text))
        return self._text

    def _find_stop(self, start: int) -> int | None:
        found = [i for i in (self._text.find(s, start) for s in self._stops) if i >= 0]
        return min(found) if found else None

    def _held_back(self) -> int:
        """Length of the longest tail of the text that is a proper prefix of a stop sequence."""
        text = self._text
        for k in range(min(len(text), self._max_stop - 1), 0, -1):
            tail = text[-k:]
            if any(s.startswith(tail) for s in self._stops):
                return k
        return 0

    def _emit(self, upto: int) -> None:
        if upto > self._emitted:
            if self._on_token is not None:
                self._on_token(self._text[self._emitted:upto])
            self._emitted = upto
