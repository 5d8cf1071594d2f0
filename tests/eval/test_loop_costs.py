"""`searchain bench loop`'s figures (issue #37): each phase's prompt, evaluated and completion
tokens and seconds per question, the mode ratio, and variants paired question by question."""

from __future__ import annotations

import argparse

import pytest

from searchain.bench.loop import Variant, parse_variant, summarize_loop
from searchain.errors import ConfigError
from searchain.eval.costs import phase_costs, ratio
from searchain.eval.datasets import EvalDataset, EvalQuestion
from searchain.eval.runner import QuestionOutcome, run_eval
from searchain.llm.base import Completion, Usage
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.engine import SearChainEngine
from tests.fixtures.reasoning import Q1, Q2, QUESTION, chain, loop_settings

TRACE = "[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."


class HalfCachedLLM:
    """A scripted model whose calls report half their prompt as reused, and fixed seconds."""

    def __init__(self, llm):
        self.llm = llm

    def chat(self, *args, **kwargs):
        out = self.llm.chat(*args, **kwargs)
        u = out.usage
        return Completion(out.text, Usage(u.prompt_tokens, u.prompt_tokens // 2, u.completion_tokens),
                          out.finish_reason, seconds=2.0, prompt_seconds=0.5)

    def __getattr__(self, name):
        return getattr(self.llm, name)


def test_every_phase_reports_evaluated_tokens_and_seconds(retriever):
    model = HalfCachedLLM(ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")), "Kevin Drew", "Toronto", TRACE]))
    engine = SearChainEngine(model, retriever, LLMReader(model),
                             settings=loop_settings(duplicate_threshold=2.0))
    dataset = EvalDataset(path="mem", kind="hotpotqa", fingerprint="0",
                          questions=(EvalQuestion(id="q1", question=QUESTION, answers=("Toronto",)),))
    report = run_eval(engine, dataset, mode="searchain")
    outcome = report.outcomes[0]
    costs = outcome.costs_by_phase
    assert set(costs) == {"chain", "reader", "final"}
    assert costs["reader"]["calls"] == 2 and costs["reader"]["seconds"] == 4.0
    for phase, (prompt, completion) in outcome.tokens_by_phase.items():
        assert costs[phase]["prompt"] == prompt and costs[phase]["completion"] == completion
        assert costs[phase]["evaluated"] < prompt
    figures = phase_costs(report.outcomes)
    reader = figures["phases"]["reader"]
    assert reader["decode_tokens_per_s"] == pytest.approx(costs["reader"]["completion"] / 3.0)
    assert figures["evaluated_tokens_per_question"] == sum(c["evaluated"] for c in costs.values())


def _outcome(qid, mode, seconds, right, prediction="x", evaluated=100):
    return QuestionOutcome(id=qid, question="q?", golds=["x"], prediction=prediction, cover_em=float(right),
                           f1=float(right), seconds=seconds, mode=mode, prompt_tokens=200,
                           costs_by_phase={"final": {"prompt": 200, "evaluated": evaluated, "completion": 10,
                                                     "seconds": seconds, "prompt_seconds": 1.0, "calls": 1}})


def test_summary_gives_the_ratio_and_pairs_variants_question_by_question():
    variants = [Variant("off"), Variant("on", ["llm.prompt_lookup=10"])]
    outcomes = {
        ("off", "rag"): [_outcome("a", "rag", 10, True), _outcome("b", "rag", 12, False)],
        ("off", "searchain"): [_outcome("a", "searchain", 40, True), _outcome("b", "searchain", 48, True)],
        ("on", "rag"): [_outcome("a", "rag", 9, True), _outcome("b", "rag", 11, False)],
        ("on", "searchain"): [_outcome("a", "searchain", 30, True, evaluated=40),
                              _outcome("b", "searchain", 32, False, prediction="y", evaluated=40)],
    }
    report = summarize_loop(outcomes, ["rag", "searchain"], variants)
    off, on = report["variants"]["off"], report["variants"]["on"]
    assert off["ratio_to_first_mode"]["searchain/rag"] == pytest.approx(44 / 11, abs=1e-3)
    assert on["ratio_to_first_mode"]["searchain/rag"] == pytest.approx(31 / 10, abs=1e-3)
    assert on["modes"]["searchain"]["evaluated_tokens_per_question"] == 40
    assert on["settings"] == ["llm.prompt_lookup=10"]
    paired = report["paired_against_first_variant"]["searchain"]["on"]
    assert (paired["only_a_right"], paired["only_b_right"], paired["identical_predictions"]) == (1, 0, 1)
    assert report["paired_against_first_variant"]["rag"]["on"]["identical_predictions"] == 2


def test_the_time_to_a_first_answer_counts_a_draft_and_else_the_whole_answer():
    from dataclasses import replace

    variants = [Variant("draft", ["reasoning.draft_answer=true"])]
    outcomes = {
        ("draft", "rag"): [_outcome("a", "rag", 10, True), _outcome("b", "rag", 12, False)],
        ("draft", "searchain"): [replace(_outcome("a", "searchain", 40, True), first_answer_seconds=10.5,
                                         first_node_seconds=1.5),
                                 replace(_outcome("b", "searchain", 48, True), first_answer_seconds=12.5,
                                         first_node_seconds=2.5)],
    }
    report = summarize_loop(outcomes, ["rag", "searchain"], variants)["variants"]["draft"]
    assert report["modes"]["searchain"]["first_answer_seconds_median"] == pytest.approx(11.5)
    assert report["modes"]["searchain"]["first_node_seconds_median"] == pytest.approx(2.0)
    assert "first_node_seconds_median" not in report["modes"]["rag"]  # no tree
    assert report["modes"]["rag"]["first_answer_seconds_median"] == pytest.approx(11.0)  # RAG's answer is its first
    assert report["first_answer_ratio_to_first_mode"]["searchain/rag"] == pytest.approx(11.5 / 11, abs=1e-3)
    assert report["ratio_to_first_mode"]["searchain/rag"] == pytest.approx(44 / 11, abs=1e-3)


def test_ratio_is_none_without_the_baseline():
    assert ratio({"searchain": {"seconds_median": 3.0}}, "searchain", "rag") is None


def test_variants_parse_and_bad_ones_are_clear_errors():
    v = parse_variant("warm:llm.prompt_lookup=8, cold=true")
    assert (v.name, v.overrides, v.cold) == ("warm", ["llm.prompt_lookup=8"], True)
    assert parse_variant("base") == Variant("base")
    with pytest.raises(ConfigError, match="no name"):
        parse_variant(":llm.n_ctx=4")
    with pytest.raises(ConfigError, match="not KEY=VALUE"):
        parse_variant("x:llm.n_ctx")


def test_an_unknown_setting_fails_before_anything_loads(tmp_path):
    from searchain.bench.loop import measure
    from searchain.config import Settings

    ctx = argparse.Namespace(settings=Settings(), paths=None)
    args = argparse.Namespace(limit=1, mode="rag", variant=["x:llm.no_such=1"], overrides=[], model=None,
                              dataset=str(tmp_path / "none.jsonl"), details=None, quiet=True)
    with pytest.raises(ConfigError, match="no_such"):
        measure(ctx, args)


def test_a_report_from_a_details_log_keeps_only_questions_done_everywhere(tmp_path):
    import json
    from dataclasses import asdict

    from searchain.bench.loop import from_details

    log = tmp_path / "run.jsonl"
    rows = [("warm", _outcome("a", "rag", 10, True)), ("warm", _outcome("a", "searchain", 30, True)),
            ("cold", _outcome("a", "rag", 11, True)), ("cold", _outcome("a", "searchain", 40, True)),
            ("warm", _outcome("b", "rag", 10, False))]  # question b: stopped after one answer
    log.write_text("".join(json.dumps({"variant": v, **asdict(o)}) + "\n" for v, o in rows)
                   + '{"variant": "cold", "id": "b", "mo', encoding="utf-8")  # a kill mid-line
    args = argparse.Namespace(mode="rag,searchain", variant=["warm", "cold:cold=true"], from_details=str(log))
    report = from_details(args)
    assert report["questions"] == 1
    assert report["variants"]["cold"]["ratio_to_first_mode"]["searchain/rag"] == pytest.approx(40 / 11, abs=1e-3)
    args.variant = ["other"]
    with pytest.raises(ConfigError, match="no question answered in every variant"):
        from_details(args)


def test_resume_answers_only_what_the_log_lacks(tmp_path, monkeypatch):
    import json

    import searchain.workspace
    from searchain.bench.loop import run_interleaved
    from searchain.eval.datasets import EvalDataset, EvalQuestion
    from searchain.reasoning.result import AnswerResult

    asked = []

    class FakeWorkspace:
        def __init__(self, paths, settings):
            pass

        def engine(self, *, mode, corpus):
            def answer(question, *, mode=mode, cancel=None):
                asked.append((mode, question))
                return AnswerResult(question=question, mode=mode, final_content="x", answer="x")
            return type("E", (), {"answer": staticmethod(answer)})

        def close(self):
            pass

    monkeypatch.setattr(searchain.workspace, "Workspace", FakeWorkspace)
    dataset = EvalDataset(path="mem", kind="hotpotqa", fingerprint="0", questions=tuple(
        EvalQuestion(id=i, question=f"question {i}?", answers=("x",)) for i in ("a", "b")))
    log = tmp_path / "run.jsonl"
    args = argparse.Namespace(details=str(log), quiet=True, resume=False)
    ctx = argparse.Namespace(paths=None)
    variants, modes = [Variant("v")], ["rag", "searchain"]
    run_interleaved(ctx, dataset, modes, variants, {"v": None}, None, args)
    assert len(asked) == 4 and len(log.read_text().splitlines()) == 4
    # A kill after question a's two answers, mid-line in question b's first.
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30], encoding="utf-8")
    asked.clear()
    args.resume = True
    outcomes, _ = run_interleaved(ctx, dataset, modes, variants, {"v": None}, None, args)
    assert asked == [("rag", "question b?"), ("searchain", "question b?")]
    assert [o.id for o in outcomes[("v", "searchain")]] == ["a", "b"]
    assert [json.loads(line)["id"] for line in log.read_text().splitlines()] == ["a", "a", "b", "b"]


def test_skip_answers_a_later_split_of_the_same_file():
    from searchain.bench.loop import load_window
    from searchain.eval.datasets import SHARED_EVAL_DIR, load_dataset

    path = SHARED_EVAL_DIR / "hotpotqa" / "dev_500.jsonl"
    window = load_window(path, 200, 3)
    whole = load_dataset(path, limit=203)
    assert [q.id for q in window.questions] == [q.id for q in whole.questions[200:]]
    assert window.corpus_name == whole.corpus_name  # the same pooled corpus
    assert load_window(path, 0, 2).questions == whole.questions[:2]
    with pytest.raises(ConfigError, match="leaves no question"):
        load_window(path, 500, 1)
    with pytest.raises(ConfigError, match="0 or more"):
        load_window(path, -1, 1)
