"""A GBNF grammar whose outputs are exactly the spans of one passage (or ``NOT FOUND``).

The LLM reader sends it with each passage, so a model decoding under it cannot paraphrase,
answer from memory, or copy a few-shot example: every output is a run of the passage's own
pieces (words and punctuation marks) starting at a word. Pieces are joined by the passage's own
separator ("" when the passage has none, one space for any whitespace), so the output is found
in the passage by ``llm_reader.locate_span`` (whitespace-insensitive) and the highlighted span
is ``passage[start:end]``.

Shape, for the pieces p0 p1 ... (rule ``wN`` = "the span goes on from piece N"):

    root ::= " "? ( "NOT FOUND" | w0 | w2 | ... ) "\n"?   # every piece that starts a word
    w0 ::= "Peter" ( " " w1 )?
    w1 ::= "Schmeichel" ( w2 )?                       # no space before "," in the passage
    w2 ::= "," ...

One rule per piece: a passage of a few hundred words gives a grammar of a few hundred short
rules, parsed in milliseconds; decoding checks only the tokens the model picks (sampling.py).
"""

from __future__ import annotations

import re

# Words (letters/digits, with inner apostrophes, hyphens, periods: "O'Neil", "1,000", "U.S.")
# and single punctuation marks: the span may end before a comma or a full stop.
_PIECE = re.compile(r"\w+(?:[’'\-.,]\w+)*|[^\w\s]")
MAX_PASSAGE_PIECES = 1200  # a longer passage is cut: the reader never sees more than its n_ctx


def passage_pieces(passage: str) -> list[tuple[int, int]]:
    """(start, end) of each piece of ``passage``, in order."""
    return [(m.start(), m.end()) for m in _PIECE.finditer(passage)][:MAX_PASSAGE_PIECES]


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def passage_span_grammar(passage: str, not_found: str) -> str | None:
    """The grammar described in the module docstring; None for a passage without words."""
    pieces = passage_pieces(passage)
    starts = [i for i, (s, e) in enumerate(pieces) if passage[s].isalnum() or passage[s] == "_"]
    if not starts:
        return None
    rules = []
    for i, (start, end) in enumerate(pieces):
        body = gbnf_literal(passage[start:end])
        if i + 1 < len(pieces):
            gap = passage[end:pieces[i + 1][0]]
            sep = '" " ' if gap else ""
            body += f" ( {sep}w{i + 1} )?"
        rules.append(f"w{i} ::= {body}")
    alternatives = " | ".join([gbnf_literal(not_found)] + [f"w{i}" for i in starts])
    # A closing newline is allowed (and is the reader's stop sequence): a model that wants to end
    # its line would otherwise be forced to copy on, and pay for it in confidence.
    return "\n".join([f'root ::= " "? ( {alternatives} ) "\\n"?', *rules]) + "\n"
