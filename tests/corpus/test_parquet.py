"""Parquet article tables (the wikimedia/wikipedia dataset's form): sections, title and url kept,
streaming by row group, folders of shards, resume, and damaged files named with the row group."""

import json

import pytest

pytest.importorskip("pyarrow")

from searchain.cli.main import main  # noqa: E402
from searchain.config import Settings  # noqa: E402
from searchain.corpus.manager import CorpusManager  # noqa: E402
from searchain.corpus.problems import ProblemLog  # noqa: E402
from searchain.corpus.sources.detect import detect_format  # noqa: E402
from searchain.corpus.sources.parquet import ParquetSource, text_sections  # noqa: E402
from searchain.errors import CorpusError  # noqa: E402
from tests.fixtures.parquet import ARTICLES, filler, write_parquet  # noqa: E402


def read(path, resume_after=None):
    source = ParquetSource(path, "wiki", ProblemLog())
    source.resume_after = resume_after
    return list(source.passages()), source


def test_articles_become_passages_with_title_url_and_section(tmp_path):
    passages, source = read(write_parquet(tmp_path / "train-00000-of-00001.parquet"))
    river = [p for p in passages if p.doc_id == "12"]
    assert [p.section for p in river] == ["", "History", "Geography"]
    assert river[0].text.startswith("River Ellin is a river in the Ellin Valley.")
    assert all(p.title == "River Ellin" and p.url == ARTICLES[0]["url"] for p in river)
    assert [p.pid for p in river] == ["12#0", "12#1", "12#2"]
    text = "\n".join(p.text for p in passages)
    for junk in ("ISBN", "Retrieved", "List of rivers", "Other websites", "References"):
        assert junk not in text, junk
    assert {p.doc_id for p in passages} == {"12", "40"}
    assert source.bytes_done == source.bytes_total > 0


def test_headings_nest_and_sentences_are_never_headings():
    sections = text_sections("Lead text here.\n\nHistory\n\nEarly years\n\nIt began.\n\n"
                             "A short line ending like a sentence.\n\nNotes and references\n\n"
                             "Cited work.\n\nLater\n\nMore text.")
    assert sections == [("", "Lead text here."),
                        ("History > Early years", "It began.\n\nA short line ending like a sentence.")]


def test_the_appendices_end_the_article_link_lists_included():
    """Simple English Wikipedia's own names; a linked item under them looks like a heading and
    must not bring back the prose that follows it (here a stray caption)."""
    sections = text_sections("Lead.\n\nRelated pages\n\nRivers of Europe\n\nA caption that "
                             "reads like prose.\n\nOther websites\n\nOfficial site")
    assert sections == [("", "Lead.")]


def test_row_groups_stream_and_a_folder_of_shards_reads_in_name_order(tmp_path):
    folder = tmp_path / "20231101.simple"
    write_parquet(folder / "train-00001-of-00002.parquet", filler(5, start=2000), row_group_size=2)
    write_parquet(folder / "train-00000-of-00002.parquet", filler(5), row_group_size=2)
    assert detect_format(folder) == "parquet"
    passages, _ = read(folder)
    assert [p.doc_id for p in passages] == [str(1000 + k) for k in range(5)] + \
        [str(2000 + k) for k in range(5)]
    assert passages[0].source == "20231101.simple#Place 0"


def test_resume_skips_to_the_last_stored_article(tmp_path):
    path = write_parquet(tmp_path / "a.parquet", filler(7), row_group_size=3)
    passages, source = read(path, resume_after="1004")
    assert [p.doc_id for p in passages] == ["1004", "1005", "1006"]
    assert source.skipped_articles == 4
    passages, _ = read(path, resume_after="9999")  # not in the file: all of it again
    assert len(passages) == 7


def test_detection_by_suffix_and_magic(tmp_path):
    path = write_parquet(tmp_path / "a.parquet")
    assert detect_format(path) == "parquet"
    renamed = tmp_path / "download.bin"
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == "parquet"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext")
    write_parquet(docs / "b.parquet")
    assert detect_format(docs) == "folder"  # documents beside it: a folder corpus


