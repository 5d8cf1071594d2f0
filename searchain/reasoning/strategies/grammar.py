"""GBNF grammars for the GenGround and GEEK strategies (the formats of ``parse.py``).

Same rules as ``chain/grammar.py``: every field starts with a visible character, holds no newline or
square bracket and has a character cap, so even a small or random-weight model ends in bounded
output that parses. Choices (actions, "Empty", passage numbers, yes/no) are literal alternatives.
"""

from __future__ import annotations

from ..chain.grammar import LEAD_RULE, QCHAR_RULE, check_range

FIELD_CHARS = 160
EVIDENCE_CHARS = 240
REASONING_CHARS = 300


def _field(name: str, chars: int) -> str:
    return f"{name} ::= lead qchar{{0,{chars - 1}}}"


def _finish(lines: list[str]) -> str:
    return "\n".join(lines + [LEAD_RULE, QCHAR_RULE]) + "\n"


def deduce_grammar(chars: int = FIELD_CHARS, *, yes_no: bool = False) -> str:
    """GenGround's answer deduction: a sub-question and its answer, or the final answer
    (``yes_no``: a final answer is yes or no)."""
    check_range("chars", chars, 8, 2000)
    final = '( "yes" | "no" )' if yes_no else "text"
    return _finish([
        f'root ::= ( "[Sub-question]: " text "\\n[Answer]: " text | "[Final Answer]: " {final} ) "\\n"?',
        _field("text", chars),
    ])


def final_answer_grammar(chars: int = FIELD_CHARS, *, yes_no: bool = False) -> str:
    """One ``[Final Answer]:`` line (``yes_no``: the answer is yes or no)."""
    check_range("chars", chars, 8, 2000)
    if yes_no:
        return 'root ::= "[Final Answer]: " ( "yes" | "no" ) "\\n"?\n'
    return _finish(['root ::= "[Final Answer]: " text "\\n"?', _field("text", chars)])


def ground_grammar(batch_size: int, chars: int = FIELD_CHARS, evidence_chars: int = EVIDENCE_CHARS) -> str:
    """GenGround's grounding: ``[Evidence]: Empty``, or evidence from passage n and the revision."""
    check_range("batch_size", batch_size, 1, 9)
    check_range("chars", chars, 8, 2000)
    check_range("evidence_chars", evidence_chars, 8, 4000)
    return _finish([
        f'root ::= ( "[Evidence]: Empty" | "[Evidence " [1-{batch_size}] "]: " evidence '
        f'"\\n[Revised Answer]: " text ) "\\n"?',
        _field("evidence", evidence_chars),
        _field("text", chars),
    ])


def action_grammar(actions: tuple[str, ...]) -> str:
    """GEEK's action selection: one ``[Action]:`` line naming one of ``actions``."""
    if not actions:
        raise ValueError("action_grammar needs at least one action")
    choice = " | ".join(f'"{a}"' for a in actions)
    return f'root ::= "[Action]: " ( {choice} ) "\\n"?\n'


def decomp_grammar(options: int, chars: int = FIELD_CHARS) -> str:
    """GEEK's AddDecomp: 1..``options`` numbered sub-questions, each with a pseudo-answer."""
    check_range("options", options, 1, 9)
    check_range("chars", chars, 8, 2000)
    chain = f"opt{options}"
    for n in range(options - 1, 0, -1):
        chain = f"opt{n} ({chain})?"
    lines = [f"root ::= {chain}"]
    for n in range(1, options + 1):
        lines.append(f'opt{n} ::= "[Sub-question {n}]: " text "\\n[Pseudo Answer {n}]: " text "\\n"')
    return _finish(lines + [_field("text", chars)])


def extract_grammar(passages: int, chars: int = FIELD_CHARS) -> str:
    """GEEK's extractor: a fact from passage n, or ``[Fact]: Unknown``."""
    check_range("passages", passages, 1, 9)
    check_range("chars", chars, 8, 2000)
    return _finish([
        f'root ::= ( "[Fact]: Unknown" | "[Fact from " [1-{passages}] "]: " text ) "\\n"?',
        _field("text", chars),
    ])


def fact_grammar(chars: int = FIELD_CHARS) -> str:
    """GEEK's SelfAnswer: one ``[Fact]:`` line."""
    return _finish(['root ::= "[Fact]: " text "\\n"?', _field("text", chars)])


def conclude_grammar(*, yes_no: bool, chars: int = FIELD_CHARS, reasoning_chars: int = REASONING_CHARS) -> str:
    """GEEK's FinalAnswer: the facts summarised, then the answer (yes/no for implicit questions)."""
    check_range("chars", chars, 8, 2000)
    check_range("reasoning_chars", reasoning_chars, 8, 4000)
    answer = '( "yes" | "no" )' if yes_no else "text"
    return _finish([
        f'root ::= "[Reasoning]: " reasoning "\\n[Final Answer]: " {answer} "\\n"?',
        _field("reasoning", reasoning_chars),
        _field("text", chars),
    ])
