"""Wikitext to plain text: enough of MediaWiki's markup removed for retrieval.

``wikitext_sections`` splits an article at its headings, drops the sections that are not prose
(References, Notes, See also, ...: ``sections.NON_PROSE_SECTIONS``, with their subsections) and
strips each of the rest; ``strip_wikitext`` is the text of those sections joined.

Removes comments, ``<ref>``s, templates ``{{...}}``, tables ``{|...|}``, file/category links,
headings, bold/italic quotes, HTML tags and list markers (markup written escaped, ``&lt;ref&gt;``
or ``&amp;nbsp;``, counts as markup; ``<nowiki>`` text is literal); ``[[target|label]]`` becomes
``label`` and ``[http://x label]`` becomes ``label``. Nested constructs are removed innermost
first. A few inline templates whose words are the sentence's (``{{convert|212|km}}``,
``{{lang|fr|...}}``, ``{{nowrap|...}}``, ``{{circa|1781}}``) keep their words; brackets left empty
by removed templates ("( )", "(; )") are dropped. Not a full parser: docs/corpus.md compares it
with mwparserfromhell on article pages (``searchain bench wikitext``), and why it stays.
"""

from __future__ import annotations

import html
import re

from .sections import is_non_prose, section_path

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
# A <ref>'s text stops at the next <ref or </ref: an unclosed <ref name=x> no longer takes the
# prose up to the next ref's end, and a page of unclosed tags costs linear time, not quadratic.
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>[^<]*(?:<(?!/?ref\b)[^<]*)*</ref\s*>", re.I)
_DROPPED_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|score|graph|mapframe|imagemap)\b[^>]*>"
    r"[^<]*(?:<(?!/?\1\b)[^<]*)*</\1\s*>", re.I)
# <nowiki> text is literal: its braces, brackets and bars open nothing (escaped here, unescaped below).
# Its text stops at the next <nowiki> or </nowiki>: a page of unclosed ones costs linear time.
_NOWIKI = re.compile(r"<nowiki\s*>([^<]*(?:<(?!/?nowiki\b)[^<]*)*)</nowiki\s*>", re.I)
_NOWIKI_ESCAPES = str.maketrans({"{": "&#123;", "}": "&#125;", "[": "&#91;", "]": "&#93;", "|": "&#124;",
                                 "<": "&lt;", ">": "&gt;", "'": "&#39;", "=": "&#61;"})
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
# A table opens with "{|" and closes with "|}", each at the start of a line (a "|}" inside a
# cell, as in [[Bracket|}]], closes nothing); the innermost table goes first.
_TABLE = re.compile(r"^[ \t:]*\{\|(?:(?!^[ \t:]*\{\|)[\s\S])*?^[ \t]*\|\}[^\n]*", re.M)
# A table written inside one line (a page whose line breaks were lost) holds a row marker "|-".
# Neither part runs past another "{|", so a line full of "{|" costs linear time, not quadratic.
_INLINE_TABLE = re.compile(r"\{\|(?:(?!\{\||\|\})[^\n])*?\|-(?:(?!\{\|)[^\n])*?\|\}")
_TABLE_ROW = re.compile(r"^[ \t]*(?:\{\|[^\n]*|\|[^\n]*|![^\n]*!![^\n]*)$", re.M)
# A link's text may hold single brackets: [[File:x.png|Bicyclo[1.1.0]butane ...]].
_LINK = re.compile(r"\[\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\]")
_UNCLOSED_FILE = re.compile(r"\[\[[ \t]*(?:file|image)[ \t]*:[^\n]*", re.I)
# A list item that is a citation (a bibliography, a list of editions): ISBN, ISSN, DOI, OCLC,
# LCCN with a number. List items only: prose that mentions an ISBN stays.
_CITATION_ITEM = re.compile(r"^[*#:;]+[^\n]*?(?:\bISBN[\s:\-]*[0-9]|\bISSN[\s:]*[0-9]|\bdoi:\s*10\.|"
                            r"\bOCLC[\s:]*[0-9]|\bLCCN[\s:]*[0-9])[^\n]*$", re.M)
_CITATION_WORDS = ("ISBN", "ISSN", "doi:", "OCLC", "LCCN")  # one is in every _CITATION_ITEM
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*\s*([^\]]*)\]")
_HEADING = re.compile(r"^[ \t]*=+[^\n]*=+[ \t]*$", re.M)
_QUOTES = re.compile(r"'{2,}")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_MAGIC = re.compile(r"__[A-Z]+__")
_LIST_MARKER = re.compile(r"^[*#:;]+[ \t]*", re.M)
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
_DROPPED_LINK_PREFIXES = ("file:", "image:", "category:", "media:", "wikipedia:", "wp:", "help:",
                          "template:", "portal:", "special:", "user:", "talk:",
                          # Category, File and Image in the larger Wikipedias' languages
                          "kategorie:", "catégorie:", "categoría:", "categoria:", "categorie:",
                          "kategoria:", "kategori:", "категория:", "категорія:", "カテゴリ:", "分类:",
                          "分類:", "luokka:", "kategória:", "thể loại:", "분류:", "تصنيف:", "رده:",
                          "קטגוריה:", "κατηγορία:", "kategorija:", "kategooria:", "kategorio:",
                          "datei:", "bild:", "fichier:", "archivo:", "imagen:", "immagine:",
                          "ficheiro:", "arquivo:", "imagem:", "bestand:", "afbeelding:", "plik:",
                          "grafika:", "файл:", "изображение:", "ファイル:", "画像:", "文件:", "檔案:",
                          "tiedosto:", "fájl:", "dosya:", "soubor:", "fil:", "berkas:", "tập tin:",
                          "파일:", "ملف:", "پرونده:", "קובץ:", "αρχείο:", "fișier:", "fitxer:",
                          "dosiero:", "attēls:")
