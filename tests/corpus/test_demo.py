"""The shipped demo corpus: ingested on first run, and its questions answerable from it."""

import re

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.library.demo import (DEMO_NAME, FINGERPRINT_KEY, articles_fingerprint,
                                    demo_articles_dir, ensure_demo_corpus)


def bm25_titles(store, query, k):
    words = re.findall(r"\w+", query.lower())
    match = " OR ".join(f'"{w}"' for w in words)
    rows = store.db.execute(
        "SELECT p.title FROM passages_fts JOIN passages p ON p.id = passages_fts.rowid "
        "WHERE passages_fts MATCH ? ORDER BY bm25(passages_fts, 1.0, 1.0) LIMIT ?", [match, k]).fetchall()
    return [r[0] for r in rows]


def test_demo_corpus_size_and_offsets(demo_store):
    passages = [p for batch in demo_store.iter_batches() for _, p in batch]
    assert 40 <= len(passages) <= 80
    assert len({p.title for p in passages}) >= 20
    for p in passages:
        text = (demo_articles_dir().parent / p.doc_id).read_text(encoding="utf-8")
        assert text[p.start:p.end] == p.text
        assert 20 <= len(p.text.split()) <= 140


def test_every_hop_answer_is_in_a_passage_of_its_title(demo_store, demo_questions):
    titles = {p.title for batch in demo_store.iter_batches() for _, p in batch}
    assert len(demo_questions) >= 8
    assert sum(len(q["hops"]) == 3 for q in demo_questions) >= 2
    for q in demo_questions:
        assert q["hops"][-1]["answer"] == q["answer"]
        for hop in q["hops"]:
            assert hop["title"] in titles, hop
            texts = [p.text for batch in demo_store.iter_batches() for _, p in batch if p.title == hop["title"]]
            assert any(hop["answer"].lower() in t.lower() for t in texts), hop


def test_bm25_finds_each_hop_article_in_the_top_3(demo_store, demo_questions):
    misses = [hop["query"] for q in demo_questions for hop in q["hops"]
              if hop["title"] not in bm25_titles(demo_store, hop["query"], 3)]
    assert misses == []


def test_ensure_demo_is_idempotent_and_refreshes_changed_articles(home, tmp_path, monkeypatch):
    settings = Settings()
    first = ensure_demo_corpus(home, settings, index=False)
    assert first.state == "ready" and first.passages >= 40
    created = first.created
    again = ensure_demo_corpus(home, settings, index=False)
    assert (again.passages, again.created) == (first.passages, created)

    manager = CorpusManager(home, settings)
    with manager.open_store(DEMO_NAME) as store:
        assert store.meta_get(FINGERPRINT_KEY) == articles_fingerprint()
        store.meta_set(FINGERPRINT_KEY, "an older release")
        store.delete(["articles/places/varrow.md#0"])
    manager.set_active(DEMO_NAME)
    refreshed = ensure_demo_corpus(home, settings, index=False)
    assert refreshed.passages == first.passages and refreshed.active


def test_incomplete_demo_is_completed(home):
    settings = Settings()
    manager = CorpusManager(home, settings)
    ensure_demo_corpus(home, settings, index=False)
    with manager.open_store(DEMO_NAME) as store:
        total = store.count()
        store.delete([p.pid for _, p in next(store.iter_batches(batch_size=10))])
        store.meta_set("state", "ingesting")  # as a killed first run leaves it
    assert manager.info(DEMO_NAME).state == "incomplete"
    info = ensure_demo_corpus(home, settings, index=False)
    assert info.state == "ready" and info.passages == total


@pytest.mark.slow
def test_first_run_indexes_the_demo_and_hybrid_search_answers_hops(home):
    """Real index build (bundled MiniLM) through ensure_demo_corpus, then a real retriever."""
    from searchain.index.retrievers import open_retriever

    settings = Settings()
    info = ensure_demo_corpus(home, settings)
    assert info.indexed == info.passages >= 40 and info.embedder
    assert ensure_demo_corpus(home, settings).indexed == info.indexed  # nothing to redo
    retriever = open_retriever(home, settings, DEMO_NAME, "hybrid")
    try:
        hits = retriever.search("Who designed the Corvine Hall?", k=3)
        assert hits[0].passage.title == "Corvine Hall" and hits[0].passage.corpus == DEMO_NAME
    finally:
        close = getattr(retriever, "close", None)
        if close:
            close()


def test_turning_on_a_second_embedder_indexes_the_demo_with_it_too(home, tiny_embedder_dir):
    from searchain.index.layout import IndexLayout, IndexMeta
    from searchain.index.status import READY, index_status

    settings = Settings()
    first = ensure_demo_corpus(home, settings)
    settings.retrieval.second_embedder = str(tiny_embedder_dir)
    settings.save(home)
    assert index_status(home, DEMO_NAME).state != READY
    assert ensure_demo_corpus(home, settings).indexed == first.indexed
    meta = IndexMeta.read(IndexLayout(home.corpora_dir / DEMO_NAME / "index").second.meta_file, DEMO_NAME)
    assert meta.count == first.passages and meta.dim == 32
    assert index_status(home, DEMO_NAME).state == READY
