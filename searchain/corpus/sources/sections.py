"""What Wikipedia-like articles share, whatever their markup: which sections are not prose, and
how a passage names its section.

Reference lists, bibliographies and link lists are kept out of a corpus: their "passages" are
strings of citations ("ISBN 978-...", "Retrieved 3 May 2019") that match many queries by their
words and answer none.
"""

from __future__ import annotations

import re

# Compared case-folded, after trimming spaces and trailing punctuation; a plural or "and" form
# of one of these ("Notes and references", "Sources cited") is caught by NON_PROSE_WORDS.
NON_PROSE_SECTIONS = frozenset({
    "references", "notes", "citations", "sources", "bibliography", "further reading",
    "external links", "see also", "footnotes", "works cited", "notes and references",
    "references and notes", "general references", "explanatory notes", "cited sources",
    "sources cited", "selected bibliography", "external link", "reference", "note",
    # Simple English Wikipedia's names for See also and External links
    "related pages", "other websites", "other website",
    # the same sections in the largest other Wikipedias (de, fr, es, it, pt, nl)
    "einzelnachweise", "literatur", "weblinks", "siehe auch", "anmerkungen", "quellen", "belege",
    "références", "notes et références", "liens externes", "voir aussi", "bibliographie",
    "referencias", "enlaces externos", "véase también", "bibliografía", "notas",
    "collegamenti esterni", "voci correlate", "bibliografia", "referências",
    "ligações externas", "veja também", "externe links", "zie ook", "bronnen",
})
NON_PROSE_WORDS = re.compile(r"^(?:(?:selected|further|general|etymological|additional) "
                             r"bibliography|notes?|references?|citations?|sources?|bibliography|footnotes?|"
                             r"further reading|external links?|see also|works cited)"
                             r"(?:\s*(?:and|&|,)\s*(?:notes?|references?|citations?|sources?|"
                             r"bibliography|footnotes?|further reading|external links?))*$")
SECTION_SEPARATOR = " > "


def is_non_prose(heading: str) -> bool:
    """True for a section heading whose section is citations or links, not article text."""
    name = " ".join(heading.split()).strip(" :.").casefold()
    return name in NON_PROSE_SECTIONS or bool(NON_PROSE_WORDS.match(name))


def section_path(headings: list[str]) -> str:
    """The heading path a passage records, e.g. ``"History > Early years"``."""
    return SECTION_SEPARATOR.join(h for h in headings if h)
