"""A corpus update extends the index (#33, #34): only passages stored anew are embedded, the
rows of deleted ones are hidden, search over unchanged articles gives the very same hits, and
saved conversations keep the passages they cited."""

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.index.build.builder import build_index
from searchain.index.retrievers import open_retriever
from searchain.library.update import plan_update, update_and_index
from tests.corpus.test_mediawiki import dump, page

TOPICS = ["rivers and deltas", "volcanic eruptions", "baroque music", "bread baking", "chess endgames",
          "honey bees", "glaciers melting", "comets and meteors", "copper mining", "violin making",
          "saffron harvest", "lighthouse keepers", "falconry", "orchard grafting", "desert caravans"]


def articles(rewritten=()):
    out = {}
    for i, topic in enumerate(TOPICS, start=1):
        body = f"'''Article {i}''' is about {topic}. It tells how people study {topic} and why {topic} matter."
        if i in rewritten:
            body = f"'''Article {i}''' now covers submarine cables and telegraph history instead."
        out[i] = (f"Article {i}", body)
    return out


def write(path, pages):
    path.write_text(dump([page(t, x, page_id=i) for i, (t, x) in pages.items()]), encoding="utf-8")
    return path


@pytest.fixture
def wiki(home, tmp_path, embedder):
    settings = Settings()
    CorpusManager(home, settings).add("wiki", write(tmp_path / "dump-1.xml", articles()))
    build_index(home, settings, "wiki", embedder=embedder)
    return home, settings


def hits(paths, settings, embedder, query, k=3, unchanged=None):
    """Dense hits as (pid, title, text, score); ``unchanged``: only those articles' hits."""
    found = open_retriever(paths, settings, "wiki", "dense", embedder=embedder).search(query, k)
    return [(h.passage.pid, h.passage.title, h.passage.text, h.score) for h in found
            if unchanged is None or h.passage.doc_id in unchanged]


def test_update_embeds_only_what_changed_and_unchanged_results_stay(wiki, tmp_path, embedder):
    paths, settings = wiki
    queries = ["how are bees kept", "baking bread", "chess endgame study", "submarine telegraph"]
    same = {str(i) for i in range(1, 16)} - {"2", "9"}
    before = {q: hits(paths, settings, embedder, q, 20, same) for q in queries}
    new = articles(rewritten={2})
    del new[9]
    new[30] = ("Article 30", "'''Article 30''' is about paper making in old mills.")
    from searchain.index.build.plan import CACHE_FILE, SpeedCache, _speed_key

    # as on a machine that measured the model before (a calibration run costs seconds here)
    SpeedCache(paths.cache_dir / CACHE_FILE).put(_speed_key(embedder), {"passages_per_s": 50.0,
                                                                        "chars": 100.0})
    plan = plan_update(paths, settings, "wiki", write(tmp_path / "dump-2.xml", new), embedder=embedder)
    assert plan.indexed and plan.read.unit == "articles" and plan.read.bytes_to_read > 0
    assert plan.embed_seconds is None
    assert plan.embed_seconds_per_percent == pytest.approx(0.01 * 15 / 50.0, rel=0.6)  # ~length-scaled
    report = update_and_index(paths, settings, "wiki", tmp_path / "dump-2.xml", embedder=embedder)
    assert (report.unchanged, report.changed, report.added, report.removed) == (13, 1, 1, 1)
    assert report.passages_embedded == report.passages_added == 2  # one passage per article here
    assert report.index["removed_from_graph"] == report.passages_removed == 2
    assert report.index["rebuilt_graph"] is False and report.index["total"] == 15
    for q in queries:  # every hit on an unchanged article: same passage, same order, same score
        # (to float32 rounding: the exact rescoring multiplies over another number of rows)
        after = hits(paths, settings, embedder, q, 20, same)
        assert [h[:3] for h in after] == [h[:3] for h in before[q]] and len(after) == 13
        assert [h[3] for h in after] == pytest.approx([h[3] for h in before[q]], abs=1e-6)
    assert hits(paths, settings, embedder, "telegraph cables")[0][1] == "Article 2"
    assert all(h[1] != "Article 9" for h in hits(paths, settings, embedder, "copper mining"))


def test_saved_conversation_keeps_the_passages_it_cited(wiki, tmp_path, embedder, sample_result,
                                                       sample_run):
    import dataclasses

    from searchain.store import ConversationStore

    paths, settings = wiki
    with CorpusManager(paths, settings).open_store("wiki") as store:
        changed, removed = store.document("2")[0], store.document("9")[0]
    result = sample_result
    result.references[0] = dataclasses.replace(result.references[0], passage=changed)
    result.references[1] = dataclasses.replace(result.references[1], passage=removed)
    with ConversationStore.open(tmp_path / "c.db") as chats:
        cid = chats.create_conversation("before the update")
        chats.add_user_message(cid, result.question)
        chats.finish_answer(chats.begin_answer(cid, sample_run), result)
    new = articles(rewritten={2})
    del new[9]
    update_and_index(paths, settings, "wiki", write(tmp_path / "dump-2.xml", new), embedder=embedder)
    with CorpusManager(paths, settings).open_store("wiki") as store:
        assert store.document("2")[0].text != changed.text and store.document("9") == []
    with ConversationStore.open(tmp_path / "c.db") as chats:
        cited = [r.passage for r in chats.get_conversation(cid).messages[1].result.references]
    assert cited == [changed, removed]


def test_a_killed_update_then_update_again_gives_the_right_index(wiki, tmp_path, embedder, monkeypatch):
    paths, settings = wiki
    new = articles(rewritten={2, 5, 11})
    del new[9]
    target = write(tmp_path / "dump-2.xml", new)
    from searchain.corpus.update import apply

    real, calls = apply.DocumentUpdater.flush, []

    def dies(self):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed")
        return real(self)

    monkeypatch.setattr(apply.DocumentUpdater, "flush", dies)
    from searchain.corpus.update import update_corpus

    with pytest.raises(RuntimeError):
        update_corpus(CorpusManager(paths, settings), "wiki", target, batch_size=6)
    monkeypatch.setattr(apply.DocumentUpdater, "flush", real)
    report = update_and_index(paths, settings, "wiki", embedder=embedder)  # continues the same update
    with CorpusManager(paths, settings).open_store("wiki") as store:
        live = store.count()
        assert {p.title: p.text for _, p in next(store.iter_batches(batch_size=100))} == \
            {t: x.replace("'''", "") for t, x in new.values()}
    assert report.index["total"] == live == 14
    assert hits(paths, settings, embedder, "telegraph cables")[0][1] in ("Article 2", "Article 5", "Article 11")
    again = update_and_index(paths, settings, "wiki", embedder=embedder)
    assert (again.changed, again.added, again.removed, again.passages_embedded) == (0, 0, 0, 0)
    assert again.index == {}  # nothing changed and the index is ready: no model was loaded
