"""The document readers (PDF, Word, OpenDocument, EPUB, HTML, Markdown) on mutated files: passages,
or one reported problem for the file, or a ``CorpusError`` with a hint; never another exception
(#36: "bad files of every kind the app reads"; the readers came with #34).

A mutated PDF or zip-based document goes through the libraries' own parsers (PDFium, python-docx,
zipfile), whose exceptions the readers must turn into a reason line; a folder holding the file
must read on.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from tests.faults.common import mutated, only_project_errors
from tests.faults.test_corpus_formats import check_passages
from tests.fixtures.documents import page_texts, write_docx, write_epub, write_odt, write_pdf

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _samples(folder: Path) -> dict[str, bytes]:
    texts = page_texts(2, seed=3, words=(20, 40))
    blocks = [("h1", "Results"), ("p", texts[0])]
    made = {
        "pdf": write_pdf(folder / "a.pdf", texts),
        "docx": write_docx(folder / "a.docx", blocks, title="A report"),
        "odt": write_odt(folder / "a.odt", blocks, title="A report"),
        "epub": write_epub(folder / "a.epub", "A book", [("One", f"<h1>One</h1><p>{texts[1]}</p>")]),
    }
    samples = {ext: path.read_bytes() for ext, path in made.items()}
    samples["html"] = (f"<html><head><title>T</title></head><body><nav>menu</nav><main><h1>H</h1>"
                       f"<p>{texts[0]}</p></main></body></html>").encode()
    samples["md"] = f"# Title\n\n## Part\n\n{texts[1]}\n".encode()
    return samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return _samples(tmp_path_factory.mktemp("document-samples"))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("documents")


def read_document(root: Path, name: str, data: bytes) -> None:
    """``data`` as ``name``, read alone (format ``document``) and inside a folder with a good file:
    the good file's passages always come through."""
    folder = Path(tempfile.mkdtemp(dir=root))
    path = folder / name
    path.write_bytes(data)
    check_passages(only_project_errors(lambda: list(open_source(path, "document", "c", ProblemLog()).passages())))
    (folder / "good.txt").write_text("A good file that must be read whatever its neighbour holds.")
    problems = ProblemLog()
    passages = only_project_errors(lambda: list(open_source(folder, "folder", "c", problems).passages()))
    assert isinstance(passages, list), passages  # one bad file never stops a folder
    check_passages(passages)
    assert any("good file" in p.text for p in passages)


@pytest.mark.parametrize("ext", ["pdf", "docx", "odt", "epub", "html", "md"])
def test_every_document_sample_reads(samples, scratch, ext):
    folder = Path(tempfile.mkdtemp(dir=scratch))
    (folder / f"a.{ext}").write_bytes(samples[ext])
    assert list(open_source(folder / f"a.{ext}", "document", "c", ProblemLog()).passages())


@pytest.mark.parametrize("ext", ["pdf", "docx", "odt", "epub", "html", "md"])
def test_mutated_documents_give_passages_or_a_reason(samples, scratch, ext):
    @PROPERTY
    @given(mutated(samples[ext]))
    def check(data):
        read_document(scratch, f"x.{ext}", data)

    check()
