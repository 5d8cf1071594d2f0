"""Tracing: the final content with ``[n]`` marks, each resolved to a stored passage and span.

After the loop, the LLM is shown the [Query]-[Answer] pairs of the correct reasoning path
(numbered 1..len(path)) and writes ``[Final Content]`` with a mark after each piece of knowledge.
Every mark is then checked: one naming a node that does not exist, or a node with no supporting
passage, is dropped, never shown. A text with no mark at all gets marks where the verified answers
appear in it (``cite_by_answers``). If the model writes nothing usable (no text, or no mark that
resolves while the path has evidence), the final content is composed from the path itself.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..metrics import not_equal
from ..types import Passage
from .chain.parser import answer_tail, parse_chain, rewrite_marks, short_answer, strip_marks
from .parts import locate
from .result import SOURCE_IR_COMPLETED, SOURCE_IR_CORRECTED, Node, Reference

# How the final answer is written (``reasoning.final_answer``): see ``SearChainEngine._write_final``.
FINAL_ANSWERS = ("passages", "tracing")
# Whether the ``passages`` final answer lists the path's checked steps (``reasoning.final_steps``).
FINAL_STEPS = ("off", "found", "disagree", "always")

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


def _resolvable(path: Sequence[Node], n: int, extra: int = 0) -> bool:
    # Only a node its passage backs may cite it: a mark on an unconfirmed answer would show a
    # passage that does not say it as if it did. Marks after the path name the passages
    # retrieved for the question itself (``extra`` of them), cited as passages, as RAG does.
    return (1 <= n <= len(path) and path[n - 1].supported) or len(path) < n <= len(path) + extra


def resolve_marks(final_content: str, path: Sequence[Node], extra: int = 0) -> tuple[str, list[int]]:
    """Rewrite marks so each names one resolvable node ("[3,4]" -> "[3][4]", bad ones dropped).

    Returns the new text and the node numbers cited, in order of first appearance.
    """
    text, cited = rewrite_marks(final_content, lambda n: n if _resolvable(path, n, extra) else None)
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", text)
    return " ".join(text.split()), cited


# A closing answer longer than this reads as a sentence of its own, not "the answer is X".
SHORT_ANSWER_WORDS = 6
_ANSWER_LEAD = re.compile(r"^(?:so\s+)?(?:the\s+)?(?:final\s+)?answer\s+(?:is|would be)\s*:?\s*", re.IGNORECASE)
_TRAILING = " \t.,;:…"


def _tidy(answer: str) -> str:
    """An answer as a sentence part: one line, no "the answer is" lead, no trailing dots or ellipsis."""
    text = " ".join((answer or "").split())
    text = _ANSWER_LEAD.sub("", text).rstrip(_TRAILING)
    return text


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _closing(final: str) -> str:
    if len(final.split()) <= SHORT_ANSWER_WORDS:
        return f"So the final answer is {final}."
    return f"{_capitalised(final)}."


def compose_from_path(path: Sequence[Node], answer_hint: str = "") -> str:
    """A final content built from the path: one marked statement per node with an answer
    ("Who wrote X? Jane Doe [1].") and a closing "So the final answer is ...".

    ``answer_hint`` (what the model's unusable tracing output called the answer) closes it when
    it is short and whole; a cut-off sentence ("... written by ...") never does.
    """
    sentences = []
    last_answer = ""
    for n, node in enumerate(path, start=1):
        answer = _tidy(node.answer or "")
        if not answer:
            continue
        last_answer = answer
        mark = f" [{n}]" if node.supported else ""
        query = node.query.strip().rstrip("?").strip()
        sentences.append(f"{query}? {_capitalised(answer)}{mark}.")
    hint = _tidy(answer_hint)
    whole = hint and "..." not in answer_hint and "…" not in answer_hint
    final = hint if whole and len(hint.split()) <= SHORT_ANSWER_WORDS else last_answer
    # A long last answer already stated as the last statement needs no closing copy.
    if final and not (final == last_answer and len(final.split()) > SHORT_ANSWER_WORDS):
        sentences.append(_closing(final))
    return " ".join(sentences)


def build_references(path: Sequence[Node], cited: Sequence[int], passages: Sequence[Passage] = (),
                     question: str = "", answer: str = "") -> list[Reference]:
    """The references of the marks ``cited``, listed by number as the app shows them (the text
    may cite [2] before [1]: its marks are node numbers, which stay those of the tree)."""
    refs = []
    for n in sorted(set(cited)):
        if n > len(path):  # a passage retrieved for the question: its span is where the answer is
            passage = passages[n - len(path) - 1]
            refs.append(Reference(mark=n, passage=passage, span=locate(answer, passage.text) if answer else None,
                                  query=question, answer=answer))
            continue
        node = path[n - 1]
        refs.append(Reference(mark=n, passage=node.passage, span=node.span, query=node.query,
                              answer=node.answer or ""))
    return refs


def states_an_answer(text: str) -> bool:
    """Whether a final content says something: not empty, and not a closing "So the final answer
    is [2]." whose answer is only a mark (a 1.5B model wrote that on HotpotQA, which left the
    user, and the eval, with "So the final answer is." as the answer)."""
    tail = answer_tail(text)
    return bool((strip_marks(text) if tail is None else tail).strip(_TRAILING))


def cite_by_answers(text: str, path: Sequence[Node]) -> str:
    """``text`` with a mark after the first place each supported node's answer appears in it.

    Small models often write a good closing sentence with no mark at all ("So the final answer is
    Adriana Trigiani, who ... lives in Greenwich Village, New York City."): the answers the path
    verified are in it, so the marks can be put where they belong instead of throwing the
    sentence away."""
    inserts: list[tuple[int, int]] = []
    for n, node in enumerate(path, start=1):
        answer = _tidy(node.answer or "")
        if not answer or not _resolvable(path, n):
            continue
        found = re.search(r"(?<!\w)" + re.escape(answer) + r"(?!\w)", text, re.IGNORECASE)
        if found and all(end != found.end() for end, _ in inserts):
            inserts.append((found.end(), n))
    for end, n in sorted(inserts, reverse=True):
        text = f"{text[:end]} [{n}]{text[end:]}"
    return text


def finalize(model_text: str | None, path: Sequence[Node], passages: Sequence[Passage] = (),
             question: str = "") -> tuple[str, list[Reference]]:
    """Final content (every mark resolvable) and its references, from the model's tracing output.
    ``passages``: those retrieved for the question itself, numbered after the path's nodes."""
    content = extract_final_content(model_text or "")
    extra = len(passages)
    text, cited = resolve_marks(content, path, extra)
    has_evidence = any(node.supported for node in path) or extra > 0
    if states_an_answer(text) and has_evidence and not cited and len(strip_marks(text).split()) > SHORT_ANSWER_WORDS:
        # A sentence of the model's own, unmarked: cite it. A bare answer ("Toronto") is better
        # shown as the path composed, each step with its mark, closed by that answer.
        text, cited = resolve_marks(cite_by_answers(text, path), path, extra)
    usable = states_an_answer(text) and (cited or not has_evidence)
    if not usable:
        hint = short_answer(content) if strip_marks(content) else ""
        text, cited = resolve_marks(compose_from_path(path, hint), path)
    return text, build_references(path, cited, passages, question, short_answer(text) if extra else "")


def renumber_marks(text: str, marks: Sequence[int]) -> str:
    """``text`` with each ``[k]`` naming source k rewritten to the mark it stands for; marks
    naming no source are dropped."""
    return rewrite_marks(text, lambda k: marks[k - 1] if 1 <= k <= len(marks) else None)[0]


def passage_sources(path: Sequence[Node], passages: Sequence[Passage]) -> tuple[list[Passage], list[int]]:
    """The question's own passages first (as RAG reads them), then each supported node's passage
    not among them; with the mark each number stands for (question passage j -> len(path) + j)."""
    sources = list(passages)
    marks = [len(path) + j for j in range(1, len(passages) + 1)]
    seen = {p.pid for p in passages}
    for n, node in enumerate(path, start=1):
        if node.supported and node.passage.pid not in seen:
            seen.add(node.passage.pid)
            sources.append(node.passage)
            marks.append(n)
    return sources, marks


def checked_steps(path: Sequence[Node], sources: Sequence[Passage]) -> list[tuple[str, str, int]]:
    """The path's supported steps as ``(query, answer, number of its passage in sources)``, as
    the ``passages`` final answer lists them (``PromptBook.rag(steps=)``)."""
    number = {p.pid: k for k, p in enumerate(sources, start=1)}
    return [(n.query, n.answer, number[n.passage.pid]) for n in path
            if n.supported and n.answer and n.passage.pid in number]


def ir_found_otherwise(stated_text: str, path: Sequence[Node]) -> bool:
    """Whether IR itself answered the path's last checked step (completed or corrected it) and
    the answer ``stated_text`` states lacks that answer: what the passages gave, not what the
    model believed, is missing from the draft ("In which town was the author of The Salt Ledger
    born?": IR completed "Lisk", the draft said "Varrow")."""
    steps = [n for n in path if n.supported and n.answer]
    return (bool(steps) and steps[-1].source in (SOURCE_IR_COMPLETED, SOURCE_IR_CORRECTED)
            and not_equal(steps[-1].answer, short_answer(stated_text)))


def path_disagrees(stated_text: str, path: Sequence[Node]) -> bool:
    """Whether the path's last checked answer is missing from the answer ``stated_text`` states
    (its "So the final answer is ..."): the chain found something the draft did not conclude."""
    steps = [n for n in path if n.supported and n.answer]
    return bool(steps) and not_equal(steps[-1].answer, short_answer(stated_text))
