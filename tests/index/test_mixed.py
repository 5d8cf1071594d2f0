"""Searching several corpora at once (#34 part 5): a Wikipedia-like jsonl corpus and a folder of
documents, one index each, fused by rank; every hit names its corpus; a missing corpus is named."""

import json

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.errors import ConfigError, CorpusError
from searchain.index.hybrid import rrf
from searchain.index.mixed import MixedRetriever, parse_corpora
from searchain.index.retrievers import open_retriever
from searchain.types import Hit, Passage
from tests.fixtures.documents import page_texts, write_docx, write_pdf

WIKI = [("Glacier", "A glacier is a persistent body of dense ice that moves under its own weight."),
        ("Moraine", "A moraine is material left behind by a moving glacier, often rock and soil."),
        ("Harbour", "A harbour is a sheltered body of water where ships may be docked."),
        ("Orchestra", "An orchestra is an ensemble of musicians playing string and wind instruments.")]


@pytest.fixture
def two_corpora(home, tmp_path, make_corpus):
    """``wiki`` (jsonl, titled articles) and ``papers`` (a PDF with known pages and a Word memo)."""
    from searchain.corpus.manager import CorpusManager

    make_corpus("wiki", WIKI)
    root = tmp_path / "papers"
    root.mkdir()
    texts = page_texts(3, seed=5, words=(50, 80))
    texts[2] += " The moraine samples were dated with beryllium isotopes."
    write_pdf(root / "field.pdf", texts)
    write_docx(root / "memo.docx", [("h1", "Budget"), ("p", "Money for the glacier moraine survey.")])
    CorpusManager(home, Settings()).add("papers", root, "folder")
    return home


class _Fixed:
    """A retriever that returns a fixed list (scores on its own scale)."""

    def __init__(self, corpus, titles, scale):
        self.name = "bm25"
        self.source = None
        self.hits = [Hit(Passage(corpus, str(n), t, t), scale * (len(titles) - n), "bm25")
                     for n, t in enumerate(titles)]

    def search(self, query, k=5):
        return self.hits[:k]


def test_fusion_is_by_rank_not_by_score_and_keeps_same_pids_of_two_corpora_apart():
    # "b" scores a thousand times higher than "a": a score merge would show b's list first.
    mixed = MixedRetriever({"a": _Fixed("a", ["a1", "a2", "a3"], 1.0),
                            "b": _Fixed("b", ["b1", "b2"], 1000.0)})
    hits = mixed.search("anything", k=5)
    assert [(h.passage.corpus, h.passage.title) for h in hits] == [
        ("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2"), ("a", "a3")]
    assert {h.passage.pid for h in hits[:2]} == {"0"}  # same pid, two corpora: both kept
    assert all(h.retriever == "bm25+mixed" for h in hits)
    assert hits[0].score > hits[2].score
    assert mixed.search("  ", k=3) == [] and mixed.search("x", k=0) == []


def test_at_each_rank_the_corpus_whose_passage_holds_more_of_the_query_leads():
    # SearChain checks a node against the single best passage: it must not always be the
    # first-named corpus's. BM25 scores cannot say which (each corpus's own statistics); the
    # share of the query's keywords a passage holds can.
    mixed = MixedRetriever({"a": _Fixed("a", ["harbour notes", "glacier"], 5.0),
                            "b": _Fixed("b", ["glacier moraine survey", "orchestra"], 1.0)})
    hits = mixed.search("glacier moraine", k=4)
    assert [h.passage.title for h in hits] == ["glacier moraine survey", "harbour notes", "glacier", "orchestra"]


def test_rrf_is_the_function_hybrid_fusion_uses():
    fused = rrf([["x", "y"], ["y"]], [0.5, 0.5])
    assert fused["y"] > fused["x"] and list(fused) == ["x", "y"]


def test_parse_corpora_reads_commas_and_lists_and_refuses_nothing():
    assert parse_corpora("wiki, papers,wiki") == ["wiki", "papers"]
    assert parse_corpora(["papers"]) == ["papers"]
    with pytest.raises(ConfigError):
        parse_corpora(" , ")


def test_a_mixed_search_finds_passages_of_both_corpora_each_naming_its_own(two_corpora):
    retriever = open_retriever(two_corpora, Settings(), "wiki,papers", "bm25")
    try:
        hits = retriever.search("moraine glacier", k=6)
    finally:
        retriever.close()
    corpora = {h.passage.corpus for h in hits}
    assert corpora == {"wiki", "papers"}
    pdf = next(h.passage for h in hits if h.passage.source.endswith("field.pdf"))
    assert pdf.corpus == "papers" and pdf.page == 3 and "beryllium" in pdf.text
    wiki = next(h.passage for h in hits if h.passage.corpus == "wiki")
    assert wiki.title in {"Moraine", "Glacier"} and wiki.page is None
    # One corpus alone still gives the plain retriever, as before.
    single = open_retriever(two_corpora, Settings(), ["wiki"], "bm25")
    assert not isinstance(single, MixedRetriever)
    single.source.close()


