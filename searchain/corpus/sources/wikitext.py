"""Wikitext to plain text: enough of MediaWiki's markup removed for retrieval.

Removes comments, ``<ref>``s, templates ``{{...}}``, tables ``{|...|}``, file/category links,
headings, bold/italic quotes, HTML tags and list markers; ``[[target|label]]`` becomes
``label`` and ``[http://x label]`` becomes ``label``. Nested constructs are removed innermost
first. Not a full parser (that would be mwparserfromhell): rare markup may leave traces.
"""

from __future__ import annotations

import html
import re

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref\s*>", re.S | re.I)
_DROPPED_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|score|graph|mapframe|imagemap)\b[^>]*>.*?</\1\s*>",
    re.S | re.I)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_TABLE = re.compile(r"\{\|(?:(?!\{\|)[\s\S])*?\|\}")
_LINK = re.compile(r"\[\[([^\[\]]*)\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*\s*([^\]]*)\]")
_HEADING = re.compile(r"^[ \t]*=+[^\n]*=+[ \t]*$", re.M)
_QUOTES = re.compile(r"'{2,}")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_MAGIC = re.compile(r"__[A-Z]+__")
_LIST_MARKER = re.compile(r"^[*#:;]+[ \t]*", re.M)
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
_DROPPED_LINK_PREFIXES = ("file:", "image:", "category:", "media:", "wikipedia:", "wp:", "help:",
                          "template:", "portal:", "special:", "user:", "talk:")
_INTERWIKI = re.compile(r"^:?[a-z]{2,3}(?:-[a-z]+)?:")
_MAX_PASSES = 50  # nesting depth we unwrap; real articles nest far less


def strip_wikitext(markup: str) -> str:
    """Plain text of one article's wikitext, paragraphs separated by blank lines."""
    text = _COMMENT.sub("", markup)
    text = _REF.sub("", text)
    text = _DROPPED_TAGS.sub("", text)
    text = _remove_nested(_TEMPLATE, text)
    text = _remove_nested(_TABLE, text)
    text = _resolve_links(text)
    text = _EXTERNAL.sub(lambda m: m.group(1), text)
    text = _HEADING.sub("", text)
    text = _QUOTES.sub("", text)
    text = _TAG.sub("", text)
    text = _MAGIC.sub("", text)
    text = html.unescape(text).replace("\xa0", " ")
    text = _LIST_MARKER.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    text = "\n".join(lines)
    text = _BLANK_LINES.sub("\n\n", text)
    # Leftovers of broken markup (an unclosed template) are not worth keeping.
    text = re.sub(r"\{\{|\}\}|\[\[|\]\]", "", text)
    return text.strip()


def _remove_nested(pattern: re.Pattern, text: str) -> str:
    for _ in range(_MAX_PASSES):
        text, n = pattern.subn("", text)
        if not n:
            break
    return text


def _resolve_links(text: str) -> str:
    def replace(match: re.Match) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        low = target.strip().lower()
        if low.startswith(_DROPPED_LINK_PREFIXES) or _INTERWIKI.match(low):
            return ""
        if label:
            return label.rsplit("|", 1)[-1]
        return target.lstrip(":").split("#")[0] or target
    for _ in range(_MAX_PASSES):
        text, n = _LINK.subn(replace, text)
        if not n:
            break
    return text
