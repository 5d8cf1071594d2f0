"""Every corpus format reader, on arbitrary and mutated files: passages or a ``CorpusError``
with a hint, never another exception (#36: "bad files of every kind the app reads").

Each property writes its generated file into a fresh folder, opens it with ``open_source`` as a
user's ``corpus add --format F`` would, and reads every passage. Format sniffing
(``detect_format``) is checked on the same bytes, since it reads them first.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from searchain.corpus.sources.detect import detect_format
from searchain.errors import CorpusError
from tests.faults.common import any_text, json_values, mutated, only_project_errors

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("formats")


def read_all(root: Path, name: str, data: bytes, fmt: str):
    """Write ``data`` as ``root/<fresh>/name`` and read it as ``fmt``; check what came out."""
    path = Path(tempfile.mkdtemp(dir=root)) / name
    path.write_bytes(data)
    only_project_errors(lambda: detect_format(path))
    passages = only_project_errors(lambda: list(open_source(path, fmt, "c", ProblemLog()).passages()))
    check_passages(passages)


def check_passages(passages) -> None:
    """What came out is text: stored passages never hold NUL bytes or empty text."""
    if isinstance(passages, list):
        for p in passages:
            assert isinstance(p.text, str) and p.text.strip() and "\0" not in p.text, p
            assert isinstance(p.pid, str) and p.pid, p


# -- TSV ------------------------------------------------------------------------------------

TSV_SAMPLE = b'id\ttext\ttitle\n1\t"He said ""hi"" twice"\tAaron\n2\tplain text\t"Quoted Title"\n'
tsv_cells = st.one_of(any_text, st.sampled_from(['"', '""', '"a\tb"', "id", "text", "title", "\r"]))


@PROPERTY
@given(st.lists(st.lists(tsv_cells, max_size=5), max_size=8))
def test_tsv_rows_of_any_text(scratch, rows):
    data = "\n".join("\t".join(row) for row in rows).encode("utf-8", "surrogatepass")
    read_all(scratch, "p.tsv", data, "tsv")


@PROPERTY
@given(mutated(TSV_SAMPLE))
def test_tsv_mutated_bytes(scratch, data):
    read_all(scratch, "p.tsv", data, "tsv")


# -- JSON Lines and the multi-hop sets ------------------------------------------------------

record = st.dictionaries(st.sampled_from(["id", "_id", "text", "contents", "title", "x"]),
                         json_values, max_size=5)
JSONL_SAMPLE = b'{"id": "a", "title": "T", "text": "some text"}\n{"_id": 2, "contents": "more"}\n'


@PROPERTY
@given(st.lists(st.one_of(record, json_values), max_size=6))
def test_jsonl_records_of_any_shape(scratch, records):
    data = "\n".join(json.dumps(r) for r in records).encode()
    read_all(scratch, "p.jsonl", data, "jsonl")


@PROPERTY
@given(mutated(JSONL_SAMPLE))
def test_jsonl_mutated_bytes(scratch, data):
    read_all(scratch, "p.jsonl", data, "jsonl")


paragraph = st.one_of(st.dictionaries(st.sampled_from(["title", "paragraph_text", "x"]), json_values,
                                      max_size=3), json_values)
multihop_record = st.dictionaries(st.sampled_from(["contexts", "paragraphs", "question"]),
                                  st.one_of(st.lists(paragraph, max_size=4), json_values), max_size=3)


@PROPERTY
@given(st.lists(multihop_record, max_size=5), st.sampled_from(["hotpotqa", "musique"]))
def test_multihop_records_of_any_shape(scratch, records, fmt):
    data = "\n".join(json.dumps(r) for r in records).encode()
    read_all(scratch, "q.jsonl", data, fmt)


# -- MediaWiki XML --------------------------------------------------------------------------

MEDIAWIKI_SAMPLE = b"""<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
<page><title>River Ellin</title><ns>0</ns><id>7</id><revision><text>'''River Ellin''' is a
[[river]] in the {{convert|212|km}} valley.&lt;ref&gt;Smith&lt;/ref&gt;
== History ==
Barges sailed it until the 1930s.</text></revision></page>
<page><title>Ellin</title><ns>0</ns><id>8</id><redirect title="River Ellin"/><revision><text>#REDIRECT [[River Ellin]]</text></revision></page>
</mediawiki>
"""
wikitext_bits = st.sampled_from(["[[", "]]", "{{", "}}", "==", "'''", "<ref>", "</ref>", "{|", "|}",
                                 "&lt;", "#REDIRECT", "\n", "|", "<!--", "-->"])


@PROPERTY
@given(st.lists(st.tuples(any_text, st.one_of(st.integers(), any_text),
                          st.lists(st.one_of(wikitext_bits, any_text), max_size=12)), max_size=4))
def test_mediawiki_pages_of_any_wikitext(scratch, pages):
    from xml.sax.saxutils import escape

    def clean(text):  # XML 1.0 cannot hold control characters; a dump never has them
        return escape("".join(c for c in text if c in "\t\n" or 0x20 <= ord(c) < 0xD800 or 0xE000 <= ord(c) < 0xFFFE))

    body = "".join(f"<page><title>{clean(t)}</title><ns>0</ns><id>{clean(str(i))}</id><revision>"
                   f"<text>{clean(''.join(parts))}</text></revision></page>" for t, i, parts in pages)
    read_all(scratch, "d.xml", f"<mediawiki>{body}</mediawiki>".encode(), "mediawiki")


@PROPERTY
@given(mutated(MEDIAWIKI_SAMPLE))
def test_mediawiki_mutated_bytes(scratch, data):
    read_all(scratch, "d.xml", data, "mediawiki")


# -- a folder of text files -----------------------------------------------------------------

file_names = st.sampled_from(["a.txt", "b.md", "c.markdown", "d.bin", ".hidden.txt", "e.TXT"])
file_bodies = st.one_of(any_text.map(lambda t: t.encode("utf-8")), st.binary(max_size=200),
                        mutated(b"# Title\n\nSome text.\n\n## Part\n\nMore text here.\n"))


@PROPERTY
@given(st.dictionaries(file_names, file_bodies, max_size=4), st.booleans())
def test_folder_of_any_files(scratch, files, nested):
    root = Path(tempfile.mkdtemp(dir=scratch))
    for name, body in files.items():
        path = root / ("sub" if nested else "") / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(body)
    only_project_errors(lambda: detect_format(root))
    check_passages(only_project_errors(lambda: list(open_source(root, "folder", "c", ProblemLog()).passages())))


# -- ZIM ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def zim_sample(tmp_path_factory):
    pytest.importorskip("libzim")
    from tests.fixtures.zim import LAKE_HTML, write_zim

    path = write_zim(tmp_path_factory.mktemp("zim") / "small.zim",
                     {"A/Lake_Sume": ("Lake Sume", LAKE_HTML)}, extras=False)
    return path.read_bytes()


@PROPERTY
@given(data=st.data())
def test_zim_mutated_bytes(scratch, zim_sample, data):
    read_all(scratch, "w.zim", data.draw(mutated(zim_sample)), "zim")


@st.composite
def resigned_flips(draw, sample: bytes) -> bytes:
    """Byte flips past the header with the trailing MD5 recomputed: a file that passes its own
    checksum, so the reader's deeper paths (directory entries, clusters, HTML) get the junk."""
    import hashlib

    data = bytearray(sample)
    for _ in range(draw(st.integers(1, 8))):
        data[draw(st.integers(80, len(data) - 17))] ^= draw(st.integers(1, 255))
    data[-16:] = hashlib.md5(bytes(data[:-16])).digest()
    return bytes(data)


