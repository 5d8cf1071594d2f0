"""Folder corpora of documents: every format read with its page or heading path, the page of
every PDF passage right on every test PDF, titles, and offsets into the document's text."""

import re

import pytest

from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from searchain.types import Passage
from tests.fixtures.documents import (DEJAVU, page_texts, write_docx, write_epub, write_odt,
                                      write_pdf)


def read_folder(root):
    log = ProblemLog()
    source = open_source(root, "folder", "c", log)
    return list(source.passages()), log, source


def by_file(passages):
    out = {}
    for p in passages:
        out.setdefault(p.doc_id.split("/", 1)[1], []).append(p)
    return out


def words(text):
    return re.sub(r"\s+", " ", text).strip()


# -- PDF: the page of every passage ----------------------------------------------------------

PDF_CASES = {
    "one-page.pdf": dict(pages=page_texts(1, seed=1)),
    "many-pages.pdf": dict(pages=page_texts(23, seed=2)),
    "short-and-long.pdf": dict(pages=page_texts(9, seed=3, words=(3, 700))),
    "blank-pages.pdf": dict(pages=[t if k % 3 else "" for k, t in enumerate(page_texts(8, seed=4))]),
    "two-columns.pdf": dict(pages=page_texts(5, seed=5), columns=2),
    "unicode-font.pdf": dict(pages=[t.replace("river", "rivière").replace("valley", "Tal-Ökonomie")
                                    for t in page_texts(6, seed=6)], font=DEJAVU),
}


@pytest.fixture(scope="module")
def pdf_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("pdfs") / "pdfs"
    root.mkdir()
    for name, case in PDF_CASES.items():
        if case.get("font") is not None and not case["font"].exists():
            continue
        write_pdf(root / name, **case)
    return root


def test_every_pdf_passage_has_the_page_it_was_printed_on(pdf_folder):
    passages, log, _ = read_folder(pdf_folder)
    assert log.problems == []
    files = by_file(passages)
    assert set(files) == {p.name for p in pdf_folder.iterdir()}
    for name, found in files.items():
        pages = PDF_CASES[name]["pages"]
        covered = {}
        for p in found:
            tags = set(re.findall(r"folio(\d+)", p.text))
            assert tags == {str(p.page)}, (name, p.pid, p.page, tags)  # only its own page's words
            assert words(p.text) in words(pages[p.page - 1]), (name, p.pid)  # in order, verbatim
            covered.setdefault(p.page, []).append(words(p.text))
        # and together the passages of a page are the whole page, in order
        for number, text in enumerate(pages, start=1):
            assert " ".join(covered.get(number, [])) == words(text), (name, number)


