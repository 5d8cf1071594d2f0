"""JSON lines, one passage per line: ``{"id": ..., "title": ..., "text": ...}``.

``contents`` (Pyserini) is accepted for ``text`` and ``_id`` (BEIR) for ``id``. A record
without an id gets one from its content (``passage_pid``); a document-sized text is chunked.
"""

from __future__ import annotations

from typing import Iterator

from ...types import Passage
from ..ids import passage_pid
from .base import Source


class JsonlSource(Source):
    format = "jsonl"

    def passages(self) -> Iterator[Passage]:
        for number, record in self.iter_json_lines():
            if not isinstance(record, dict):
                self.problems.skip(self.path, number, f"expected a JSON object, got {type(record).__name__}")
                continue
            text = record.get("text", record.get("contents"))
            title = record.get("title", "")
            if not isinstance(text, str) or not text.strip():
                self.problems.skip(self.path, number, 'missing or empty "text"')
                continue
            if not isinstance(title, str):
                self.problems.skip(self.path, number, '"title" must be a string')
                continue
            raw_id = record.get("id", record.get("_id"))
            if raw_id is None or str(raw_id).strip() == "":
                pid = passage_pid(title.strip(), text.strip())
            else:
                pid = str(raw_id).strip()
            yield from self.record_passages(pid, title.strip(), text.strip(), f"{self.path}:{number}")
