"""Query cleanup for keyword search: tokens, stop words, and safe FTS5 MATCH expressions.

User text must never reach FTS5 verbatim: quotes, ``-``, ``:``, ``*``, ``AND``/``NEAR`` and
parentheses are query syntax there, and an unbalanced quote is a syntax error. We split the
text into word tokens ourselves, drop stop words (they add noise to BM25 over short passages
and every one of them matches most of the corpus), and quote each remaining token.
"""

from __future__ import annotations

import re

# Word characters, keeping inner apostrophes/hyphen-free (FTS5's unicode61 splits on them anyway).
_TOKEN = re.compile(r"\w+", re.UNICODE)

# A small English stop list: function words, question words, and the filler of multi-hop
# sub-questions. Content-bearing words (even common ones like "year" or "city") stay.
STOP_WORDS = frozenset(
    """
    a an the and or but nor of in on at to for from by with without about into onto over under
    as is are was were be been being am do does did doing done has have had having
    i me my we our you your he him his she her it its they them their this that these those
    there here what which who whom whose when where why how
    not no yes so than then too very can could would should will shall may might must
    s t d ll m re ve also just only any all some such both each either neither other
    if while until because though although whether
    up down out off again further once
    """.split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (letters and digits, Unicode-aware)."""
    return [t.lower() for t in _TOKEN.findall(text)]


def keywords(text: str) -> list[str]:
    """Tokens of ``text`` minus stop words and duplicates, in first-seen order.

    Falls back to all tokens when the text is nothing but stop words ("Who was it?"), so a
    query always searches for something if it holds any word at all.
    """
    tokens = tokenize(text)
    kept = [t for t in tokens if t not in STOP_WORDS and t != "_"]
    seen: set[str] = set()
    unique = []
    for t in kept or tokens:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def fts_match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the quoted keywords of ``text``; None if it has none.

    Each token is wrapped in double quotes (a quoted string is a plain phrase in FTS5, so
    ``AND``, ``NEAR``, ``-`` or ``*`` inside it are just text). Tokens come from ``\\w+`` so
    they never contain a double quote themselves.
    """
    words = keywords(text)
    return quoted_or(words) if words else None


def quoted_or(words: list[str]) -> str:
    """``"a" OR "b"``: FTS5 phrases OR-ed; ``words`` must come from ``tokenize``/``keywords``."""
    return " OR ".join(f'"{w}"' for w in words)


_PARENTHETICAL = re.compile(r"\s*\([^)]*\)")


def title_match(title: str, query_tokens: list[str]) -> float:
    """How well a passage title is named by a query: 1.0 when the whole title (less a
    disambiguating "(...)" suffix) occurs in the query as a phrase, else the share of its
    content words that occur in the query, halved (a partial name is weaker evidence).

    Entity-centric questions name the article that answers them ("Where was Marie Curie
    born?"), so this is a strong, cheap signal on encyclopedic corpora.
    """
    words = tokenize(_PARENTHETICAL.sub("", title)) or tokenize(title)
    if not words or not query_tokens:
        return 0.0
    n = len(words)
    for i in range(len(query_tokens) - n + 1):
        if query_tokens[i:i + n] == words:
            return 1.0
    content = [w for w in words if w not in STOP_WORDS] or words
    present = set(query_tokens)
    return 0.5 * sum(w in present for w in content) / len(content)
