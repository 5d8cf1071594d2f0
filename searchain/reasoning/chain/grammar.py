"""GBNF grammars that force the Chain-of-Query format with llama.cpp.

The grammar is the format contract made hard: numbered ``[Query n]`` lines, each followed by an
``[Answer n]`` or an ``[Unsolved Query]`` line, then one ``[Final Content]:`` line. Every free-text
field has a character cap and the number of nodes is capped, so even a model with random weights
finishes in bounded output and always ends with a ``[Final Content]:`` line. Field text cannot
contain newlines or square brackets (except ``[n]`` marks in the final content), which keeps the
output unambiguous for ``parser.parse_chain``.
"""

from __future__ import annotations

from ...errors import ConfigError

DEFAULT_MAX_NODES = 6
DEFAULT_QUERY_CHARS = 120
DEFAULT_ANSWER_CHARS = 200
DEFAULT_FINAL_CHARS = 500
DEFAULT_STANDALONE_CHARS = 300

# A field starts with a visible character: no empty or blank queries/answers.
LEAD_RULE = r"lead ::= [^\n\r\[\] \t]"
QCHAR_RULE = r"qchar ::= [^\n\r\[\]]"


def check_range(name: str, value: int, low: int, high: int) -> None:
    """Refuse a grammar setting outside ``low..high`` with a ``ConfigError`` that says the range."""
    if not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"Grammar setting {name}={value!r} is out of range.", hint=f"Use {low}..{high}.")


def coq_grammar(
    max_nodes: int = DEFAULT_MAX_NODES,
    *,
    query_chars: int = DEFAULT_QUERY_CHARS,
    answer_chars: int = DEFAULT_ANSWER_CHARS,
    final_chars: int = DEFAULT_FINAL_CHARS,
    start: int = 1,
    header_written: bool = False,
    may_end: bool = False,
) -> str:
    """GBNF for a CoQ of 1..``max_nodes`` nodes ending with a ``[Final Content]:`` line.

    ``start`` > 1 gives the rest of a chain whose first ``start - 1`` steps are written: nodes
    ``start``..``max_nodes`` (at least one), then the final line. Writing a chain step by step
    (``reasoning.loop.stepwise``) continues the model's reply under this grammar.
    ``header_written``: the reply already ends with step ``start``'s ``[Query n]:`` (which the
    grammar would force anyway, so the writer writes it rather than have it decoded); the grammar
    begins with the space before the query. ``may_end``: no step is required, the final line
    may come at once (a chain continued after IR's answer was written into it)."""
    check_range("max_nodes", max_nodes, 1, 9)
    check_range("start", start, 1, max_nodes)
    check_range("query_chars", query_chars, 8, 2000)
    check_range("answer_chars", answer_chars, 1, 4000)
    check_range("final_chars", final_chars, 8, 8000)
    if header_written and may_end:
        raise ConfigError("A chain whose next step's header is written cannot end before that step.",
                          hint="Pass header_written or may_end, not both.")
    lines = []
    # root ::= node1 (node2 (node3)?)? final -- nested optionals keep the numbering in order.
    chain = f"node{max_nodes}"
    for n in range(max_nodes - 1, start - 1, -1):
        chain = f"node{n} ({chain})?"
    lines.append(f"root ::= ({chain})? final" if may_end else f"root ::= {chain} final")
    for n in range(start, max_nodes + 1):
        header = '" "' if header_written and n == start else f'"[Query {n}]: "'
        lines.append(
            f'node{n} ::= {header} query "\\n" '
            f'( "[Answer {n}]: " answer | "[Unsolved Query]: " query ) "\\n"'
        )
    lines += [
        f"query ::= lead qchar{{0,{query_chars - 1}}}",
        f"answer ::= lead qchar{{0,{answer_chars - 1}}}",
        f'final ::= "[Final Content]: " lead fchar{{0,{final_chars - 1}}} "\\n"?',
        LEAD_RULE,
        QCHAR_RULE,
        r'fchar ::= [^\n\r\[\]] | "[" [1-9] "]"',
    ]
    return "\n".join(lines) + "\n"


def final_content_grammar(max_marks_node: int = 9, *, final_chars: int = DEFAULT_FINAL_CHARS) -> str:
    """GBNF for the tracing answer: one ``[Final Content]:`` line with ``[n]`` marks."""
    check_range("max_marks_node", max_marks_node, 1, 9)
    check_range("final_chars", final_chars, 8, 8000)
    return "\n".join(
        [
            f'root ::= "[Final Content]: " lead fchar{{0,{final_chars - 1}}} "\\n"?',
            LEAD_RULE,
            f'fchar ::= [^\\n\\r\\[\\]] | "[" [1-{max_marks_node}] "]"',
        ]
    ) + "\n"


def standalone_grammar(max_chars: int = DEFAULT_STANDALONE_CHARS) -> str:
    """GBNF for a follow-up's rewrite: one ``[Question]: ...`` line (see ``followup.py``)."""
    check_range("max_chars", max_chars, 8, 2000)
    return "\n".join([f'root ::= "[Question]: " lead qchar{{0,{max_chars - 1}}} "\\n"?', LEAD_RULE, QCHAR_RULE]) + "\n"
