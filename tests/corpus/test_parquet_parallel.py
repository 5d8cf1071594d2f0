"""Parquet read in worker processes, one row group a work item (#33 item 4): the same passages,
ids and order with 1 and 3 workers; resume by row group; a damaged group is named."""

import pytest

pytest.importorskip("pyarrow")

from searchain.config import Settings  # noqa: E402
from searchain.corpus import parallel  # noqa: E402
from searchain.corpus.manager import CorpusManager  # noqa: E402
from searchain.corpus.problems import ProblemLog  # noqa: E402
from searchain.corpus.sources.parquet import ParquetSource  # noqa: E402
from searchain.errors import CorpusError  # noqa: E402
from tests.fixtures.parquet import ARTICLES, filler, write_parquet  # noqa: E402


def rows(manager, name):
    with manager.open_store(name) as store:
        return store.conn.execute('SELECT id, pid, title, text, section, doc_id, start, "end", url, '
                                  "source FROM passages ORDER BY id").fetchall()


def shards(folder):
    broken = {"id": "77", "url": "", "title": None, "text": "orphan"}  # a problem, not fatal
    write_parquet(folder / "train-00000-of-00002.parquet", [*ARTICLES, broken, *filler(9)],
                  row_group_size=2)
    write_parquet(folder / "train-00001-of-00002.parquet", filler(8, start=2000), row_group_size=3)
    return folder


def test_one_and_three_workers_store_the_same_passages_with_the_same_ids(home, tmp_path):
    folder = shards(tmp_path / "20231101.simple")
    items = [item for item, _ in ParquetSource(folder, "c", ProblemLog()).work_items()]
    assert [(kind, g) for kind, (_, g, _) in items] == [("row_group", g) for g in range(6)] + \
        [("row_group", g) for g in range(3)]
    manager = CorpusManager(home, Settings())
    one = manager.add("one", folder, workers=1)
    three = manager.add("three", folder, workers=3)
    assert rows(manager, "one") == rows(manager, "three")
    assert len({r[5] for r in rows(manager, "one")}) == 2 + 9 + 8
    assert (one.added, one.skipped, one.ignored) == (three.added, three.skipped, three.ignored)
    assert three.skipped == 1 and "row group 2, row 1" in three.problems[0].reason


def test_resume_with_workers_starts_at_the_row_group_holding_the_last_article(tmp_path):
    path = write_parquet(tmp_path / "a.parquet", filler(10), row_group_size=3)
    whole = [p.pid for p in ParquetSource(path, "c", ProblemLog()).passages()]
    late = ParquetSource(path, "c", ProblemLog())
    late.resume_after = "1007"  # in the 3rd group (1006-1008): the two before are not parsed
    items = [item for item, _ in late.work_items()]
    assert [item[1][1:] for item in items] == [(2, "1007"), (3, None)]
    assert late.skipped_articles == 7
    again = ParquetSource(path, "c", ProblemLog())
    again.resume_after = "1007"
    assert [p.pid for p in parallel.parallel_passages(again, 2)] == whole[whole.index("1007#0"):]
    missing = ParquetSource(path, "c", ProblemLog())
    missing.resume_after = "9999"  # not in the file: all of it again
    assert len(list(missing.work_items())) == 4


def test_a_damaged_row_group_is_named_with_workers_and_the_groups_before_it_kept(home, tmp_path):
    import pyarrow.parquet as pq

    path = write_parquet(tmp_path / "w.parquet", filler(6), row_group_size=2)
    column = pq.ParquetFile(path).metadata.row_group(2).column(3)  # the third group's text
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(path.read_bytes())
    for k in range(start, start + column.total_compressed_size):
        data[k] ^= 0xA5
    path.write_bytes(bytes(data))
    corpora = CorpusManager(home, Settings.load(home))
    with pytest.raises(CorpusError) as caught:
        corpora.add("wiki", path, workers=2)
    assert str(path) in caught.value.message and "row group 3 of 3" in caught.value.message
    assert "download it again" in caught.value.hint
    with corpora.open_store("wiki") as store:
        kept = {p.doc_id for batch in store.iter_batches() for _, p in batch}
    assert kept == {a["id"] for a in filler(6)[:4]}


def test_an_unexpected_error_in_a_worker_names_the_row_group(monkeypatch, tmp_path):
    source = ParquetSource(tmp_path / "x.parquet", "c", ProblemLog())

    def boom(item):
        raise ValueError("odd value")
    monkeypatch.setattr(source, "parse_item", boom)
    monkeypatch.setattr(parallel, "_worker_source", source)
    error = parallel._parse(("row_group", (str(tmp_path / "x.parquet"), 4, None)))[-1]
    assert f"row group 5 of {tmp_path / 'x.parquet'}" in error[0] and "ValueError: odd value" in error[0]


def test_the_benchmark_file_has_wikipedia_article_lengths(tmp_path):
    from statistics import mean, median

    from searchain.bench.ingest.articles import make_parquet

    path = make_parquet(tmp_path / "a.parquet", articles=300, row_group=100)
    passages = list(ParquetSource(path, "c", ProblemLog()).passages())
    per_article = {}
    for p in passages:
        per_article[p.doc_id] = per_article.get(p.doc_id, 0) + 1
    assert len(per_article) == 300 and 2.5 < mean(per_article.values()) < 6
    assert median(per_article.values()) < mean(per_article.values())  # a long tail
    assert not any("ISBN" in p.text for p in passages)  # the appendix is left out
    assert {p.section for p in passages} > {""}


def test_auto_workers_count_a_folder_of_shards_by_their_size(tmp_path, monkeypatch):
    """`corpus get wikipedia` ingests the Hub's folder of shards: auto must see its size."""
    folder = shards(tmp_path / "20231101.simple")
    source = ParquetSource(folder, "c", ProblemLog())
    assert parallel.workers_for(source, 0) == 1  # small: read in process
    monkeypatch.setattr(parallel, "AUTO_MIN_BYTES", 1000)
    monkeypatch.setattr(parallel, "auto_workers", lambda: 4)
    assert parallel.workers_for(source, 0) == 4
    assert parallel.workers_for(source, 2) == 2


def test_a_stopped_add_with_workers_continues_to_the_same_corpus(home, tmp_path):
    """Cancelled after its first committed batch, with 2 workers; the same add goes on from the
    row group holding the last stored article and ends as an uninterrupted serial add."""
    from searchain.errors import Cancelled
    from searchain.events import CancelToken, Progress

    path = write_parquet(tmp_path / "w.parquet", filler(1200), row_group_size=100)
    corpora = CorpusManager(home, Settings.load(home))
    cancel = CancelToken()

    def on_event(event):
        if isinstance(event, Progress) and event.stage == "ingest" and "passages added" in event.message:
            cancel.cancel()

    with pytest.raises(Cancelled):
        corpora.add("wiki", path, workers=2, on_event=on_event, cancel=cancel)
    assert 0 < corpora.info("wiki").passages < 1200
    corpora.add("wiki", path, workers=2)
    corpora.add("clean", path, workers=1)
    assert rows(corpora, "wiki") == rows(corpora, "clean") and len(rows(corpora, "clean")) == 1200
