"""The multi-hop QA sets in ``../shared/eval``: pool every paragraph, one passage each.

IRCoT HotpotQA records hold ``contexts[]`` of ``{title, paragraph_text}``; MuSiQue records hold
``paragraphs[]`` of the same shape. A paragraph's pid is ``passage_pid(title, text)``, so the
same paragraph seen in several questions is stored once (the store counts the repeats as
duplicates) and a benchmark can find a gold paragraph by computing its pid.
"""

from __future__ import annotations

from typing import Iterator

from ...types import Passage
from ..ids import passage_pid
from .base import Source


class _MultiHopSource(Source):
    list_key = ""

    def passages(self) -> Iterator[Passage]:
        for number, record in self.iter_json_lines():
            paragraphs = record.get(self.list_key) if isinstance(record, dict) else None
            if not isinstance(paragraphs, list):
                self.problems.skip(self.path, number, f'no "{self.list_key}" list in this record')
                continue
            for k, para in enumerate(paragraphs):
                title = para.get("title") if isinstance(para, dict) else None
                text = para.get("paragraph_text") if isinstance(para, dict) else None
                if not isinstance(title, str) or not isinstance(text, str) or not text.strip():
                    self.problems.skip(self.path, number,
                                       f"{self.list_key}[{k}] lacks a title or paragraph_text")
                    continue
                pid = passage_pid(title, text)
                yield Passage(self.corpus, pid, title, text, f"{self.path}:{number}", title, 0, len(text))


class HotpotQASource(_MultiHopSource):
    format = "hotpotqa"
    list_key = "contexts"


class MuSiQueSource(_MultiHopSource):
    format = "musique"
    list_key = "paragraphs"
