"""``searchain bench wikitext (--pages DIR | --source DUMP) [--repeat N] [--json]``: how clean and
how fast our wikitext stripper is, beside mwparserfromhell and wikiextractor on the same pages.

Both strippers run inside the same section handling (``wikitext_sections``: split at headings,
non-prose sections dropped), so the figures compare the markup removal alone. The passages are
chunked as ingest chunks them, then each passage is checked for residue of each kind:

- ``templates``: ``{{`` or ``}}``; ``tables``: ``{|``, ``|}``, ``||``, a ``|-`` or ``!`` line;
- ``links``: ``[[``, ``]]``, ``[http``, a ``File:``/``Category:`` prefix, ``thumb|`` or ``200px``,
  or a line starting ``Word:Capital`` (a category or file link of another language left as text);
- ``tags``: an HTML tag or entity; ``empty_brackets``: ``( )``, ``(; )``, ``[ ]``;
- ``reference_text``: ``ISBN``, ``Retrieved``, ``doi:``, ``access-date`` (citations as prose).

Figures are passages with that residue, per 1,000 passages, and pages per second (best of
``--repeat`` runs), by the wall clock and by this process's CPU time (``cpu_s``, steadier on a
shared machine). ``--pages``: a folder of ``*.wiki`` files (``tests/fixtures/wikitext``);
``--source``: a MediaWiki dump (articles only, ``--limit`` pages). Prints one JSON object.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

RESIDUE = {
    "templates": re.compile(r"\{\{|\}\}"),
    "tables": re.compile(r"\{\||\|\}|\|\||^\s*(?:\|-|!)", re.M),
    "links": re.compile(r"\[\[|\]\]|\[https?:|\b(?:File|Image|Category):|thumb\||\b\d+px\b|"
                       r"^[^\W\d_]+:(?-i:[A-ZÀ-ÖØ-ÞĀ-Ž\u0391-\u03a9\u0410-\u042f])", re.I | re.M),
    "tags": re.compile(r"</?[A-Za-z][^>]*>|&(?:nbsp|amp|lt|gt|quot|#\d+);"),
    "empty_brackets": re.compile(r"\((?:\s|[,;:\u2013-])*\)|\[\s*\]"),
    "reference_text": re.compile(r"\bISBN\b|\bRetrieved\b|\bdoi:|access-date", re.I),
}


def register(sub) -> None:
    p = sub.add_parser("wikitext", help="markup left in passages and pages/s: our stripper vs mwparserfromhell")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--pages", type=Path, help="a folder of .wiki files (one article's wikitext each)")
    where.add_argument("--source", type=Path, help="a MediaWiki XML dump (.xml or .xml.bz2)")
    p.add_argument("--limit", type=int, default=1000, help="pages read from --source (default 1000)")
    p.add_argument("--repeat", type=int, default=5, help="timing runs; the best is kept (default 5)")
    p.add_argument("--json", action="store_true", help="(the output is always one JSON object)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    from ..errors import SearchainError

    pages = _read_pages(args)
    if not pages:
        raise SearchainError("No article pages to measure.",
                             hint="Pass --pages DIR with .wiki files, or --source DUMP.xml[.bz2].")
    print(json.dumps(with_wikiextractor(measure(pages, max(1, args.repeat)), pages, max(1, args.repeat)),
                     indent=1))
    return 0


def measure(pages: list[str], repeat: int = 5) -> dict:
    """``{"pages": n, "ours": {...}, "mwparserfromhell": {...}}`` (the latter only if installed)."""
    from ..corpus.sources.wikitext import wikitext_sections

    out = {"pages": len(pages), "ours": _measure(pages, repeat, wikitext_sections)}
    try:
        import mwparserfromhell  # noqa: F401
    except ImportError:
        out["mwparserfromhell"] = None
        return out
    out["mwparserfromhell"] = _measure(pages, repeat, lambda m: wikitext_sections(m, strip=mwp_strip))
    return out


def with_wikiextractor(out: dict, pages: list[str], repeat: int) -> dict:
    """``out`` plus ``"wikiextractor"``: its ``Extractor.clean_text`` inside our section handling."""
    try:
        from wikiextractor.extract import Extractor  # noqa: F401
    except ImportError:
        out["wikiextractor"] = None
        return out
    from ..corpus.sources.wikitext import wikitext_sections

    out["wikiextractor"] = _measure(pages, repeat, lambda m: wikitext_sections(m, strip=wx_strip))
    return out


def wx_strip(markup: str) -> str:
    """wikiextractor's plain text of a piece of wikitext (no template definitions: templates
    drop, as in ours), paragraphs joined by blank lines."""
    from wikiextractor.extract import Extractor

    paragraphs = Extractor(0, 0, "", "Page", []).clean_text(markup, html_safe=False)
    return "\n\n".join(p.strip() for p in paragraphs if p.strip())


def mwp_strip(markup: str) -> str:
    """mwparserfromhell's plain text (``strip_code``), whitespace tidied as ours is."""
    import mwparserfromhell

    text = mwparserfromhell.parse(markup).strip_code(normalize=True, collapse=True)
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _measure(pages: list[str], repeat: int, sections) -> dict:
    from ..corpus.chunking import chunk_spans

    best = best_cpu = float("inf")
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        docs = [sections(page) for page in pages]
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    passages = [text[s:e] for doc in docs for _, text in doc for s, e in chunk_spans(text)]
    counts = {kind: sum(1 for p in passages if rx.search(p)) for kind, rx in RESIDUE.items()}
    counts["any"] = sum(1 for p in passages if any(rx.search(p) for rx in RESIDUE.values()))
    per_1000 = {kind: round(1000 * n / max(1, len(passages)), 1) for kind, n in counts.items()}
    return {"passages": len(passages), "pages_per_s": round(len(pages) / best, 1),
            "cpu_s": round(best_cpu, 3), "pages_per_cpu_s": round(len(pages) / max(best_cpu, 1e-9), 1),
            "residue_passages": counts, "residue_per_1000_passages": per_1000,
            "examples": {kind: next((p[:160] for p in passages if rx.search(p)), None)
                         for kind, rx in RESIDUE.items() if counts[kind]}}


def _read_pages(args) -> list[str]:
    if args.pages is not None:
        return [f.read_text(encoding="utf-8") for f in sorted(args.pages.glob("*.wiki"))]
    import bz2
    import xml.etree.ElementTree as ET

    opener = bz2.open if args.source.read_bytes()[:3] == b"BZh" else open
    pages: list[str] = []
    with opener(args.source, "rb") as fh:
        for _, elem in ET.iterparse(fh):
            if elem.tag.rsplit("}", 1)[-1] != "page":
                continue
            fields = {c.tag.rsplit("}", 1)[-1]: c for c in elem.iter()}
            text = fields.get("text")
            ns = fields.get("ns")
            if text is not None and text.text and (ns is None or ns.text == "0") \
                    and not text.text.lstrip()[:9].upper().startswith("#REDIRECT"):
                pages.append(text.text)
            elem.clear()
            if len(pages) >= args.limit:
                break
    return pages
