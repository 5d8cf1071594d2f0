"""`searchain bench strategies` runs every mode over real benchmark questions with the grammar
walker, and reports each against SearChain measured in the same run."""

import json

import pytest

from searchain.cli.main import main

HOTPOT = "hotpotqa/dev_500.jsonl"
MUSIQUE = "musique/dev_200.jsonl"


@pytest.mark.parametrize("dataset", [HOTPOT, MUSIQUE], ids=["hotpotqa", "musique"])
def test_every_mode_answers_and_is_compared_with_searchain(home, capsys, shared_eval, dataset):
    code = main(["--home", str(home.config_dir.parent), "bench", "strategies", "--dataset", str(shared_eval / dataset),
                 "--limit", "3", "--modes", "genground,geek,rag,direct,coq"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["benchmark"] == "strategies" and out["questions"] == 3
    assert list(out["modes"]) == ["searchain", "genground", "geek", "rag", "direct", "coq"]
    for mode, figures in out["modes"].items():
        assert figures["errors"] == 0, mode
        assert sum(figures["stop_reasons"].values()) == 3
        assert figures["llm_calls_per_question"] >= 1 and figures["prompt_words_per_question"] > 0
    assert out["modes"]["searchain"]["vs_searchain"]["llm_calls_per_question"] == 1.0
    assert out["modes"]["direct"]["llm_calls_per_question"] == 1
    # GEEK explores: its two alternative sub-questions make two branches, more calls than GenGround.
    assert out["modes"]["geek"]["rounds_per_question"] == 2
    assert out["modes"]["geek"]["llm_calls_per_question"] > out["modes"]["genground"]["llm_calls_per_question"]


def test_unknown_mode_is_refused(home, capsys, shared_eval):
    code = main(["--home", str(home.config_dir.parent), "bench", "strategies", "--dataset", str(shared_eval / HOTPOT),
                 "--modes", "nonsense"])
    assert code != 0 and "nonsense" in capsys.readouterr().err
