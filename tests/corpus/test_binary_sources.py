"""A binary file given as a text corpus is refused before anything is written, naming the
format problem (not "the XML is malformed"); text files with a stray binary line lose only that
line. Found by an adversarial run: a GGUF renamed ``model.tsv`` was stored as 1,120 NUL-laden
passages."""

import json
import random
import struct

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from searchain.corpus.sources.detect import detect_format
from searchain.errors import CorpusError


def gguf_like(path):
    """A GGUF header, then metadata keys with tabs in them: tab-separated junk to a TSV reader."""
    keys = b"".join(struct.pack("<Q", 20) + f"general.name\tkey{i}\t".encode() + b"\0" * 12 for i in range(300))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 1, 300) + keys + bytes(range(256)) * 40)
    return path


def random_bytes(path, first=b"<"):
    """Seeded random bytes; starting with "<" once made them read as a MediaWiki dump."""
    path.write_bytes(first + random.Random(7).randbytes(200_000))
    return path


@pytest.fixture
def manager(home, tmp_path):
    src = tmp_path / "good.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "text": f"passage {i}"}) + "\n" for i in range(5)))
    manager = CorpusManager(home, Settings())
    manager.add("mine", src)
    return manager


def test_a_gguf_named_tsv_is_refused_and_the_corpus_keeps_what_it_had(manager, tmp_path):
    before = manager.info("mine")
    with pytest.raises(CorpusError) as err:
        manager.add("mine", gguf_like(tmp_path / "model.tsv"))
    assert "binary file, not TSV text" in err.value.message and "GGUF" in err.value.message
    assert err.value.hint
    after = manager.info("mine")
    assert (after.passages, after.sources, after.state) == (before.passages, before.sources, "ready")


def test_random_bytes_named_jsonl_are_not_called_malformed_xml(manager, tmp_path):
    for first in (b"<", b"{", b"\x00"):
        path = random_bytes(tmp_path / "junk.jsonl", first)
        with pytest.raises(CorpusError) as err:
            detect_format(path)
        assert "binary file, not JSON Lines text" in err.value.message
        assert "XML" not in err.value.message and "malformed" not in str(err.value)
        with pytest.raises(CorpusError, match="binary file"):
            manager.add("new", path)
        assert "new" not in manager.names()  # no empty corpus left behind


def test_an_explicit_format_does_not_let_a_binary_file_in(manager, tmp_path):
    path = gguf_like(tmp_path / "model.bin")
    for fmt, named in (("tsv", "TSV"), ("jsonl", "JSON Lines"), ("musique", "MuSiQue JSON Lines"),
                       ("mediawiki", "MediaWiki XML")):
        with pytest.raises(CorpusError, match=f"not {named} text"):
            manager.add("mine", path, fmt)
    assert manager.info("mine").passages == 5


def test_a_binary_bz2_is_refused_as_not_xml(tmp_path):
    import bz2

    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(bz2.compress(b"\x00\x01\x02GGUF" * 1000))
    with pytest.raises(CorpusError, match="binary file, not MediaWiki XML text"):
        detect_format(path)


def test_the_cli_names_the_problem(home, tmp_path, capsys):
    rc = main(["--home", str(home.config_dir.parent), "corpus", "add", "m", str(gguf_like(tmp_path / "model.tsv")),
               "--no-index"])
    err = capsys.readouterr().err
    assert rc == 1 and "looks like a binary file, not TSV text" in err and "hint:" in err


def test_text_with_a_few_bad_bytes_is_still_text(tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes("1\tcaf\xe9 au lait\tA\n".encode("latin-1") + "2\tplain text\tB\n".encode() * 50)
    assert detect_format(path) == "tsv"
    passages, log, _ = read(path, "tsv")
    assert len(passages) == 50 and log.skipped == 1  # the latin-1 line is skipped, as before


def test_a_jsonl_file_whose_first_line_is_broken_is_read_and_the_line_named(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"title": "cut off\n{"id": "a", "title": "Good", "text": "A passage."}\n',
                    encoding="utf-8")
    assert detect_format(path) == "jsonl"  # by its name: the first line is one bad record, not a format
    passages, log, _ = read(path, "jsonl")
    assert [p.title for p in passages] == ["Good"] and log.skipped == 1
    assert "notes.jsonl:1: invalid JSON" in str(log.problems[0])
    other = tmp_path / "notes.data"
    other.write_text('{"title": "cut off\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="Cannot tell the format"):  # no name to go by
        detect_format(other)


def read(path, fmt):
    log = ProblemLog()
    return list(open_source(path, fmt, "c", log).passages()), log, None


def test_a_line_with_nul_bytes_inside_a_text_file_is_skipped_not_stored(tmp_path):
    path = tmp_path / "mixed.tsv"
    good = "".join(f"r{i}\tpassage {i}\tT\n" for i in range(3)).encode()
    path.write_bytes(good + b"x\ta\x00b\tT\n" + b"y\t\x00\x00\x00\tjunk\n")
    passages, log, _ = read(path, "tsv")
    assert [p.pid for p in passages] == ["r0", "r1", "r2"]
    assert log.skipped == 2 and all("NUL" in p.reason for p in log.problems)


def test_a_binary_file_in_a_folder_is_skipped_with_its_reason(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Herons\n\nHerons nest by the lake.\n", encoding="utf-8")
    (folder / "b.txt").write_bytes(b"\x00\x01binary\x00" * 100)
    passages, log, _ = read(folder, "folder")
    assert {p.title for p in passages} == {"Herons"}
    assert log.skipped == 1 and "binary" in log.problems[0].reason


def test_a_pdf_is_a_document_by_its_suffix_and_binary_by_any_text_name(manager, tmp_path):
    """Documents (#34) meet the binary refusal (#36): a PDF given as a file is read as a
    document; the same bytes named .tsv, or passed with --format tsv, are refused."""
    from tests.fixtures.documents import page_texts, write_pdf

    pdf = write_pdf(tmp_path / "paper.pdf", page_texts(1, seed=61))
    assert detect_format(pdf) == "document"
    renamed = tmp_path / "paper.tsv"
    renamed.write_bytes(pdf.read_bytes())
    with pytest.raises(CorpusError, match="binary file, not TSV text .it starts like a PDF"):
        detect_format(renamed)
    with pytest.raises(CorpusError, match="not TSV text"):
        manager.add("mine", pdf, "tsv")
    assert manager.add("mine", pdf).added > 0
    notes = tmp_path / "notes.md"  # a text document holding binary data is refused as such
    notes.write_bytes(b"\x00\x01binary\x00" * 100)
    with pytest.raises(CorpusError, match="binary file, not a text document"):
        detect_format(notes)
