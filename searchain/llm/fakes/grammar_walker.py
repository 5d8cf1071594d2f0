"""An LLM stand-in that answers every call with text its GBNF grammar accepts: no model needed.

``bench strategies`` uses it to measure what each answering strategy costs around the model
(calls, rounds, prompt words, engine time) on real benchmark questions, where a ``ScriptedLLM``
would need a script per question and strategy. It reads the grammar each call carries and walks
it once:

- at a choice it takes the first alternative for the first ``closing_after`` calls since
  ``reset()``, then the last one. Our grammars list the "go on" option first (another sub-question,
  ``[Evidence]: Empty``, AddDecomp) and the closing one last (``[Final Answer]``, an
  ``[Unsolved Query]``), so a strategy runs a few steps and then concludes, as a model would;
- an optional part is taken while no more than ``optional_depth`` optionals enclose it (with the
  default 1: a chain of two nodes, two GEEK alternatives, so exploration branches), other
  repetitions take their minimum;
- a free-text field (a rule that begins with ``lead``, the grammars' "visible first character")
  is filled with ``filler``, the call number and the field's number ("step 3.2"), cut to the
  field's cap, so sub-questions differ and duplicate detection does not end every run at once.

A call without a grammar (RAG, the free-text final answer) gets ``free_text``. Only the GBNF
subset our grammars use is read: literals, character classes, rule names, groups, ``|`` and the
suffixes ``? * + {m,n}``; anything else raises ``ValueError``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Sequence

from ...events import CancelToken
from ..base import ChatMessage, Completion, GenerationParams, TokenCallback, Usage

_TOKEN = re.compile(r'\s*(?:(::=)|("(?:\\.|[^"\\])*")|(\[(?:\\.|[^\]\\])*\])|([A-Za-z][\w-]*)'
                    r'|(\{\d+(?:,\d*)?\})|([()|?*+]))')
# What each of _TOKEN's groups is, by index.
_RULE_SEP, _LITERAL, _CLASS, _NAME, _COUNT, _SYMBOL = range(6)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_CANDIDATES = "x1a .-"  # what a character class is asked to accept, in this order


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


@dataclass(frozen=True)
class _Class:
    negated: bool
    ranges: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str) -> "_Class":
        body, negated = text[1:-1], text.startswith("[^")
        if negated:
            body = body[1:]
        chars = [_ESCAPES.get(c[1], c[1]) if c.startswith("\\") else c
                 for c in re.findall(r"\\.|.", body, re.S)]
        ranges, i = [], 0
        while i < len(chars):
            if i + 2 < len(chars) and chars[i + 1] == "-":
                ranges.append((chars[i], chars[i + 2]))
                i += 3
            else:
                ranges.append((chars[i], chars[i]))
                i += 1
        return cls(negated, tuple(ranges))

    def pick(self) -> str:
        for c in _CANDIDATES + "".join(lo for lo, _ in self.ranges):
            inside = any(lo <= c <= hi for lo, hi in self.ranges)
            if inside != self.negated:
                return c
        raise ValueError("character class accepts none of the walker's characters")


def _bounds(suffix: str) -> tuple[int, int | None]:
    if suffix in ("?", "*", "+"):
        return (1 if suffix == "+" else 0), (1 if suffix == "?" else None)
    low, _, high = suffix[1:-1].partition(",")
    return int(low), (int(low) if not _ else int(high) if high else None)


def _refs(node) -> list[str]:
    """The rule names an expression tree refers to."""
    kind = node[0]
    if kind == "ref":
        return [node[1]]
    if kind == "rep":
        return _refs(node[1])
    if kind in ("seq", "alt"):
        return [name for child in node[1] for name in _refs(child)]
    return []


class Grammar:
    """A parsed GBNF grammar: ``rules`` maps a name to its expression tree."""

    def __init__(self, text: str):
        self.rules: dict[str, tuple] = {}
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                self._rule(line)
        if "root" not in self.rules:
            raise ValueError("grammar has no root rule")
        undefined = {name for expr in self.rules.values() for name in _refs(expr)} - set(self.rules)
        if undefined:
            raise ValueError(f"grammar uses rules it never defines: {', '.join(sorted(undefined))}")

    def _rule(self, line: str) -> None:
        tokens, pos = [], 0
        while pos < len(line):
            m = _TOKEN.match(line, pos)
            if m is None:
                if line[pos:].strip():
                    raise ValueError(f"GBNF the walker cannot read: {line[pos:]!r}")
                break
            tokens.append(next((i, g) for i, g in enumerate(m.groups()) if g is not None))
            pos = m.end()
        if len(tokens) < 2 or tokens[0][0] != _NAME or tokens[1][0] != _RULE_SEP:
            raise ValueError(f"not a rule line: {line!r}")
        expr, rest = self._alternatives(tokens[2:])
        if rest:
            raise ValueError(f"unbalanced rule: {line!r}")
        self.rules[tokens[0][1]] = expr

    def _alternatives(self, tokens):
        options = []
        seq, tokens = self._sequence(tokens)
        options.append(seq)
        while tokens and tokens[0] == (_SYMBOL, "|"):
            seq, tokens = self._sequence(tokens[1:])
            options.append(seq)
        return ("alt", options), tokens

    def _sequence(self, tokens):
        items = []
        while tokens and tokens[0] not in ((_SYMBOL, "|"), (_SYMBOL, ")")):
            kind, text = tokens[0]
            if text == "(":
                item, tokens = self._alternatives(tokens[1:])
                if not tokens or tokens[0] != (_SYMBOL, ")"):
                    raise ValueError("unclosed group")
                tokens = tokens[1:]
            elif kind == _LITERAL:
                item, tokens = ("lit", _unescape(text[1:-1])), tokens[1:]
            elif kind == _CLASS:
                item, tokens = ("cls", _Class.parse(text)), tokens[1:]
            elif kind == _NAME:
                item, tokens = ("ref", text), tokens[1:]
            else:
                raise ValueError(f"unexpected {text!r}")
            if tokens and (tokens[0][0] == _COUNT or tokens[0][1] in ("?", "*", "+")):
                item, tokens = ("rep", item, *_bounds(tokens[0][1])), tokens[1:]
            items.append(item)
        return ("seq", items), tokens


class GrammarWalkerLLM:
    """The ``LLM`` protocol, answered by walking each call's grammar (see the module docstring).

    Usage counts are words, as ``ScriptedLLM``'s. ``calls`` counts calls since ``reset()``.
    """

    def __init__(self, *, closing_after: int = 2, optional_depth: int = 1, filler: str = "step",
                 free_text: str = "So the final answer is unknown.", name: str = "grammar-walker"):
        self.closing_after = closing_after
        self.optional_depth = optional_depth
        self.filler = filler
        self.free_text = free_text
        self.name = name
        self.calls = 0
        self.total_calls = 0
        self._lock = threading.Lock()
        self._parsed: dict[str, Grammar] = {}

    supports_grammar = True

    def reset(self) -> None:
        """Start a new question: the next calls take first alternatives again."""
        with self._lock:
            self.calls = 0

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        return self._reply(len(prompt.split()), params, on_token)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(), *,
             on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        return self._reply(sum(len(m["content"].split()) for m in messages), params, on_token)

    def close(self) -> None:
        pass

    def walk(self, grammar_text: str, call: int) -> str:
        """The one output this walker writes for ``grammar_text`` on call number ``call``."""
        grammar = self._parsed.get(grammar_text)
        if grammar is None:
            grammar = self._parsed[grammar_text] = Grammar(grammar_text)
        last = call > self.closing_after
        out: list[str] = []
        fields = [0]

        def expand(node, depth=0, optionals=0):
            if depth > 200:
                raise ValueError("grammar recursion too deep for the walker")
            kind = node[0]
            if kind == "lit":
                out.append(node[1])
            elif kind == "cls":
                out.append(node[1].pick())
            elif kind == "rep":
                optional = node[2] == 0 and node[3] == 1
                times = 1 if optional and optionals < self.optional_depth else node[2]
                for _ in range(times):
                    expand(node[1], depth + 1, optionals + optional)
            elif kind == "seq":
                items, i = node[1], 0
                while i < len(items):
                    if items[i] == ("ref", "lead") and i + 1 < len(items) and items[i + 1][0] == "rep":
                        # A free-text field: "lead" then up to ``high`` more characters.
                        high = items[i + 1][3]
                        fields[0] += 1
                        text = f"{self.filler} {call}.{fields[0]}"
                        out.append(text if high is None else text[: 1 + high])
                        i += 2
                        continue
                    expand(items[i], depth + 1, optionals)
                    i += 1
            elif kind == "alt":
                expand(node[1][-1 if last else 0], depth + 1, optionals)
            else:  # ref
                expand(grammar.rules[node[1]], depth + 1, optionals)

        expand(grammar.rules["root"])
        return "".join(out)

    def _reply(self, prompt_words: int, params: GenerationParams, on_token: TokenCallback | None) -> Completion:
        with self._lock:
            self.calls += 1
            self.total_calls += 1
            call = self.calls
        text = self.walk(params.grammar, call) if params.grammar else self.free_text
        if on_token is not None:
            on_token(text)
        return Completion(text=text, usage=Usage(prompt_words, prompt_words, len(text.split())), finish_reason="stop")
