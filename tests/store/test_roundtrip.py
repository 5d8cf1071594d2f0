"""Saved answers reload exactly, independent of the corpus they came from."""

import copy
import json
import shutil

from searchain.reasoning.result import DECISION_PASS, AnswerResult, Node
from searchain.store import STATE_COMPLETE, ConversationStore, RunInfo
from searchain.types import Passage


def _save(store, result, run):
    cid = store.create_conversation("Van Hook")
    store.add_user_message(cid, result.question)
    mid = store.begin_answer(cid, run)
    store.finish_answer(mid, result)
    return cid, mid


def test_answer_reloads_equal_after_reopen(tmp_path, sample_result, sample_run):
    path = tmp_path / "c.db"
    original = copy.deepcopy(sample_result)
    with ConversationStore.open(path) as store:
        cid, mid = _save(store, sample_result, sample_run)
    with ConversationStore.open(path) as store:
        conv = store.get_conversation(cid)
    answer = conv.messages[1]
    assert answer.id == mid
    assert answer.state == STATE_COMPLETE
    assert answer.content == original.final_content
    assert answer.run == sample_run
    assert answer.result == original
    # Types, not just values: tuples stay tuples, floats keep every bit.
    assert isinstance(answer.result.references[0].span, tuple)
    assert isinstance(answer.result.branches[1].parent, tuple)
    assert answer.result.seconds == original.seconds
    assert answer.result.references[1].span_text == "Stanley"


def test_path_nodes_that_are_not_branch_nodes_round_trip(conversation_store, sample_result,
                                                         sample_run):
    # An engine may put a rewritten copy of a node on the path; it must come back as written.
    rewritten = copy.deepcopy(sample_result.path[1])
    rewritten.decision = DECISION_PASS
    rewritten.confidence = 0.1 + 0.2  # a float with no short decimal form
    standalone = Node(round=9, position=0, query="Orphan?", llm_answer=None, unsolved=True,
                      passage=Passage("c", "p", "", "", "", "", 0, 0), span=(0, 0))
    sample_result.path = [sample_result.path[0], rewritten, standalone, sample_result.path[0]]
    _, mid = _save(conversation_store, sample_result, sample_run)
    assert conversation_store.get_message(mid).result == sample_result


def test_minimal_result_without_reasoning_round_trips(conversation_store, sample_run):
    result = AnswerResult(question="Q", mode="direct", final_content="", answer="",
                          stop_reason="no_ir")
    _, mid = _save(conversation_store, result, sample_run)
    assert conversation_store.get_message(mid).result == result


def test_passages_survive_deleting_the_corpus(home, sample_result, sample_run):
    corpus_dir = home.corpora_dir / "musique"
    corpus_dir.mkdir(parents=True)
    (corpus_dir / "passages.db").write_text("stand-in for the corpus files")
    with ConversationStore.open(home.conversations_db) as store:
        cid, _ = _save(store, sample_result, sample_run)
    shutil.rmtree(home.corpora_dir)
    with ConversationStore.open(home.conversations_db) as store:
        refs = store.get_conversation(cid).messages[1].result.references
    assert [r.passage for r in refs] == [r.passage for r in sample_result.references]
    assert refs[0].passage.text.startswith("Van Hook Township is a township")


def test_citation_rows_hold_full_passage_and_span(conversation_store, sample_result, sample_run):
    _, mid = _save(conversation_store, sample_result, sample_run)
    rows = list(conversation_store.db.query(
        "SELECT c.mark, p.corpus, p.pid, p.title, p.text, c.span_start, c.span_end "
        "FROM citations c JOIN passages p ON p.message_id = c.message_id "
        "AND p.ordinal = c.passage WHERE c.message_id = ? ORDER BY c.ordinal", [mid]))
    assert [r["mark"] for r in rows] == [1, 2]
    assert rows[1]["text"] == sample_result.references[1].passage.text
    assert (rows[1]["span_start"], rows[1]["span_end"]) == sample_result.references[1].span
    # Two distinct passages, though three nodes and two citations name them: each stored once.
    texts = [r["text"] for r in conversation_store.db.query(
        "SELECT text FROM passages WHERE message_id = ? ORDER BY ordinal", [mid])]
    assert texts == [sample_result.references[0].passage.text,
                     sample_result.references[1].passage.text]
    nodes = list(conversation_store.db.query(
        "SELECT decision, source, round, confidence FROM nodes WHERE message_id = ? "
        "AND branch_ordinal IS NOT NULL ORDER BY ordinal", [mid]))
    assert [n["decision"] for n in nodes] == [
        "verified", "corrected", "unchecked", "duplicate", "completed"]
    assert [n["round"] for n in nodes] == [1, 1, 1, 2, 2]


def test_json_export_import_round_trips_exactly(conversation_store, sample_result, sample_run):
    cid, _ = _save(conversation_store, sample_result, sample_run)
    conversation_store.add_user_message(cid, "And its population?")
    mid = conversation_store.begin_answer(cid, sample_run)
    conversation_store.fail_answer(mid, "model crashed", partial_text="The popul")
    text = json.dumps(conversation_store.export_json([cid]))
    (new_id,) = conversation_store.import_json(json.loads(text))
    before = conversation_store.get_conversation(cid)
    after = conversation_store.get_conversation(new_id)
    assert new_id != cid
    strip = lambda msgs: [(m.role, m.content, m.state, m.created_at, m.run, m.result, m.error)
                          for m in msgs]
    assert strip(after.messages) == strip(before.messages)
    assert (after.title, after.created_at) == (before.title, before.created_at)


def test_run_info_from_settings_names_the_model_file():
    from searchain.config import Settings

    settings = Settings()
    settings.llm.model_path = "/models/qwen2.5-3b-instruct-q4_k_m.gguf"
    settings.active_corpus = "musique"
    run = RunInfo.from_settings(settings, reader="dpr")
    assert run.model == "qwen2.5-3b-instruct-q4_k_m.gguf"
    assert (run.corpus, run.reader, run.theta, run.r_max) == ("musique", "dpr", 1.5, 5)


def test_run_info_names_the_mode_and_corpus_chosen_for_the_question():
    from searchain.config import Settings

    settings = Settings()
    settings.active_corpus = "musique"
    assert RunInfo.from_settings(settings).mode == settings.reasoning.mode == "searchain"
    run = RunInfo.from_settings(settings, mode="direct", corpus="demo")
    assert (run.mode, run.corpus) == ("direct", "demo")
