"""`searchain ask` end to end: real llama.cpp (tiny GGUF + grammar), the tiny DPR reader, the demo
corpus (BM25 so no embedding index is built); and the clear error when no model is configured."""

import json

import pytest

from searchain.cli.main import main
from searchain.config import Settings

DEMO_GRAMMAR = r"""
root ::= node1 (node2)? final
node1 ::= "[Query 1]: " query "\n" ( "[Answer 1]: " answer | "[Unsolved Query]: " query ) "\n"
node2 ::= "[Query 2]: " query "\n" ( "[Answer 2]: " answer | "[Unsolved Query]: " query ) "\n"
query ::= ("Who composed The Lantern Suite?" | "Where was Ansel Ruddock born?" | "In which city is the Halloran Observatory?")
answer ::= [a-zA-Z] [a-zA-Z ]{0,12}
final ::= "[Final Content]: " [a-zA-Z] ([a-zA-Z .] | "[" [1-2] "]"){0,40} "\n"?
"""


def test_ask_without_a_model_says_how_to_get_one(home, capsys):
    assert main(["--home", str(home.config_dir.parent), "ask", "Who wrote Hamlet?"]) == 1
    err = capsys.readouterr().err
    assert "No language model is configured" in err and "searchain models pull" in err and "--model PATH" in err


def test_ask_with_a_missing_model_file(home, capsys, tmp_path):
    code = main(["--home", str(home.config_dir.parent), "ask", "Q?", "--model", str(tmp_path / "nope.gguf")])
    assert code == 1 and "nope.gguf does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_ask_end_to_end_with_llama_cpp_tiny_reader_and_demo_corpus(home, tiny_gguf, capsys):
    from searchain.corpus.manager import CorpusManager
    from searchain.reader.dpr import DEFAULT_DPR_READER, reader_dir
    from searchain.reader.fakes import write_tiny_dpr_reader

    settings = Settings()
    settings.retrieval.retriever = "bm25"
    settings.reasoning.reader = "dpr"
    settings.reasoning.theta = -1e9  # the random reader is always "confident": exercise corrections
    settings.reasoning.r_max = 2
    settings.llm.n_ctx = 4096
    settings.llm.n_gpu_layers = 0
    settings.llm.max_tokens = 600
    settings.save(home)
    write_tiny_dpr_reader(reader_dir(home, DEFAULT_DPR_READER))

    root = str(home.config_dir.parent)
    # Random weights write gibberish queries that match nothing; this grammar (same CoQ format)
    # makes them ask about demo-corpus entities so that retrieval, the reader and tracing all run.
    grammar = home.config_dir / "demo.gbnf"
    grammar.write_text(DEMO_GRAMMAR, encoding="utf-8")
    code = main(["--home", root, "ask", "Where was the founder of the observatory born?",
                 "--model", str(tiny_gguf), "--corpus", "demo", "--json", "--grammar", str(grammar)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert set(out) >= {"final_content", "answer", "references", "nodes"}
    assert out["nodes"] and all(
        set(n) >= {"query", "llm_answer", "reader_answer", "confidence", "decision", "source", "round"}
        for n in out["nodes"])
    assert "round 1" in captured.err
    assert out["references"]  # the constrained queries do hit the demo corpus
    store = CorpusManager(home, Settings()).open_store("demo")
    try:
        for ref in out["references"]:
            stored = store.get(ref["passage_id"])
            assert (stored.title, stored.text, ref["corpus"]) == (ref["title"], ref["text"], "demo")
            assert f"[{ref['mark']}]" in out["final_content"]
            if ref["span"]:
                assert 0 <= ref["span"][0] <= ref["span"][1] <= len(stored.text)
    finally:
        store.close()
    marks = {int(m) for m in __import__("re").findall(r"\[(\d+)\]", out["final_content"])}
    assert marks == {r["mark"] for r in out["references"]}  # every shown mark resolves


def test_text_rendering_highlights_spans_and_draws_the_tree(retriever, reader):
    from searchain.cli.ask import render_text, result_to_json
    from searchain.config import ReasoningSettings
    from searchain.llm.fakes.scripted import ScriptedLLM
    from searchain.reasoning.engine import SearChainEngine
    from tests.fixtures.reasoning import PAPER_TRACING, Q1, Q2, QUESTION, chain

    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Vancouver")), chain((Q2, "Toronto")),
                       "[Final Content]: Kevin Drew [1] was born in Toronto [2]."])
    result = SearChainEngine(llm, retriever, reader, settings=ReasoningSettings(**PAPER_TRACING)).answer(QUESTION)
    text = render_text(result)
    assert "[2] Kevin Drew (test:p2)" in text and "born in **Toronto**, Ontario" in text
    assert "round 2 (from node 1.2)" in text and "1.2 [corrected] Where was Kevin Drew born? -> Toronto" in text
    assert text.endswith(f"\n\n(searchain · 2 rounds · {result.seconds:.1f} s)")  # as the app's footer
    data = result_to_json(result)
    assert data["references"][1]["span"] == [23, 30] and len(data["nodes"]) == 3


