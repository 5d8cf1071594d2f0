"""``searchain eval`` end to end: real tiny GGUF, real pooled corpus and index, real tiny DPR reader.

The tiny model's answers are gibberish, so the figures are near zero; what is checked is that
the pipeline runs, the report has its shape, and its figures are the arithmetic of the
per-question details.
"""

import json
import shutil

import pytest

from searchain.cli.main import main
from searchain.eval.datasets import load_dataset
from searchain.eval.runner import run_eval
from searchain.reasoning.result import SOURCES

SUMMARY_KEYS = {
    "dataset", "dataset_kind", "mode", "corpus", "questions", "cover_em", "f1", "source_shares",
    "nodes_on_paths", "avg_rounds", "prompt_tokens_per_question", "completion_tokens_per_question",
    "first_round_right", "ir_right_to_wrong", "ir_right_to_wrong_of_first_right", "ir_wrong_to_right",
    "errors", "seconds_median", "seconds_total", "cover_em_ci95", "tokens_per_question_by_phase", "yes_no",
    "strict_cover_em", "two_option_questions", "several_options_named",
}


@pytest.fixture
def mini_musique(shared_eval, tmp_path):
    lines = (shared_eval / "musique" / "dev_200.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    path = tmp_path / "mini_musique.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


@pytest.mark.slow
def test_eval_cli_searchain_with_dpr_reader(home, mini_musique, tiny_gguf, tiny_dpr_reader_dir, capsys, tmp_path):
    from searchain.reader.dpr import reader_dir

    from searchain.config import Settings

    shutil.copytree(tiny_dpr_reader_dir, reader_dir(home))  # "auto" then picks the DPR reader
    saved = Settings()
    saved.llm.max_tokens = 96  # the tiny model never stops on its own: keep its chains short
    saved.save(home)
    details = tmp_path / "details.jsonl"
    argv = ["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--model",
            str(tiny_gguf), "--mode", "searchain", "--json", "--details", str(details)]
    report, err = _run(capsys, *argv)
    dataset = load_dataset(mini_musique)
    assert set(report) == SUMMARY_KEYS
    assert report["corpus"] == dataset.corpus_name and report["questions"] == 2 and report["errors"] == 0
    assert "[2/2]" in err
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    assert [r["id"] for r in rows] == [q.id for q in dataset.questions]
    assert report["cover_em"] == pytest.approx(sum(r["cover_em"] for r in rows) / 2)
    assert report["f1"] == pytest.approx(sum(r["f1"] for r in rows) / 2)
    assert report["avg_rounds"] == pytest.approx(sum(r["rounds"] for r in rows) / 2)
    assert report["prompt_tokens_per_question"] == pytest.approx(sum(r["prompt_tokens"] for r in rows) / 2)
    assert report["completion_tokens_per_question"] == pytest.approx(sum(r["completion_tokens"] for r in rows) / 2)
    assert all(r["rounds"] >= 1 and r["prompt_tokens"] > 0 for r in rows)
    nodes = sum(sum(r["sources"].values()) for r in rows)
    assert report["nodes_on_paths"] == nodes
    if nodes:
        assert sum(report["source_shares"].values()) == pytest.approx(1.0)
    assert set(report["source_shares"]) == set(SOURCES)
    assert 0.0 <= report["ir_right_to_wrong"] <= 1.0

    # A second run reuses the pooled corpus: nothing is ingested or embedded again.
    again, err = _run(capsys, *argv[:-2], "--limit", "1")
    assert again["questions"] == 1 and again["corpus"] == report["corpus"]
    assert "ingest" not in err and "embed" not in err


@pytest.mark.slow
def test_run_eval_with_workspace_in_coq_mode(home, mini_musique, tiny_llm_settings):
    from searchain.config import Settings
    from searchain.workspace import Workspace

    settings = Settings()
    settings.llm = tiny_llm_settings
    workspace = Workspace(home, settings)
    try:
        report = run_eval(workspace, mini_musique, mode="coq", limit=1)
    finally:
        workspace.close()
    assert report.questions == 1 and report.mode == "coq" and report.errors == 0
    assert report.source_shares["ir_corrected"] == 0.0 and report.source_shares["ir_completed"] == 0.0
    assert report.outcomes[0].prompt_tokens > 0 and report.corpus is None


def test_eval_cli_bad_dataset_is_a_clear_error(home, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n')
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(bad), "--mode", "coq", "--json"])
    _, err = capsys.readouterr()
    assert code == 1 and "line 1" in err and str(bad) in err
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(bad), "--limit", "0"])
    assert code == 1 and "--limit" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_cli_compares_modes_and_resumes(home, mini_musique, tiny_gguf, capsys, tmp_path):
    from searchain.config import Settings

    saved = Settings()
    saved.llm.max_tokens = 48  # the tiny model never stops on its own
    saved.save(home)
    details = tmp_path / "side_by_side.jsonl"
    argv = ["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--model",
            str(tiny_gguf), "--mode", "direct,coq", "--json", "--details", str(details)]
    report, err = _run(capsys, *argv, "--limit", "1")
    assert report["modes"] == ["direct", "coq"] and report["corpus"] is None  # no IR mode: no corpus built
    assert set(report["reports"]["coq"]) == SUMMARY_KEYS and report["reports"]["direct"]["questions"] == 1
    assert "[1/1] direct" in err and "[1/1] coq" in err
    (pair,) = report["paired"]
    assert (pair["a"], pair["b"], pair["questions"]) == ("direct", "coq", 1)
    # Resumed over both questions: only the second question is answered, in both modes.
    again, err = _run(capsys, *argv, "--resume")
    assert again["resumed"] == 2 and again["reports"]["coq"]["questions"] == 2
    assert "[1/2]" in err and "[2/2] direct" in err
    assert [json.loads(line)["mode"] for line in details.read_text().splitlines()] == ["direct", "coq"] * 2
    text_code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--model",
                      str(tiny_gguf), "--mode", "direct,coq", "--details", str(details), "--resume"])
    out = capsys.readouterr().out
    assert text_code == 0 and "coq vs direct" in out and "(4 outcomes resumed from the log)" in out
    # Resuming with another model (the configured one, here none) would mix two models: refused.
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique),
                 "--mode", "direct,coq", "--details", str(details), "--resume"])
    assert code == 1 and "written with another model" in capsys.readouterr().err


def test_eval_cli_rejects_unknown_modes_and_resume_without_log(home, mini_musique, capsys):
    with pytest.raises(SystemExit):
        main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--mode", "rag,bogus"])
    assert "unknown mode bogus" in capsys.readouterr().err
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--mode", "coq",
                 "--resume"])
    assert code == 1 and "--resume needs --details" in capsys.readouterr().err


def test_eval_cli_yes_no_on_a_file_without_any_is_a_clear_error(home, mini_musique, capsys):
    code = main(["--home", str(home.data_dir.parent), "eval", "--dataset", str(mini_musique), "--mode", "coq",
                 "--yes-no"])
    assert code == 1 and "no question whose gold answer is yes or no" in capsys.readouterr().err