# A link whose target starts "Word:" (no space after the colon, unlike "Star Trek: Voyager") is
# in a namespace; in a language not listed above it is still a file when it has an image option,
# and a category when it stands alone on its line.
_NAMESPACED = re.compile(r"^:?[^\W\d_]+:\S")
_PLAIN_LINK = re.compile(r"\[\[[^\[\]\n]*\]\]")
_IMAGE_OPTION = re.compile(r"^\s*(?:thumb|thumbnail|frame|framed|frameless|border|left|right|center|"
                           r"centre|none|upright\b.*|\d*x?\d+\s*px|alt=.*|link=.*|mini|miniatur|"
                           r"vignette|miniatura)\s*$", re.I)
_INTERWIKI = re.compile(r"^:?[a-z]{2,3}(?:-[a-z]+)?:")
_SECTION_HEADING = re.compile(r"^[ \t]*(={2,6})[ \t]*(.+?)[ \t]*\1[ \t]*$", re.M)
_EMPTY_BRACKETS = re.compile(r"\((?:\s|[,;:\u2013\u2014-])*\)|\[\s*\]")
_BRACKET_EDGE_IN = re.compile(r"\((?:[ \t]*[,;:])+[ \t]*(?=[^\s)])")
_BRACKET_EDGE_OUT = re.compile(r"(?<=[^\s(])[ \t]*(?:[,;:][ \t]*)+\)")
# Every match of _BRACKET_EDGE_OUT holds this; searching for it first is ~10x cheaper than the
# lookbehind's scan (a quarter of all stripping time on real pages), and most texts have none.
_EDGE_OUT_CANDIDATE = re.compile(r"[,;:][ \t,;:]*\)")
_PUNCT_LINE = re.compile(r"^[ \t]*(?:[.,;:+\u2013\u2014-][ \t]*)+$", re.M)  # what a removed formula leaves
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([,.;:!?)])")
# Inline templates whose words belong to the sentence: name -> which positional arguments to keep.
_KEEP_WORDS = {"convert": (0, 1), "cvt": (0, 1), "lang": (-1,), "nowrap": (0,), "nobr": (0,),
               "ill": (0,), "interlanguage link": (0,), "abbr": (0,), "sic": (0,), "as of": (0,),
               "small": (0,), "em": (0,), "circa": (0,), "c.": (0,)}
_KEEP_TEXT = {"circa": "c.", "c.": "c.", "nbsp": " ", "ndash": "–", "mdash": "—", "snd": " – ",
              "spaced ndash": " – ", "dash": "–", "as of": "As of"}
_MAX_PASSES = 50  # nesting depth we unwrap; real articles nest far less


def strip_wikitext(markup: str) -> str:
    """Plain text of one article's prose sections, paragraphs separated by blank lines."""
    return "\n\n".join(text for _, text in wikitext_sections(markup))


def wikitext_sections(markup: str, strip=None) -> list[tuple[str, str]]:
    """``[(section_path, plain_text), ...]`` of an article's prose, lead section first (path "").

    Sections with no text left after stripping are left out. ``strip`` (wikitext -> text) is
    this module's stripper unless given (``searchain bench wikitext`` passes another parser's).
    """
    strip = strip or _strip_markup
    markup = _COMMENT.sub("", markup)  # a commented-out heading is no heading
    out: list[tuple[str, str]] = []
    headings: list[str] = []
    skip_level: int | None = None
    start, path = 0, ""
    for match in _SECTION_HEADING.finditer(markup):
        if skip_level is None:
            _append(out, path, strip(markup[start:match.start()]))
        level = len(match.group(1))
        name = _strip_markup(match.group(2))
        start = match.end()
        if skip_level is not None and level > skip_level:
            continue
        skip_level = level if is_non_prose(name) else None
        del headings[level - 2:]
        headings += [""] * (level - 2 - len(headings)) + [name]
        path = section_path(headings)
    if skip_level is None:
        _append(out, path, strip(markup[start:]))
    return out


def _append(out: list, path: str, text: str) -> None:
    if text:
        out.append((path, text))


