"""The measurements behind the document libraries (docs/corpus.md), on generated documents
with known text.

PDF: pypdfium2 against pypdf, pages per second and text quality per layout (plain, two
columns, a Unicode TrueType font). Quality is difflib's ratio between the known and the
extracted word sequences after NFKC (so a ligature glyph read as "fi" counts as right), and
"exact" counts pages whose words come back exactly.

HTML: our selectolax reader (as shipped: main content, chrome dropped) against trafilatura's
extractor, pages per second, the share of body sentences kept and of chrome sentences let
through, for each kind of page ``make.html_pages`` writes.
"""

from __future__ import annotations

import difflib
import random
import re
import statistics
import time
import unicodedata
from pathlib import Path

from .make import html_pages, pdf_cases


def _words(text: str) -> list[str]:
    return unicodedata.normalize("NFKC", text).split()


def _timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _pdfium_pages(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _pypdf_pages(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() for page in PdfReader(path).pages]


def compare_pdf(folder: Path, pages: int, repeats: int) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    cases = pdf_cases(folder, pages)
    libraries = {"pypdfium2": _pdfium_pages, "pypdf": _pypdf_pages}
    out: dict = {"pages_per_case": pages}
    for name, extract in libraries.items():
        try:
            extract(next(iter(cases.values()))[0])  # warm-up, and: is it installed?
        except ImportError:
            out[name] = "not installed"
            continue
        rows = {}
        for case, (path, known) in cases.items():
            seconds, got = _timed(lambda: extract(path), repeats)
            ratios = [difflib.SequenceMatcher(None, _words(k), _words(g), autojunk=False).ratio()
                      for k, g in zip(known, got)]
            rows[case] = {"pages_per_s": round(len(known) / seconds, 1),
                          "quality": round(statistics.mean(ratios), 4),
                          "exact_pages": sum(_words(k) == _words(g) for k, g in zip(known, got))}
        out[name] = rows
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.findall(r"[^.]+\.", text) if len(s.split()) >= 3]


def _flat(text: str) -> str:
    return " ".join(text.replace("*", "").replace("#", "").split())


def _ours(html: str) -> str:
    from ...corpus.sources.documents.html import read_html

    return read_html(html.encode("utf-8")).text


def _trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, include_tables=True, include_comments=False) or ""


def compare_html(pages: int, repeats: int) -> dict:
    docs = html_pages(random.Random(2), pages)
    out: dict = {"pages": pages}
    for name, extract in (("selectolax (ours)", _ours), ("trafilatura", _trafilatura)):
        try:
            extract(docs[0][0])
        except ImportError:
            out[name] = "not installed"
            continue
        seconds, texts = _timed(lambda: [extract(html) for html, _, _ in docs], repeats)
        kinds = ("semantic", "div", "chapter")  # html_pages's three kinds, in turn
        kept: dict[str, list[float]] = {k: [] for k in kinds}
        leaked: dict[str, list[float]] = {k: [] for k in kinds[:2]}
        for i, ((html, body, chrome), text) in enumerate(zip(docs, texts)):
            flat, kind = _flat(text), kinds[i % 3]
            sentences = _sentences(body)
            kept[kind].append(sum(s in flat for s in sentences) / max(1, len(sentences)))
            if chrome:
                bits = _sentences(chrome)
                leaked[kind].append(sum(b in flat for b in bits) / max(1, len(bits)))
        out[name] = {"pages_per_s": round(pages / seconds, 1),
                     **{f"body_kept_{k}": round(statistics.mean(v), 4) for k, v in kept.items()},
                     **{f"chrome_let_through_{k}": round(statistics.mean(v), 4) for k, v in leaked.items()}}
    return out