def test_the_top_passage_comes_from_the_corpus_that_matches_best_not_the_first_named(two_corpora):
    retriever = open_retriever(two_corpora, Settings(), "wiki,papers", "bm25")
    try:
        (top,) = retriever.search("moraine samples beryllium", k=1)
    finally:
        retriever.close()
    assert top.passage.corpus == "papers" and "beryllium" in top.passage.text


def test_a_missing_corpus_among_several_is_named_not_a_crash(two_corpora):
    with pytest.raises(CorpusError) as err:
        open_retriever(two_corpora, Settings(), "wiki,gone,papers", "bm25")
    assert "'gone'" in err.value.message and "wiki, gone, papers" in err.value.message
    assert "wiki, papers" in err.value.hint


def test_cli_search_of_two_corpora_json_hits_carry_their_corpus(two_corpora, capsys):
    home_arg = ["--home", str(two_corpora.config_dir.parent)]
    assert main([*home_arg, "search", "wiki,papers", "moraine", "--retriever", "bm25", "-k", "4",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["corpora"] == ["wiki", "papers"] and data["corpus"] == "wiki,papers"
    assert {h["corpus"] for h in data["hits"]} == {"wiki", "papers"}
    assert any(h.get("page") == 3 for h in data["hits"] if h["corpus"] == "papers")
    assert main([*home_arg, "search", "wiki,papers", "moraine", "--retriever", "bm25", "-k", "2"]) == 0
    text = capsys.readouterr().out
    assert "wiki:" in text or "papers:" in text
    assert main([*home_arg, "search", "wiki,nope", "moraine", "--retriever", "bm25"]) == 1
    assert "'nope'" in capsys.readouterr().err


# -- a chat's corpora, through the Workspace the CLI and the app share ---------------------------

def _workspace(home):
    from searchain.workspace import Workspace

    settings = Settings()
    settings.retrieval.retriever = "bm25"
    settings.active_corpus = "wiki"
    settings.reasoning.duplicate_threshold = 2.0  # off: no embedding model to load here
    settings.reasoning.draft_answer = False  # the scripted model answers the loop's calls only
    return Workspace(home, settings)


def test_a_chat_answers_from_its_chosen_corpora_and_cites_each_passage_s_corpus(two_corpora):
    from searchain.llm.fakes.scripted import ScriptedLLM
    from searchain.reasoning.inmemory import LexicalReader

    ws = _workspace(two_corpora)
    try:
        store = ws.conversations()
        cid = store.create_conversation("mixed")
        assert ws.chat_corpora(cid) == ["wiki"]  # never chose: the active corpus
        store.set_corpora(cid, ["wiki", "papers"])
        assert ws.chat_corpora(cid) == ["wiki", "papers"]
        ws._llm = ScriptedLLM(["[Query 1]: How were the moraine samples dated with beryllium?\n"
                               "[Answer 1]: Beryllium isotopes\n"
                               "[Final Content]: They were dated with beryllium isotopes [1].",
                               "They were dated with beryllium isotopes [1][2][3]."])
        ws._reader = LexicalReader()
        result = ws.answer("How were the moraine samples dated?", mode="searchain",
                           corpus=ws.chat_corpora(cid))
        cited = [r.passage for r in result.references]
        pdf = next(p for p in cited if "beryllium" in p.text)
        assert pdf.corpus == "papers" and pdf.page == 3 and pdf.source.endswith("field.pdf")
        assert isinstance(ws.retriever(["wiki", "papers"]), MixedRetriever)
        assert ws.retriever("wiki,papers") is ws.retriever(["wiki", "papers"])  # cached once
        ws.forget_retriever("papers")  # a rebuilt corpus drops the mixed retrievers using it
        assert ws._retrievers == {}
    finally:
        ws.close()


def test_a_saved_chat_whose_corpus_was_removed_opens_and_says_which_corpus_is_gone(two_corpora):
    from searchain.corpus.manager import CorpusManager
    from searchain.llm.fakes.scripted import ScriptedLLM

    ws = _workspace(two_corpora)
    try:
        store = ws.conversations()
        cid = store.create_conversation("mixed")
        store.add_user_message(cid, "an earlier question")
        store.set_corpora(cid, ["wiki", "papers"])
        CorpusManager(two_corpora, Settings()).remove("papers")
        assert store.get_conversation(cid).messages[0].content == "an earlier question"
        assert ws.chat_corpora(cid) == ["wiki", "papers"]  # kept: the user sees what is gone
        ws._llm = ScriptedLLM(["unused"])
        with pytest.raises(CorpusError) as err:
            ws.answer("Anything?", mode="searchain", corpus=ws.chat_corpora(cid))
        assert "'papers'" in err.value.message and "wiki" in err.value.hint
    finally:
        ws.close()


def test_ask_corpus_list_with_chat_is_saved_as_the_chat_s_choice(two_corpora, capsys):
    from searchain.store import ConversationStore

    with ConversationStore.open(two_corpora.conversations_db) as store:
        cid = store.create_conversation("mixed")
    home_arg = ["--home", str(two_corpora.config_dir.parent)]
    # No model is configured, so the answer itself fails (clearly); the choice is kept.
    assert main([*home_arg, "ask", "Q?", "--chat", str(cid), "--corpus", "wiki, papers"]) == 1
    assert "No language model is configured" in capsys.readouterr().err
    with ConversationStore.open(two_corpora.conversations_db) as store:
        assert store.corpora(cid) == ["wiki", "papers"]
    assert main([*home_arg, "ask", "Q?", "--corpus", " , "]) == 1
    assert "No corpus named" in capsys.readouterr().err


def test_one_corpus_can_hold_articles_and_documents_too(home, tmp_path):
    """The other reading of "mixed": a jsonl of articles and a folder of documents added into
    one corpus (``corpus add`` appends), searched as one, each passage citing its own origin."""
    from searchain.corpus.manager import CorpusManager

    source = tmp_path / "wiki.jsonl"
    source.write_text("".join(json.dumps({"id": f"w{k}", "title": t, "text": x}) + "\n"
                              for k, (t, x) in enumerate(WIKI)), encoding="utf-8")
    root = tmp_path / "papers"
    root.mkdir()
    texts = page_texts(2, seed=8, words=(50, 80))
    texts[1] += " The moraine samples were dated with beryllium isotopes."
    write_pdf(root / "field.pdf", texts)
    manager = CorpusManager(home, Settings())
    manager.add("both", source, "jsonl")
    manager.add("both", root, "folder")
    retriever = open_retriever(home, Settings(), "both", "bm25")
    try:
        hits = {h.passage.pid: h.passage for h in retriever.search("moraine", k=5)}
    finally:
        retriever.source.close()
    assert hits["w1"].title == "Moraine" and hits["w1"].page is None
    pdf = next(p for p in hits.values() if p.source.endswith("field.pdf"))
    assert pdf.corpus == "both" and pdf.page == 2 and pdf.location().startswith("field.pdf, p. 2")


def test_hybrid_over_two_indexed_corpora_shares_one_model_and_finds_each_corpus_s_best(indexed_copy, embedder):
    """Dense and hybrid first stages per corpus (each its own vector index), one embedder."""
    import shutil

    from tests.fixtures.index import MINI_CORPUS

    corpora = indexed_copy.corpora_dir
    shutil.copytree(corpora / MINI_CORPUS, corpora / "twin")
    retriever = open_retriever(indexed_copy, Settings(), [MINI_CORPUS, "twin"], "hybrid", embedder=embedder)
    try:
        assert all(part.dense.embedder is embedder for part in retriever.parts.values())
        hits = retriever.search("highest mountain on Earth", k=4)
    finally:
        retriever.close()
    # The same passage is each corpus's best, so both copies lead, the first-named corpus first.
    assert [(h.passage.corpus, h.passage.title) for h in hits[:2]] == [
        (MINI_CORPUS, "Mount Everest"), ("twin", "Mount Everest")]
    assert hits[0].retriever == "hybrid+mixed"
    # Dense alone: cosines are one scale, so the lists merge by cosine (the global top k).
    dense = open_retriever(indexed_copy, Settings(), [MINI_CORPUS, "twin"], "dense", embedder=embedder)
    single = open_retriever(indexed_copy, Settings(), MINI_CORPUS, "dense", embedder=embedder)
    try:
        merged, alone = dense.search("highest mountain on Earth", k=4), single.search("highest mountain on Earth", k=2)
    finally:
        dense.close()
        single.source.close()
    assert [(h.passage.title, round(h.score, 5)) for h in merged] == [
        (h.passage.title, round(h.score, 5)) for h in alone for _ in range(2)]
    assert [h.passage.corpus for h in merged] == [MINI_CORPUS, "twin", MINI_CORPUS, "twin"]