def _strip_markup(markup: str) -> str:
    """Plain text of a piece of wikitext (no section handling)."""
    # Markup written escaped (&lt;ref&gt;, as wikiextractor also reads it) is markup: removed below;
    # so is an escaped entity (&amp;nbsp;), which would otherwise survive as "&nbsp;".
    text = markup.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    text = _COMMENT.sub("", text)
    text = _NOWIKI.sub(lambda m: m.group(1).translate(_NOWIKI_ESCAPES), text)
    text = _REF.sub("", text)
    text = _DROPPED_TAGS.sub("", text)
    text = _remove_nested(_TEMPLATE, text, _template_words)
    # Each pattern below runs only on text holding a literal every match of it holds: the same
    # text, without scanning every line of the ~90 % of sections that have no such markup.
    if "{|" in text:
        text = _remove_nested(_TABLE, text)
        text = _INLINE_TABLE.sub("", text)
    if "|" in text or "!!" in text:
        text = _TABLE_ROW.sub("", text)  # rows of a table that never closed (a "|" line is no prose)
    text = _resolve_links(text)
    text = _UNCLOSED_FILE.sub("", text)  # a file link never closed: its caption to the line's end
    text = _EXTERNAL.sub(lambda m: m.group(1), text)
    if any(word in text for word in _CITATION_WORDS):
        text = _CITATION_ITEM.sub("", text)
    if "=" in text:
        text = _HEADING.sub("", text)
    if "''" in text:
        text = _QUOTES.sub("", text)
    text = _TAG.sub("", text)
    text = _MAGIC.sub("", text)
    text = html.unescape(text).replace("\xa0", " ")
    text = _LIST_MARKER.sub("", text)
    lines = [(_SPACES.sub(" ", line) if "  " in line or "\t" in line else line).strip()
             for line in text.split("\n")]
    text = "\n".join(lines)
    text = _BLANK_LINES.sub("\n\n", text)
    # Leftovers of broken markup (an unclosed template) are not worth keeping.
    text = re.sub(r"\{\{|\}\}|\[\[|\]\]", "", text)
    if _EDGE_OUT_CANDIDATE.search(text):
        text = _BRACKET_EDGE_OUT.sub(")", text)  # "(Afon Elin; )"
    text = _BRACKET_EDGE_IN.sub("(", text)  # "(; Afon Elin)"
    text = _EMPTY_BRACKETS.sub("", text)  # "( )", "(; )": what removed templates leave
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _BLANK_LINES.sub("\n\n", _PUNCT_LINE.sub("", text))
    text = re.sub(r"[ \t]{2,}", " ", text)
    return text.strip()


def _template_words(match: re.Match) -> str:
    """The words an inline template adds to its sentence ("" for all others: boxes, citations)."""
    name, _, rest = match.group(0)[2:-2].partition("|")
    name = name.strip().lower().replace("_", " ")
    if name.startswith("formatnum:"):
        return name[len("formatnum:"):].strip()
    if name.startswith("lang-"):
        name = "nowrap"  # {{lang-cy|Afon Elin}}: the foreign words are its first argument
    if name not in _KEEP_WORDS and name not in _KEEP_TEXT:
        return ""
    args = [a.strip() for a in rest.split("|") if "=" not in a] if rest else []
    words = [args[i] for i in _KEEP_WORDS.get(name, ()) if -len(args) <= i < len(args)]
    return " ".join(filter(None, [_KEEP_TEXT.get(name, ""), *words]))


def _remove_nested(pattern: re.Pattern, text: str, replace=lambda m: "") -> str:
    for _ in range(_MAX_PASSES):
        text, n = pattern.subn(replace, text)
        if not n:
            break
    return text


def _alone_on_line(match: re.Match) -> bool:
    """True when the rest of the link's line is only other links (a row of category links)."""
    text = match.string
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    rest = text[start:match.start()] + " " + text[match.end():end if end >= 0 else len(text)]
    return not _PLAIN_LINK.sub("", rest).strip(" \t*#:;")


def _resolve_links(text: str) -> str:
    def replace(match: re.Match) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if ":" not in target:  # an article's link: every dropped, namespaced or interwiki one has ":"
            return label.rsplit("|", 1)[-1] if label else (target.split("#")[0] or target)
        low = target.strip().lower()
        if low.startswith(_DROPPED_LINK_PREFIXES) or _INTERWIKI.match(low):
            return ""
        if _NAMESPACED.match(low) and not low.startswith(":") and (
                any(_IMAGE_OPTION.match(p) for p in label.split("|")) if label
                else _alone_on_line(match)):
            return ""
        if label:
            return label.rsplit("|", 1)[-1]
        if low.startswith(":") and low[1:].startswith(_DROPPED_LINK_PREFIXES):
            return target.split(":", 2)[-1]  # [[:Category:People from X]]: a link, shown by name
        return target.lstrip(":").split("#")[0] or target
    if "[[" not in text:
        return text
    for _ in range(_MAX_PASSES):
        text, n = _LINK.subn(replace, text)
        if not n:
            break
    return text
