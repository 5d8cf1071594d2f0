"""DPR-style TSV: ``id<TAB>text<TAB>title`` per line, optional header, csv-style quoting.

DPR's ``psgs_w100.tsv`` has the header ``id text title`` and quotes fields that contain
quotes (``"..."`` with ``""`` inside). A header with those names in another order is honoured.
"""

from __future__ import annotations

from typing import Iterator

from ...types import Passage
from .base import Source

_DEFAULT_ORDER = ("id", "text", "title")


class TsvSource(Source):
    format = "tsv"

    def passages(self) -> Iterator[Passage]:
        order = _DEFAULT_ORDER
        for number, line in self.iter_lines():
            if not line.strip():
                continue
            fields = [_unquote(f) for f in line.split("\t")]
            if number == 1 and {f.strip().lower() for f in fields} == set(_DEFAULT_ORDER):
                order = tuple(f.strip().lower() for f in fields)
                continue
            if len(fields) != 3:
                self.problems.skip(self.path, number,
                                   f"expected 3 tab-separated fields (id, text, title), got {len(fields)}")
                continue
            record = dict(zip(order, fields))
            pid, text, title = record["id"].strip(), record["text"].strip(), record["title"].strip()
            if not pid:
                self.problems.skip(self.path, number, "empty id")
                continue
            if not text:
                self.problems.skip(self.path, number, f"empty text for id {pid!r}")
                continue
            yield from self.record_passages(pid, title, text, f"{self.path}:{number}")


def _unquote(field: str) -> str:
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field
