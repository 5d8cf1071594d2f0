"""Conversations as JSON (export/import), checked field by field on the way in.

The JSON mirrors the dataclasses (``dataclasses.asdict``), so an exported answer imports back
equal to the original. Reading never trusts the file: every field is checked for presence and
type, and a bad one raises ``StoreError`` naming its place, e.g.
``conversations[2].messages[1].result.references[0].span``.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from ..errors import StoreError
from ..reasoning.result import AnswerResult, Branch, Node, Reference
from ..types import Passage
from .records import ROLES, STATES, Message, RunInfo

FORMAT_NAME = "searchain-conversations"
FORMAT_VERSION = 1


def message_to_json(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "state": message.state,
        "created_at": message.created_at,
        "updated_at": message.updated_at,
        "error": message.error,
        "run": asdict(message.run) if message.run is not None else None,
        "result": _lists(asdict(message.result)) if message.result is not None else None,
    }


def _lists(value: Any) -> Any:
    """Tuples (spans, parents) as lists, so the document is exactly what JSON would give back."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


class _Checked:
    """Typed access to one JSON object, with its location for error messages."""

    def __init__(self, data: Any, where: str):
        if not isinstance(data, dict):
            raise _bad(where, "must be an object", data)
        self.data = data
        self.where = where

    def _get(self, key: str, optional: bool):
        if key not in self.data:
            if optional:
                return None
            raise StoreError(f"Cannot import: {self.where}.{key} is missing.",
                             hint="Import files written by `searchain chats export --format json`.")
        return self.data[key]

    def text(self, key: str, optional: bool = False, default: str | None = None) -> str | None:
        value = self._get(key, optional or default is not None)
        if value is None and (optional or default is not None):
            return default
        if not isinstance(value, str):
            raise _bad(f"{self.where}.{key}", "must be a string", value)
        if not _encodable(value):  # JSON's "\\ud800" escape: SQLite cannot store it (UTF-8)
            raise _bad(f"{self.where}.{key}", "must be text (it holds a lone surrogate)", value)
        return value

    def integer(self, key: str) -> int:
        value = self._get(key, False)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(f"{self.where}.{key}", "must be a whole number", value)
        return value

    def number(self, key: str, optional: bool = False) -> float | None:
        value = self._get(key, optional)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _bad(f"{self.where}.{key}", "must be a number", value)
        return float(value)

    def flag(self, key: str) -> bool:
        value = self._get(key, False)
        if not isinstance(value, bool):
            raise _bad(f"{self.where}.{key}", "must be true or false", value)
        return value

    def pair(self, key: str) -> tuple[int, int] | None:
        value = self._get(key, True)
        if value is None:
            return None
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or any(isinstance(v, bool) or not isinstance(v, int) for v in value)):
            raise _bad(f"{self.where}.{key}", "must be two whole numbers or null", value)
        return (value[0], value[1])

    def array(self, key: str) -> list:
        value = self._get(key, False)
        if not isinstance(value, list):
            raise _bad(f"{self.where}.{key}", "must be a list", value)
        return value

    def child(self, key: str, optional: bool = False) -> "_Checked | None":
        value = self._get(key, optional)
        if value is None and optional:
            return None
        return _Checked(value, f"{self.where}.{key}")

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.text(key)
        if value not in allowed:
            raise _bad(f"{self.where}.{key}", f"must be one of {', '.join(allowed)}", value)
        return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bad(where: str, what: str, value: Any) -> StoreError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return StoreError(f"Cannot import: {where} {what}, got {shown}.",
                      hint="Fix that value in the file, or export it again from SearChain.")


def _passage(c: _Checked) -> Passage:
    # url and section are absent from exports written before #33, page from those before #34
    page = c.data.get("page")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise _bad(f"{c.where}.page", "must be a page number (1 or more) or null", page)
    return Passage(corpus=c.text("corpus"), pid=c.text("pid"), title=c.text("title"),
                   text=c.text("text"), source=c.text("source", default=""),
                   doc_id=c.text("doc_id", default=""), start=c.integer("start"), end=c.integer("end"),
                   # Kept by the database since v6 (url, section) and v7 (page).
                   url=c.text("url", default=""), section=c.text("section", default=""),
                   page=page)