def test_a_truncated_file_is_named_and_adds_nothing(home, tmp_path):
    good = write_parquet(tmp_path / "good.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    corpora = CorpusManager(home, Settings.load(home))
    with pytest.raises(CorpusError) as caught:
        corpora.add("wiki", bad)
    assert str(bad) in caught.value.message and "not a readable parquet file" in caught.value.message
    assert "download it again" in caught.value.hint
    assert not corpora.exists("wiki")


def test_a_corrupt_row_group_names_the_file_and_the_group(home, tmp_path):
    import pyarrow.parquet as pq

    path = write_parquet(tmp_path / "w.parquet", filler(6), row_group_size=2)
    meta = pq.ParquetFile(path).metadata
    column = meta.row_group(2).column(3)  # the third group's text column
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(path.read_bytes())
    for k in range(start, start + column.total_compressed_size):
        data[k] ^= 0xA5
    path.write_bytes(bytes(data))
    corpora = CorpusManager(home, Settings.load(home))
    with pytest.raises(CorpusError) as caught:
        corpora.add("wiki", path)
    assert str(path) in caught.value.message and "row group 3 of 3" in caught.value.message
    assert "articles before it were added" in caught.value.message
    # The articles read before the damaged group are kept (as for a dump that breaks off), so a
    # re-downloaded file resumes after them; none of the damaged group's are.
    with corpora.open_store("wiki") as store:
        kept = {p.doc_id for batch in store.iter_batches() for _, p in batch}
    assert kept == {a["id"] for a in filler(6)[:4]}


def test_missing_columns_are_named(tmp_path):
    path = write_parquet(tmp_path / "w.parquet", columns=("id", "title"))
    with pytest.raises(CorpusError, match="no column 'text'"):
        read(path)


def test_rows_without_text_are_problems_not_fatal(tmp_path):
    rows = [*ARTICLES, {"id": "77", "url": "", "title": None, "text": "orphan"}]
    passages, source = read(write_parquet(tmp_path / "w.parquet", rows))
    assert {p.doc_id for p in passages} == {"12", "40"}
    assert source.problems.skipped == 1 and "row group 3, row 1" in source.problems.problems[0].reason


def test_an_article_holding_nul_bytes_is_a_problem_not_a_passage(tmp_path):
    rows = [*ARTICLES, {"id": "78", "url": "", "title": "Blob", "text": "A\0B is binary."}]
    passages, source = read(write_parquet(tmp_path / "w.parquet", rows))
    assert {p.doc_id for p in passages} == {"12", "40"}
    assert source.problems.skipped == 1 and "'78' holds NUL bytes" in source.problems.problems[0].reason


def test_cli_adds_parquet_and_search_json_carries_url_and_section(home, tmp_path, capsys):
    path = write_parquet(tmp_path / "train.parquet")
    argv = ["--home", str(home.config_dir.parent)]
    assert main([*argv, "corpus", "add", "wiki", str(path), "--no-index", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passages"] == 5
    assert main([*argv, "search", "wiki", "first bridge monks", "--retriever", "bm25", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["hits"][0]
    assert top["title"] == "River Ellin" and "monks of Sume" in top["text"]
    assert top["section"] == "History" and top["url"] == ARTICLES[0]["url"]


def test_memory_holds_one_row_group_not_the_file(tmp_path):
    """Arrow's pool and Python's heap peak the same for 4 row groups as for 40: the reader never
    holds more than one group (no timings; allocations counted, not measured in seconds)."""
    import tracemalloc

    import pyarrow as pa

    def peaks(groups: int) -> tuple[int, int]:
        rows = [{"id": str(k), "url": "", "title": f"T{k}",
                 "text": f"Article {k} text. " + " ".join(f"w{k}x{j}" for j in range(1500))}
                for k in range(groups * 2)]
        path = write_parquet(tmp_path / f"g{groups}.parquet", rows, row_group_size=2)
        source = ParquetSource(path, "wiki", ProblemLog())
        arrow_peak = 0
        tracemalloc.start()
        for _ in source.passages():
            arrow_peak = max(arrow_peak, pa.total_allocated_bytes())
        heap_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return arrow_peak, heap_peak

    small, large = peaks(4), peaks(40)
    assert large[0] <= 1.5 * small[0] + 2**20
    assert large[1] <= 1.5 * small[1] + 2**20


def test_a_stopped_add_continues_to_the_same_corpus(home, tmp_path):
    """Cancelled after its first committed batch, `corpus add` of the same file goes on from the
    last stored article and ends with the passages (and numeric ids) of an uninterrupted add."""
    from searchain.errors import Cancelled
    from searchain.events import CancelToken, Progress

    path = write_parquet(tmp_path / "w.parquet", filler(1200), row_group_size=100)
    corpora = CorpusManager(home, Settings.load(home))
    cancel = CancelToken()

    def on_event(event):
        if isinstance(event, Progress) and event.stage == "ingest" and "passages added" in event.message:
            cancel.cancel()

    with pytest.raises(Cancelled):
        corpora.add("wiki", path, on_event=on_event, cancel=cancel)
    stopped = corpora.info("wiki").passages
    assert 0 < stopped < 1200
    corpora.add("wiki", path)
    corpora.add("clean", path)

    def ids(name):
        with corpora.open_store(name) as store:
            return store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall()

    assert ids("wiki") == ids("clean") and len(ids("clean")) == 1200
