"""``searchain bench server``: the same GGUF in-process and through llama-cpp-python's server on
loopback; tokens/s of each and the loop's answers compared (#35)."""

import json

import pytest

from searchain.cli.main import main
from tests.reasoning.test_real_starter_model import STARTER

pytestmark = pytest.mark.slow  # a server process, a real model twice over the demo corpus


def _bench(home, capsys, model, *extra) -> dict:
    rc = main(["--home", str(home.config_dir.parent), "bench", "server", "--model", str(model),
               "--json", "--repeats", "1", "--questions", "1", "--threads", "1", *extra])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)


def test_bench_server_json(home, capsys, tiny_gguf):
    out = _bench(home, capsys, tiny_gguf, "--tokens", "16", "--modes", "rag")
    # The server's own count: for this random-weight model's bytes llama-cpp-python says 17.
    assert out["inprocess_tokens"] == 16 and out["server_tokens"] == out["server_plain_tokens"] >= 16
    for side in ("inprocess", "server", "server_plain"):
        assert out[f"{side}_tokens_per_s"] > 0
    assert out["server_vs_inprocess"] > 0 and out["server_plain_vs_inprocess"] > 0
    assert out["server_family"] == "llama.cpp" and out["server_grammar"] is True
    loop = out["loop"]
    assert loop["modes"] == ["rag"] and loop["answers_compared"] == 1
    assert loop["identical_count"] == 1 - len(loop["differences"])


@pytest.mark.skipif(STARTER is None, reason="the starter model package is not installed")
def test_a_real_models_answers_are_the_same_through_the_server(home, capsys):
    # Greedy decoding, the same prompts: the server (repeat_penalty 1.0, the same template)
    # writes what the in-process backend writes, chain, readings and final answer alike.
    out = _bench(home, capsys, STARTER, "--tokens", "32", "--modes", "searchain")
    assert out["same_text"] is True
    assert out["loop"]["identical"] is True, out["loop"]["differences"]