def _node(c: _Checked) -> Node:
    passage = c.child("passage", optional=True)
    return Node(
        round=c.integer("round"), position=c.integer("position"), query=c.text("query"),
        llm_answer=c.text("llm_answer", optional=True), unsolved=c.flag("unsolved"),
        reader_answer=c.text("reader_answer", optional=True),
        confidence=c.number("confidence", optional=True), decision=c.text("decision"),
        source=c.text("source"), passage=_passage(passage) if passage else None,
        span=c.pair("span"),
    )


def _items(c: _Checked, key: str) -> list[_Checked]:
    return [_Checked(item, f"{c.where}.{key}[{i}]") for i, item in enumerate(c.array(key))]


def result_from_json(c: _Checked) -> AnswerResult:
    branches = []
    for b in _items(c, "branches"):
        branches.append(Branch(round=b.integer("round"), raw_text=b.text("raw_text"),
                               nodes=[_node(n) for n in _items(b, "nodes")],
                               parent=b.pair("parent"), feedback=b.text("feedback", optional=True),
                               final_content=b.text("final_content", optional=True)))
    references = [
        Reference(mark=r.integer("mark"), passage=_passage(r.child("passage")), span=r.pair("span"),
                  query=r.text("query"), answer=r.text("answer"))
        for r in _items(c, "references")
    ]
    return AnswerResult(
        question=c.text("question"), mode=c.text("mode"), final_content=c.text("final_content"),
        answer=c.text("answer"), references=references,
        path=[_node(n) for n in _items(c, "path")], branches=branches, rounds=c.integer("rounds"),
        stop_reason=c.text("stop_reason"), prompt_tokens=c.integer("prompt_tokens"),
        completion_tokens=c.integer("completion_tokens"), seconds=c.number("seconds"),
        # Absent from exports written before follow-ups were rewritten.
        standalone_question=c.text("standalone_question", optional=True),
        tokens_by_phase=_tokens_by_phase(c),
    )


def _tokens_by_phase(c: _Checked) -> dict[str, list[int]]:
    """``{phase: [prompt, completion]}``; absent from exports written before it was counted."""
    value = c.data.get("tokens_by_phase")
    if value is None:
        return {}
    where = f"{c.where}.tokens_by_phase"
    if not isinstance(value, dict):
        raise _bad(where, "must be an object", value)
    out = {}
    for phase, counts in value.items():
        if (not isinstance(counts, list) or len(counts) != 2
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in counts)):
            raise _bad(f"{where}.{phase}", "must be two whole numbers", counts)
        out[str(phase)] = list(counts)
    return out


def run_from_json(c: _Checked) -> RunInfo:
    return RunInfo(model=c.text("model"), corpus=c.text("corpus"), reader=c.text("reader"),
                   mode=c.text("mode"), theta=c.number("theta"), alpha=c.number("alpha"),
                   r_max=c.integer("r_max"), top_k=c.integer("top_k"), retriever=c.text("retriever"))


def message_from_json(c: _Checked) -> Message:
    run = c.child("run", optional=True)
    result = c.child("result", optional=True)
    created = c.text("created_at")
    return Message(
        id=0, role=c.choice("role", ROLES), content=c.text("content"),
        state=c.choice("state", STATES), created_at=created,
        run=run_from_json(run) if run else None,
        result=result_from_json(result) if result else None,
        error=c.text("error", optional=True), updated_at=c.text("updated_at", default=created),
    )


def conversations_from_json(data: Any) -> list[tuple[str, str, str, list[Message]]]:
    """(title, created_at, updated_at, messages) per conversation in an export document."""
    doc = _Checked(data, "file")
    fmt = doc.text("format")
    if fmt != FORMAT_NAME:
        raise _bad("file.format", f"must be {FORMAT_NAME!r}", fmt)
    version = doc.integer("version")
    if version > FORMAT_VERSION:
        raise StoreError(
            f"Cannot import: the file is format version {version}; this SearChain reads up to "
            f"version {FORMAT_VERSION}.", hint="Update SearChain, then import again.")
    out = []
    for i, conv in enumerate(doc.array("conversations")):
        c = _Checked(conv, f"conversations[{i}]")
        created = c.text("created_at")
        out.append((c.text("title"), created, c.text("updated_at", default=created),
                    [message_from_json(m) for m in _items(c, "messages")]))
    return out
