"""`searchain ask --mode genground|geek` end to end: real llama.cpp (tiny GGUF), the demo corpus
(BM25), the JSON output and the progress lines of each strategy."""

import json
import re

import pytest

from searchain.cli.main import main
from searchain.config import Settings


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["genground", "geek"])
def test_ask_with_a_strategy_end_to_end(home, tiny_gguf, capsys, mode):
    settings = Settings()
    settings.retrieval.retriever = "bm25"
    settings.reasoning.r_max = 1
    settings.llm.n_ctx = 4096
    settings.llm.n_gpu_layers = 0
    settings.llm.max_tokens = 120
    settings.save(home)
    code = main(["--home", str(home.config_dir.parent), "ask", "Is the Halloran Observatory in a city?",
                 "--model", str(tiny_gguf), "--corpus", "demo", "--mode", mode, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert out["mode"] == mode and out["stop_reason"] in ("finish", "r_max", "repeated_chain")
    assert "] FinalAnswer: " in captured.err  # the strategy's steps are shown as they happen
    marks = {int(m) for m in re.findall(r"\[(\d+)\]", out["final_content"])}
    assert marks == {r["mark"] for r in out["references"]}  # every shown mark resolves
    for ref in out["references"]:
        assert ref["corpus"] == "demo" and ref["text"]