def test_ask_in_a_saved_chat_reads_the_follow_up_with_it_and_saves_the_exchange(home, tiny_gguf, capsys):
    from searchain.reasoning.result import AnswerResult
    from searchain.store import ConversationStore, RunInfo

    settings = Settings()
    settings.llm.n_ctx = 2048
    settings.llm.n_gpu_layers = 0
    settings.llm.max_tokens = 40
    settings.save(home)
    with ConversationStore.open(home.conversations_db) as store:
        cid = store.create_conversation("Observatory")
        store.add_user_message(cid, "Who founded the Halloran Observatory?")
        mid = store.begin_answer(cid, RunInfo.from_settings(settings))
        store.finish_answer(mid, AnswerResult("Who founded the Halloran Observatory?", "direct",
                                              "Ansel Ruddock founded it.", "Ansel Ruddock"))
    root = str(home.config_dir.parent)
    args = ["--home", root, "ask", "Where was he born?", "--model", str(tiny_gguf), "--mode", "direct", "--json"]
    code = main(args + ["--chat", str(cid)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert out["question"] == "Where was he born?" and "standalone_question" in out
    assert "read with the conversation as: " in captured.err and f"saved to chat {cid}" in captured.err
    with ConversationStore.open(home.conversations_db) as store:
        messages = store.get_conversation(cid).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2].content == "Where was he born?" and messages[3].state == "complete"
    assert messages[3].result.standalone_question == out["standalone_question"]
    # The run records the mode asked for on the command line, not the settings' (searchain).
    assert (messages[3].run.mode, messages[3].result.mode) == ("direct", "direct")
    assert main(["--home", root, "chats", "show", str(cid)]) == 0
    shown = capsys.readouterr().out
    assert shown.rstrip().splitlines()[-1].startswith("*Mode direct,")  # the follow-up's answer
    # An unknown chat is a clear error, and nothing is answered or saved.
    code = main(args + ["--chat", "999"])
    assert code == 1 and "999" in capsys.readouterr().err
    with ConversationStore.open(home.conversations_db) as store:
        assert store.get_conversation(cid).message_count == 4


@pytest.mark.slow
def test_ask_with_a_cross_encoder_checks_each_node_against_the_reranked_top_passage(
        home, tiny_gguf, tiny_dpr_reader_dir, tiny_cross_encoder_dir, capsys):
    import shutil

    from searchain.index.cross_encoder import reranker_dir
    from searchain.index.retrievers import open_retriever
    from searchain.reader.dpr import DEFAULT_DPR_READER, reader_dir

    settings = Settings()
    settings.retrieval.retriever = "bm25"
    settings.retrieval.reranker = "tiny-ce"
    settings.reasoning.reader = "dpr"
    settings.reasoning.r_max = 1
    settings.llm.n_ctx, settings.llm.n_gpu_layers, settings.llm.max_tokens = 4096, 0, 400
    settings.save(home)
    shutil.copytree(tiny_dpr_reader_dir, reader_dir(home, DEFAULT_DPR_READER))
    shutil.copytree(tiny_cross_encoder_dir, reranker_dir(home, "tiny-ce"))
    grammar = home.config_dir / "demo.gbnf"
    grammar.write_text(DEMO_GRAMMAR, encoding="utf-8")
    code = main(["--home", str(home.config_dir.parent), "ask", "Where was the founder of the observatory born?",
                 "--model", str(tiny_gguf), "--corpus", "demo", "--json", "--grammar", str(grammar)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    checked = [n for n in json.loads(captured.out)["nodes"] if n["passage_id"]]
    assert checked
    reranked = open_retriever(home, settings, "demo")
    plain = open_retriever(home, settings, "demo", rerank=False)
    assert reranked.name == "bm25+rerank"
    for node in checked:
        assert node["passage_id"] == reranked.search(node["query"], 1)[0].passage.pid
    # The three grammar queries: the random cross-encoder re-orders at least one of them.
    queries = ["Who composed The Lantern Suite?", "Where was Ansel Ruddock born?",
               "In which city is the Halloran Observatory?"]
    assert any(reranked.search(q, 1)[0].passage.pid != plain.search(q, 1)[0].passage.pid for q in queries)