def test_pdf_sections_come_from_the_outline_and_headings_mid_page_split_the_page(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    texts = page_texts(4, seed=7, words=(60, 90))
    outline = {0: [(0, "1 Introduction")], 1: [(0, "2 Methods"), (1, "2.1 Sampling")],
               3: [(0, "3 Results")]}
    # page 3 (index 2) has no heading: it continues 2.1
    write_pdf(root / "report.pdf", texts, outline=outline, title="Glacier report")
    passages, _, _ = read_folder(root)
    seen = [(p.page, p.section) for p in passages]
    assert (1, "1 Introduction") in seen and (3, "2 Methods > 2.1 Sampling") in seen
    assert (4, "3 Results") in seen
    assert all(p.title == "Glacier report" for p in passages)
    first = passages[0]
    assert first.location() == "report.pdf, p. 1 - 1 Introduction"


def test_a_heading_that_starts_mid_page_leaves_the_text_above_it_in_the_section_before(tmp_path):
    from fpdf import FPDF

    root = tmp_path / "docs"
    root.mkdir()
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    pdf.add_page()
    pdf.start_section("Background")
    pdf.multi_cell(0, 5, "Background", new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(0, 5, "Earlier work measured the glacier. " * 6, new_x="LMARGIN", new_y="NEXT")
    pdf.start_section("Findings")
    pdf.multi_cell(0, 5, "Findings", new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(0, 5, "The glacier retreated forty metres. " * 6, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(root / "paper.pdf"))
    passages, _, _ = read_folder(root)
    assert [(p.page, p.section, p.text.split()[0]) for p in passages] == [
        (1, "Background", "Background"), (1, "Findings", "Findings")]
    assert "Earlier work" in passages[0].text and "retreated" not in passages[0].text


# -- Word, OpenDocument, HTML, EPUB, Markdown: heading paths ---------------------------------

def test_word_document_headings_tables_and_title(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    write_docx(root / "report.docx", [
        ("title", "Annual Report"), ("p", "Opening words before any heading."),
        ("h1", "3 Results"), ("p", "The harbour grew."), ("h2", "3.2 Errors"),
        ("p", "Two counts were wrong."), ("table", [["Year", "Ships"], ["2023", "41"]]),
        ("h1", "4 Outlook"), ("p", "More ships next year."),
    ])
    passages, log, _ = read_folder(root)
    assert log.problems == []
    got = [(p.section, p.text) for p in passages]
    assert got == [("", "Opening words before any heading."),
                   ("3 Results", "The harbour grew."),
                   ("3 Results > 3.2 Errors", "Two counts were wrong.\n\nYear | Ships\n\n2023 | 41"),
                   ("4 Outlook", "More ships next year.")]
    assert {p.title for p in passages} == {"Annual Report"} and {p.page for p in passages} == {None}
    assert passages[2].location() == "report.docx - 3 Results > 3.2 Errors"


def test_opendocument_text_headings_lists_and_meta_title(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    write_odt(root / "notes.odt", [("h1", "Chapter One"), ("p", "First   body text."),
                                   ("h2", "A Part"), ("li", "A listed point."), ("p", "After.")],
              title="Field Notes")
    passages, log, _ = read_folder(root)
    assert log.problems == []
    assert [(p.section, p.text) for p in passages] == [
        ("Chapter One", "First body text."), ("Chapter One > A Part", "A listed point.\n\nAfter.")]
    assert passages[0].title == "Field Notes"


def test_html_main_content_without_site_chrome(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "guide.html").write_text(
        "<!doctype html><html><head><title>Install Guide | Example Site</title>"
        "<style>p {color: red}</style><script>var menu = 1;</script></head><body>"
        "<header><a href='/'>Example Site</a></header><nav><a>Home</a> <a>Blog</a></nav>"
        "<main><h1>Install Guide</h1><p>Download the <b>installer</b>.</p>"
        "<h2>On Linux</h2><p>Unpack it\n   and run it.</p><ul><li>one</li><li>two</li></ul>"
        "<h3>Problems</h3><table><tr><th>Error</th><th>Fix</th></tr>"
        "<tr><td>E1</td><td>retry</td></tr></table>"
        "</main><aside>Related posts</aside><footer>Copyright</footer></body></html>",
        encoding="utf-8")
    passages, log, _ = read_folder(root)
    assert log.problems == []
    assert [(p.section, p.text) for p in passages] == [
        ("", "Download the installer."),
        ("On Linux", "Unpack it and run it.\n\none\n\ntwo"),
        ("On Linux > Problems", "Error | Fix\n\nE1 | retry"),
    ]
    assert passages[0].title == "Install Guide | Example Site"
    text = " ".join(p.text for p in passages)
    for chrome in ("Example Site", "Home", "Related", "Copyright", "menu", "color"):
        assert chrome not in text


def test_html_in_a_declared_legacy_encoding(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "old.htm").write_bytes('<html><head><meta charset="windows-1252"></head><body>'
                                   '<p>Café crème à la carte.</p></body></html>'.encode("cp1252"))
    passages, _, _ = read_folder(root)
    assert passages[0].text == "Café crème à la carte."


def test_epub_chapters_in_reading_order_with_table_of_contents_sections(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    write_epub(root / "book.epub", "The Long Winter", [
        ("Chapter 1: Snow", "<h1>Chapter 1: Snow</h1><p>It snowed for days.</p>"
                            "<h2>The Barn</h2><p>The barn held.</p>"),
        ("Chapter 2: Thaw", "<p>Then the thaw came, without a heading in the file.</p>"),
    ])
    passages, log, _ = read_folder(root)
    assert log.problems == []
    assert [(p.section, p.text) for p in passages] == [
        ("Chapter 1: Snow", "It snowed for days."),
        ("Chapter 1: Snow > The Barn", "The barn held."),
        ("Chapter 2: Thaw", "Then the thaw came, without a heading in the file."),
    ]
    assert {p.title for p in passages} == {"The Long Winter"}


def test_markdown_heading_paths_and_offsets_into_the_file(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    body = "Intro words here. " * 80
    (root / "notes.md").write_text(
        f"# Notes\n\n{body}\n\n## Setup\n\nSetup text.\n\n### Linux\n\nLinux text.\n\n"
        "```\n# a comment, not a heading\n```\n\n## Usage\n\nUsage text.\n", encoding="utf-8")
    passages, _, _ = read_folder(root)
    text = (root / "notes.md").read_text(encoding="utf-8")
    for p in passages:
        assert text[p.start:p.end] == p.text
    sections = [(p.section, p.text.split()[0]) for p in passages]
    assert sections[0] == ("", "Intro") and len(passages) >= 4
    assert ("Setup", "Setup") in sections and ("Usage", "Usage") in sections
    linux = next(p for p in passages if p.text.startswith("Linux"))
    assert linux.section == "Setup > Linux" and "# a comment" in linux.text


def test_location_formats_page_and_section():
    p = Passage("c", "x", "T", "t", "/docs/report.pdf", page=12, section="3.2 Results")
    assert p.location() == "report.pdf, p. 12 - 3.2 Results"
    assert Passage("c", "x", "T", "t", "C:\\docs\\a.pdf", page=2).location() == "a.pdf, p. 2"
    assert Passage("c", "x", "T", "t", "/d/a.md", section="Setup").location() == "a.md - Setup"
    assert Passage("c", "x", "T", "t", "enwiki.xml.bz2#12").location() == ""


def test_html_chrome_named_by_class_or_id_is_left_out_but_look_alikes_stay(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "old-site.html").write_text(
        "<html><head><title>Old Site</title></head><body>"
        "<div id='top-menu'><a>Home</a> <a>Archive</a></div><div class='breadcrumbs'>Home / 2009</div>"
        "<div class='post'><div class='post-header'><h1>Harbour Notes</h1></div>"
        "<p>The harbour froze in 1709.</p><div class='related-work'><h2>Related work</h2>"
        "<p>Earlier winters were milder.</p></div><p class='share-buttons'>Share this</p></div>"
        "<div class='sidebar widget'><p>Popular posts</p></div><div role='contentinfo'>Contact</div>"
        "<div id='footer'>Copyright</div></body></html>", encoding="utf-8")
    passages, _, _ = read_folder(root)
    assert [(p.section, p.text) for p in passages] == [
        ("Harbour Notes", "The harbour froze in 1709."),
        ("Harbour Notes > Related work", "Earlier winters were milder.")]
    assert passages[0].title == "Old Site"


def test_a_single_document_is_a_corpus_source_of_its_own(home, tmp_path):
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager
    from searchain.corpus.sources.detect import detect_format

    pdf = write_pdf(tmp_path / "paper.pdf", page_texts(2, seed=41), title="Paper")
    notes = tmp_path / "notes.txt"
    notes.write_text("Plain prose about moraines, not a table of records.\n", encoding="utf-8")
    assert detect_format(pdf) == "document" and detect_format(notes) == "document"
    manager = CorpusManager(home, Settings())
    report = manager.add("one", pdf)
    assert report.files == 1 and report.added > 0
    with manager.open_store("one") as store:
        [record] = store.documents()
        assert record.doc_id == "paper.pdf" and record.passages == report.added
        assert {p.page for p in store.document("paper.pdf")} == {1, 2}
