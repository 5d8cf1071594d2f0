"""Generated test documents with known text: PDFs (fpdf2) and saved web pages.

fpdf2 is a writer the tests use too (the ``dev`` extra); the benchmark says so when it is
missing rather than failing on an import.
"""

from __future__ import annotations

import random
from pathlib import Path

from ...errors import SearchainError

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
_VOCAB = ("the of and to in is was for on that with as by at from his her an which also were are "
          "river mountain city council library theorem protein market harbour engine winter festival "
          "railway treaty language museum orchestra glacier senate province valley bridge").split()


def prose(rng: random.Random, words: int) -> str:
    """Sentence-shaped filler: whole sentences of 8-20 words, about ``words`` in all."""
    out: list[str] = []
    while len(out) < words:
        length = rng.randint(8, 20)
        sentence = [rng.choice(_VOCAB) for _ in range(length)]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        out += sentence
    return " ".join(out)


def _fpdf():
    try:
        from fpdf import FPDF
    except ImportError as exc:
        raise SearchainError(
            "This benchmark writes its PDFs with fpdf2, which is not installed.",
            hint="pip install fpdf2 (it is in the dev extra: pip install -e '.[dev]')") from exc
    return FPDF


def write_pdf(path: Path, pages: list[str], *, outline: dict[int, list[tuple[int, str]]] | None = None,
              title: str | None = None, font: Path | None = None, columns: int = 1,
              password: str | None = None) -> Path:
    """A PDF whose page k (0-based) shows ``pages[k]`` (wrapped lines, one or two columns);
    ``outline[k]`` lists ``(level, title)`` headings (level 0 = top) started on page k, each
    printed as a line before the text; ``password`` encrypts it. The benchmark and the tests'
    documents both come from here."""
    pdf = _fpdf()()
    pdf.set_auto_page_break(False)
    if font is not None:
        pdf.add_font("body", fname=str(font))
        pdf.set_font("body", size=9)
    else:
        pdf.set_font("Helvetica", size=9)
    if title:
        pdf.set_title(title)
    for k, text in enumerate(pages):
        pdf.add_page()
        for level, heading in (outline or {}).get(k, []):
            pdf.start_section(heading, level=level)
            pdf.multi_cell(0, 5, heading, new_x="LMARGIN", new_y="NEXT")
        if not text:
            continue
        if columns == 1:
            pdf.multi_cell(0, 4, text, new_x="LMARGIN", new_y="NEXT")
        else:
            words = text.split()
            top = pdf.get_y()
            pdf.multi_cell(90, 4, " ".join(words[:len(words) // 2]))
            pdf.set_xy(110, top)
            pdf.multi_cell(90, 4, " ".join(words[len(words) // 2:]))
    if password:
        from fpdf.enums import EncryptionMethod

        pdf.set_encryption(owner_password=password + "-owner", user_password=password,
                           encryption_method=EncryptionMethod.RC4)
    pdf.output(str(path))
    return path


def pdf_folder(folder: Path, files: int, pages: int, seed: int = 0) -> tuple[Path, int]:
    """``files`` PDFs of ``pages`` pages (~450 words each) in ``folder``; (folder, total bytes)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(files):
        texts = [prose(rng, rng.randint(350, 550)) for _ in range(pages)]
        path = write_pdf(folder / f"paper{i:03d}.pdf", texts)
        total += path.stat().st_size
    return folder, total


def pdf_cases(folder: Path, pages: int, seed: int = 1) -> dict[str, tuple[Path, list[str]]]:
    """Quality cases with their known text per page: plain, two columns, a Unicode TrueType font."""
    rng = random.Random(seed)
    cases = {}
    for name, options in (("plain", {}), ("two-column", {"columns": 2}), ("unicode-ttf", {"font": DEJAVU})):
        if options.get("font") is not None and not DEJAVU.exists():
            continue
        texts = [prose(rng, 380) for _ in range(pages)]
        if "font" in options:  # accents and a ligature a PDF may store as one glyph
            texts = [t.replace("the ", "thé ").replace("river", "rivière") + " naïve café ﬁnal"
                     for t in texts]
        cases[name] = (write_pdf(folder / f"{name}.pdf", texts, **options), texts)
    return cases


def html_pages(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """``(html, body text, chrome text)`` of saved web pages, three kinds in turn: an article
    inside semantic chrome (``nav``, ``header``, ``aside``, ``footer``, scripts); the same chrome
    written as plain ``div``s named by class and id, as older sites do; and a chapter-like page
    of short paragraphs with no chrome at all (an e-book chapter, a manual page)."""
    pages = []
    for i in range(count):
        paragraphs = [prose(rng, rng.randint(12, 90)) for _ in range(rng.randint(3, 12))]
        headings = [f"Section {k} {prose(rng, 3).rstrip('.')}" for k in range(len(paragraphs) // 3)]
        blocks = []
        for k, para in enumerate(paragraphs):
            if k % 3 == 0 and k // 3 < len(headings):
                blocks.append(f"<h2>{headings[k // 3]}</h2>")
            blocks.append(f"<p>{para}</p>")
        body = "\n".join(blocks)
        title = f"Page {i} {prose(rng, 4).rstrip('.')}"
        if i % 3 == 2:
            html = f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
            chrome = ""
        elif i % 3 == 1:
            chrome_bits = [prose(rng, 6) for _ in range(5)]
            html = (f"<html><head><title>{title}</title></head><body>"
                    f"<div id='top-menu'><a href='/'>{chrome_bits[0]}</a> <a>{chrome_bits[1]}</a></div>"
                    f"<div class='breadcrumbs'>{chrome_bits[2]}</div><div id='page'>"
                    f"<div class='post'><h1>{title}</h1>{body}</div>"
                    f"<div class='sidebar widget'><p>{chrome_bits[3]}</p></div></div>"
                    f"<div id='footer'><p>{chrome_bits[4]}</p></div></body></html>")
            chrome = " ".join(chrome_bits)
        else:
            chrome_bits = [prose(rng, 6) for _ in range(6)]
            html = (f"<html><head><title>{title} | Example</title><script>var tracker = 1;</script>"
                    f"</head><body><header><div class='logo'>{chrome_bits[0]}</div></header>"
                    f"<nav><ul><li><a href='/'>{chrome_bits[1]}</a></li>"
                    f"<li><a>{chrome_bits[2]}</a></li></ul></nav>"
                    f"<div class='content'><article><h1>{title}</h1>{body}</article>"
                    f"<aside><h3>Related</h3><p>{chrome_bits[3]}</p></aside></div>"
                    f"<footer><p>{chrome_bits[4]}</p><p>{chrome_bits[5]}</p></footer></body></html>")
            chrome = " ".join(chrome_bits)
        pages.append((html, " ".join(paragraphs), chrome))
    return pages
