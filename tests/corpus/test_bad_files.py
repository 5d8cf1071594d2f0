"""Bad files never stop a folder: each gives one clear problem line, the rest are read, and no
supported file ends with neither passages nor a reason (through `corpus add --json` too)."""

import json
import os
import zipfile

import pytest

from searchain.cli.main import main
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import SourceOptions, open_source
from searchain.corpus.sources.documents import files as walk_files
from tests.fixtures.documents import (page_texts, write_docx, write_epub, write_odt, write_pdf,
                                      write_scanned_pdf)


def read_folder(root, **options):
    log = ProblemLog()
    source = open_source(root, "folder", "c", log, SourceOptions(**options))
    return list(source.passages()), log, source


def reasons(log, root):
    return {os.path.relpath(p.file, root): p.reason for p in log.problems}


@pytest.fixture
def mixed(tmp_path):
    """A folder with one good file of each format and one of each kind of bad file."""
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    write_pdf(root / "good.pdf", page_texts(3, seed=11))
    write_docx(root / "good.docx", [("h1", "Heading"), ("p", "Word text about glaciers.")])
    write_odt(root / "good.odt", [("h1", "Heading"), ("p", "OpenDocument text about rivers.")])
    write_epub(root / "sub" / "good.epub", "Book", [("One", "<h1>One</h1><p>Book text.</p>")])
    (root / "good.html").write_text("<html><body><p>Web page text.</p></body></html>", encoding="utf-8")
    (root / "good.md").write_text("# Title\n\nMarkdown text.\n", encoding="utf-8")
    (root / "good.txt").write_text("Plain text.\n", encoding="utf-8")
    write_pdf(root / "locked.pdf", page_texts(1, seed=12), password="secret")
    write_scanned_pdf(root / "scan.pdf")
    whole = write_pdf(tmp_path / "whole.pdf", page_texts(4, seed=13)).read_bytes()
    (root / "truncated.pdf").write_bytes(whole[: len(whole) // 3])
    docx_bytes = write_docx(tmp_path / "whole.docx", [("p", "x")]).read_bytes()
    (root / "truncated.docx").write_bytes(docx_bytes[: len(docx_bytes) // 2])
    (root / "renamed.pdf").write_text("Just some notes, not a PDF at all.\n", encoding="utf-8")
    (root / "image.docx").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    with zipfile.ZipFile(root / "archive.epub", "w") as z:
        z.writestr("readme.txt", "a zip, not a book")
    (root / "binary.txt").write_bytes(b"\x00\x01\x02 binary")
    (root / "empty.html").write_text("<html><body><nav>menu</nav><script>x()</script></body></html>")
    (root / "loop.md").symlink_to(root / "loop.md")
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)
    (root / "photo.png").write_bytes(b"\x89PNG")  # unsupported: ignored, as before
    return root


EXPECTED = {
    "locked.pdf": "encrypted PDF",
    "scan.pdf": "no text layer",
    "truncated.pdf": "damaged or truncated PDF",
    "truncated.docx": "damaged or truncated Word document",
    "renamed.pdf": "not a PDF: the file is text",
    "image.docx": "not a Word document (.docx): the file is a PNG image",
    "archive.epub": "not an EPUB e-book: a ZIP archive without META-INF/container.xml",
    "binary.txt": "binary data, not text",
    "empty.html": "no text in this page",
    "loop.md": "symlink loop",
    "sub/up": "symlink loop",
}


def test_each_bad_file_is_one_problem_and_the_good_ones_are_read(mixed):
    passages, log, source = read_folder(mixed)
    found = reasons(log, mixed)
    assert set(found) == set(EXPECTED)
    for name, start in EXPECTED.items():
        assert found[name].startswith(start), (name, found[name])
    assert "OCR it first" in found["scan.pdf"] and "password" in found["locked.pdf"]
    read = {p.doc_id.split("/", 1)[1] for p in passages}
    assert read == {"good.pdf", "good.docx", "good.odt", "sub/good.epub", "good.html", "good.md",
                    "good.txt"}
    assert source.ignored == 1  # the png


def test_no_supported_file_ends_without_passages_or_a_reason(mixed):
    from searchain.corpus.sources.documents import format_of

    passages, log, source = read_folder(mixed)
    with_passages = {p.source for p in passages}
    with_reason = {p.file for p in log.problems}
    supported = [p for p in mixed.rglob("*") if format_of(p.suffix) and not p.is_symlink()]
    assert supported and [str(p) for p in supported if str(p) not in with_passages | with_reason] == []
    # and each file met is recorded with its facts, for a later sync
    records = {r.doc_id: r for r in source.documents}
    assert len(records) == len(supported)  # (the symlink loops are walk problems, not documents)
    good = records["docs/good.pdf"]
    assert good.passages > 0 and good.problem == "" and len(good.sha256) == 64
    assert good.size == (mixed / "good.pdf").stat().st_size
    assert records["docs/scan.pdf"].passages == 0 and "OCR" in records["docs/scan.pdf"].problem


def test_a_file_over_the_size_limit_is_reported_not_read(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "big.txt").write_text("word " * 300_000, encoding="utf-8")  # 1.5 MB
    (root / "small.txt").write_text("small file", encoding="utf-8")
    passages, log, _ = read_folder(root, max_file_bytes=1_000_000)
    assert [p.doc_id for p in passages] == ["docs/small.txt"]
    assert reasons(log, root) == {"big.txt": "too large: 1.5 MB, over the 1.0 MB limit; raise the "
                                             "corpus.max_file_mb setting to read it"}


def test_an_unreadable_file_is_reported(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    locked = root / "private.md"
    locked.write_text("# Private\n\nsecret", encoding="utf-8")
    (root / "open.md").write_text("# Open\n\nfine", encoding="utf-8")
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make this one file refuse as it would for a user
        real_open = open

        def refusing_open(path, *args, **kwargs):
            if str(path) == str(locked):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(walk_files, "open", refusing_open, raising=False)
    try:
        passages, log, _ = read_folder(root)
    finally:
        locked.chmod(0o644)
    assert [p.doc_id for p in passages] == ["docs/open.md"]
    assert reasons(log, root) == {
        "private.md": "cannot read: permission denied; check the file's permissions"}


def test_a_library_failure_on_one_file_is_a_problem_not_a_stop(tmp_path, monkeypatch):
    from searchain.corpus.sources.documents import html

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.html").write_text("<p>first</p>", encoding="utf-8")
    (root / "b.txt").write_text("second", encoding="utf-8")

    def broken(*_):
        raise MemoryError("parser ran out")

    monkeypatch.setattr(html, "add_html", broken)
    passages, log, _ = read_folder(root)
    assert [p.text for p in passages] == ["second"]
    assert reasons(log, root) == {"a.html": "could not be read (MemoryError: parser ran out)"}


def test_corpus_add_json_reports_passages_and_problems(home, mixed, capsys):
    code = main(["--home", str(home.config_dir.parent), "corpus", "add", "docs", str(mixed),
                 "--no-index", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads(out)  # stdout is the one JSON object
    assert report["passages"] > 0 and report["files"] == 7 and report["ignored"] == 1
    problems = {os.path.relpath(p["file"], mixed): p["reason"] for p in report["problems"]}
    assert set(problems) == set(EXPECTED)
    assert all(set(p) <= {"file", "reason", "line"} for p in report["problems"])


def test_search_json_hits_carry_source_page_and_section(home, tmp_path, capsys):
    root = tmp_path / "docs"
    root.mkdir()
    texts = page_texts(3, seed=21, words=(50, 80))
    texts[1] += " The moraine dating used beryllium isotopes."
    write_pdf(root / "report.pdf", texts, outline={1: [(0, "3.2 Results")]})
    write_docx(root / "memo.docx", [("h1", "Budget"), ("h2", "Travel"),
                                    ("p", "Travel money for the moraine fieldwork.")])
    home_arg = ["--home", str(home.config_dir.parent)]
    assert main([*home_arg, "corpus", "add", "docs", str(root), "--no-index", "--json"]) == 0
    capsys.readouterr()
    assert main([*home_arg, "search", "docs", "moraine", "--retriever", "bm25", "--json"]) == 0
    hits = {h["title"]: h for h in json.loads(capsys.readouterr().out)["hits"]}
    pdf_hit = next(h for h in hits.values() if h["source"].endswith("report.pdf"))
    assert pdf_hit["page"] == 2 and pdf_hit["section"] == "3.2 Results"
    assert "beryllium" in pdf_hit["text"]
    memo = next(h for h in hits.values() if h["source"].endswith("memo.docx"))
    assert memo["section"] == "Budget > Travel" and "page" not in memo


def test_corpus_add_json_still_lists_the_problems_when_nothing_could_be_read(home, tmp_path, capsys):
    root = tmp_path / "bad"
    root.mkdir()
    write_scanned_pdf(root / "scan.pdf")
    (root / "renamed.docx").write_text("plain text", encoding="utf-8")
    code = main(["--home", str(home.config_dir.parent), "corpus", "add", "bad", str(root),
                 "--no-index", "--json"])
    captured = capsys.readouterr()
    assert code == 1 and "No passages found" in captured.err
    report = json.loads(captured.out)
    assert report["passages"] == 0 and report["error"].startswith("No passages found")
    assert {os.path.basename(p["file"]): p["reason"].split(":")[0] for p in report["problems"]} == {
        "scan.pdf": "no text layer (a scan or images only)", "renamed.docx": "not a Word document (.docx)"}
    assert not (home.corpora_dir / "bad").exists()  # no empty corpus left behind