@PROPERTY
@given(data=st.data())
def test_zim_flips_that_pass_the_checksum(scratch, zim_sample, data):
    read_all(scratch, "w.zim", data.draw(resigned_flips(zim_sample)), "zim")


def test_a_zim_entry_name_that_is_not_utf8_is_damage(scratch, zim_sample):
    """Found by the property above: a flipped byte in an entry's path, with the checksum made to
    match, raised UnicodeDecodeError from libzim's name decoding."""
    import hashlib

    data = bytearray(zim_sample)
    at = data.find(b"Lake_Sume")
    while at != -1:  # every copy of the name (directory entry, title listing)
        data[at] = 0xF4  # a UTF-8 lead byte with no continuation
        at = data.find(b"Lake_Sume", at + 1)
    data[-16:] = hashlib.md5(bytes(data[:-16])).digest()
    path = Path(tempfile.mkdtemp(dir=scratch)) / "w.zim"
    path.write_bytes(bytes(data))
    with pytest.raises(CorpusError, match="not valid UTF-8") as err:
        list(open_source(path, "zim", "c", ProblemLog()).passages())
    assert err.value.hint


# -- parquet (the wikimedia/wikipedia dataset's form) ----------------------------------------

@pytest.fixture(scope="module")
def parquet_sample(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from tests.fixtures.parquet import filler, write_parquet

    path = write_parquet(tmp_path_factory.mktemp("parquet") / "small.parquet", filler(6),
                         row_group_size=2)
    return path.read_bytes()


@PROPERTY
@given(data=st.data())
def test_parquet_mutated_bytes(scratch, parquet_sample, data):
    read_all(scratch, "w.parquet", data.draw(mutated(parquet_sample)), "parquet")


parquet_cell = st.one_of(st.none(), any_text, st.integers(-5, 5).map(str))


@PROPERTY
@given(st.lists(st.fixed_dictionaries({"id": parquet_cell, "url": parquet_cell,
                                       "title": parquet_cell, "text": parquet_cell}), max_size=6))
def test_parquet_rows_of_any_text(scratch, rows):
    pytest.importorskip("pyarrow")
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({c: pa.array([r[c] for r in rows], pa.string())
                      for c in ("id", "url", "title", "text")})
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=2)
    read_all(scratch, "w.parquet", sink.getvalue(), "parquet")
