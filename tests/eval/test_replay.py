"""``searchain eval --replay-final``: logged paths rebuilt from the corpus, only the final step asked again."""

import json

import pytest

from searchain.cli.main import main
from searchain.config import ReasoningSettings
from searchain.corpus.store import PassageStore
from searchain.errors import ConfigError
from searchain.eval.replay import logged_paths, rebuild_path, replay_final, store_lookup
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.result import DECISION_CORRECTED, DECISION_PASS, SOURCE_IR_CORRECTED, SOURCE_LLM_VERIFIED
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, QUESTION


def _node(query, llm, reader, answer, decision, source, title, pid=None):
    item = {"query": query, "llm": llm, "reader": reader, "answer": answer, "decision": decision,
            "source": source, "passage": title}
    if pid:
        item["pid"] = pid
    return item


def _record(qid, cover, path, prediction="Toronto"):
    return {"id": qid, "question": QUESTION, "golds": ["Toronto Coach Terminal"], "prediction": prediction,
            "cover_em": cover, "mode": "searchain", "trace": {"chains": [], "path": path, "final": "", "references": []}}


@pytest.fixture
def store(tmp_path):
    with PassageStore.open(tmp_path / "passages.db", create=True, corpus="test") as s:
        s.add(PASSAGES)
        yield s


@pytest.fixture
def log(tmp_path):
    drew = _node(Q1, "Kevin Drew", "Kevin Drew", "Kevin Drew", DECISION_PASS, SOURCE_LLM_VERIFIED, "Spirit If...", "p1")
    born = _node(Q2, "Vancouver", "Toronto", "Toronto", DECISION_CORRECTED, SOURCE_IR_CORRECTED, "Kevin Drew")  # title only
    lines = [json.dumps(_record("a", 0.0, [drew, born])), json.dumps({"id": "a", "mode": "rag", "prediction": "x"}),
             json.dumps(_record("b", 1.0, [drew], prediction="Toronto Coach Terminal")), '{"id": "c", "mode": "sear']
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_logged_paths_are_rebuilt_with_their_passages_and_spans(log, store):
    records = logged_paths(log)
    assert [r["id"] for r in records] == ["a", "b"]  # the rag line and the torn last line are skipped
    nodes = rebuild_path(records[0]["trace"], store_lookup(store))
    assert [(n.passage.pid, n.answer, n.supported) for n in nodes] == [("p1", "Kevin Drew", True), ("p2", "Toronto", True)]
    assert [nodes[1].passage.text[slice(*nodes[1].span)]] == ["Toronto"]
    missing = rebuild_path({"path": [_node("q", "x", None, "x", DECISION_PASS, SOURCE_LLM_VERIFIED, "No such title")]},
                           store_lookup(store))
    assert missing[0].passage is None and not missing[0].supported


def test_replay_reports_both_sides_paired(log, store):
    seen = []

    def rewrite(question, path):
        seen.append([n.passage.pid for n in path])
        return "Toronto Coach Terminal" if len(path) == 2 else "Vancouver"

    report = replay_final(logged_paths(log), rewrite, lookup=store_lookup(store))
    assert seen == [["p1", "p2"], ["p1"]]
    assert (report["questions"], report["logged_cover_em"], report["replayed_cover_em"]) == (2, 0.5, 0.5)
    assert (report["only_logged_right"], report["only_replayed_right"], report["both_right"]) == (1, 1, 0)
    assert report["p_value"] == 1.0 and [r["cover_em"] for r in report["outcomes"]] == [1.0, 0.0]


def test_rewrite_final_asks_only_the_final_step(store, log):
    from searchain.reasoning.inmemory import InMemoryRetriever, LexicalReader

    llm = ScriptedLLM(["Greyhound buses leave from the Toronto Coach Terminal [1].\nSo the final answer is "
                       "Toronto Coach Terminal."])
    engine = SearChainEngine(llm, InMemoryRetriever(PASSAGES), LexicalReader(), settings=ReasoningSettings())
    path = rebuild_path(logged_paths(log)[0]["trace"], store_lookup(store))
    result = engine.rewrite_final(QUESTION, path)
    assert len(llm.calls) == 1 and result.answer == "Toronto Coach Terminal"
    assert result.references and all(r.passage.pid in {p.pid for p in PASSAGES} for r in result.references)
    assert result.prompt_tokens > 0


def test_replay_of_a_missing_or_empty_log_is_a_clear_error(tmp_path, home, capsys, shared_eval):
    with pytest.raises(ConfigError, match="No details log"):
        logged_paths(tmp_path / "none.jsonl")
    empty = tmp_path / "rag_only.jsonl"
    empty.write_text(json.dumps({"id": "a", "mode": "rag"}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no searchain outcome"):
        logged_paths(empty)
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset",
                 str(shared_eval / "musique" / "dev_200.jsonl"), "--replay-final", str(tmp_path / "none.jsonl")])
    assert code == 1 and "No details log" in capsys.readouterr().err
