"""Tracing: the final content with ``[n]`` marks, each resolved to a stored passage and span.

After the loop, the LLM is shown the [Query]-[Answer] pairs of the correct reasoning path
(numbered 1..len(path)) and writes ``[Final Content]`` with a mark after each piece of knowledge.
Every mark is then checked: one naming a node that does not exist, or a node with no supporting
passage, is dropped, never shown. If the model writes nothing usable (no text, or no mark that
resolves while the path has evidence), the final content is composed from the path itself.
"""

from __future__ import annotations

import re
from typing import Sequence

from .parser import marks_in, parse_chain, short_answer, strip_marks
from .result import Node, Reference

_FINAL_MARKER = re.compile(r"\[\s*final\s+content\s*\]\s*:?", re.IGNORECASE)


def extract_final_content(text: str) -> str:
    """The text after the first ``[Final Content]`` marker (or all of it), tidied."""
    m = _FINAL_MARKER.search(text or "")
    if m is None:
        parsed = parse_chain(text or "")
        body = parsed.final_content if parsed.final_content else (text or "")
    else:
        body = text[m.end() :]
        # Stop where the model starts a new example or a new chain.
        cut = re.search(r"\[\s*(?:question|query\s*\d*|final\s+content)\s*\]", body, re.IGNORECASE)
        if cut:
            body = body[: cut.start()]
    return " ".join(body.split()).strip()


def _resolvable(path: Sequence[Node], n: int) -> bool:
    # Only a node its passage backs may cite it: a mark on an unconfirmed answer would show a
    # passage that does not say it as if it did.
    return 1 <= n <= len(path) and path[n - 1].supported


def resolve_marks(final_content: str, path: Sequence[Node]) -> tuple[str, list[int]]:
    """Rewrite marks so each names one resolvable node ("[3,4]" -> "[3][4]", bad ones dropped).

    Returns the new text and the node numbers cited, in order of first appearance.
    """
    cited: list[int] = []
    pieces: list[str] = []
    last = 0
    for m, numbers in marks_in(final_content):
        pieces.append(final_content[last : m.start()])
        good = [n for n in numbers if _resolvable(path, n)]
        pieces.append("".join(f"[{n}]" for n in dict.fromkeys(good)))
        for n in good:
            if n not in cited:
                cited.append(n)
        last = m.end()
    pieces.append(final_content[last:])
    text = "".join(pieces)
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)
    return " ".join(text.split()), cited


def compose_from_path(path: Sequence[Node], answer_hint: str = "") -> str:
    """A final content built from the path: one marked statement per node with an answer."""
    sentences = []
    last_answer = ""
    for n, node in enumerate(path, start=1):
        answer = (node.answer or "").strip()
        if not answer:
            continue
        last_answer = answer.rstrip(".")
        mark = f" [{n}]" if node.supported else ""
        sentences.append(f"{node.query.rstrip('?').strip()}: {last_answer}{mark}.")
    final = answer_hint.strip() or last_answer
    if final:
        sentences.append(f"So the final answer is {final}.")
    return " ".join(sentences)


def build_references(path: Sequence[Node], cited: Sequence[int]) -> list[Reference]:
    refs = []
    for n in cited:
        node = path[n - 1]
        refs.append(Reference(mark=n, passage=node.passage, span=node.span, query=node.query,
                              answer=node.answer or ""))
    return refs


def finalize(model_text: str | None, path: Sequence[Node]) -> tuple[str, list[Reference]]:
    """Final content (every mark resolvable) and its references, from the model's tracing output."""
    content = extract_final_content(model_text or "")
    text, cited = resolve_marks(content, path)
    has_evidence = any(node.supported for node in path)
    usable = bool(strip_marks(text)) and (cited or not has_evidence)
    if not usable:
        hint = short_answer(content) if strip_marks(content) else ""
        text, cited = resolve_marks(compose_from_path(path, hint), path)
    return text, build_references(path, cited)
