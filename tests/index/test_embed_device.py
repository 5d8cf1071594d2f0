"""Where embedding runs (``retrieval.embed_device``) and the GPU encode path.

The suite has no GPU: "cuda" is exercised through what a CPU-only torch really says, and the
GPU encode pipeline (tokenising ahead on a helper thread) runs on the CPU, where it must give
exactly the vectors ``SentenceTransformer.encode`` gives, in the caller's order.
"""

from dataclasses import replace

import numpy as np
import pytest

from searchain.config import RetrievalSettings, Settings
from searchain.errors import ModelError
from searchain.index.embed import device as device_mod
from searchain.index.embed.device import GPU_BATCH_SIZE, batch_size_for, cuda_status, resolve_device
from searchain.index.embed.embedder import DEFAULT_MODEL, Embedder


def test_auto_takes_the_cpu_when_torch_sees_no_gpu():
    usable, why = cuda_status()
    assert not usable and why  # this suite runs on the CPU build of torch
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"


def test_auto_takes_the_gpu_when_torch_sees_one(monkeypatch):
    monkeypatch.setattr(device_mod, "cuda_status", lambda: (True, "NVIDIA Test GPU"))
    assert resolve_device("auto") == "cuda"
    assert resolve_device("cuda") == "cuda"


def test_forcing_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ModelError) as info:
        resolve_device("cuda")
    assert "retrieval.embed_device is cuda" in info.value.message
    assert "CPU-only build" in info.value.message or "sees no CUDA GPU" in info.value.message
    assert "CUDA build of torch" in info.value.hint


def test_an_embedder_forced_onto_cuda_fails_when_used_not_when_made():
    embedder = Embedder(DEFAULT_MODEL, "cuda")  # cheap: nothing loads yet
    with pytest.raises(ModelError, match="embed_device is cuda"):
        embedder.encode(["a passage"])


def test_unknown_device_is_refused():
    with pytest.raises(ValueError, match="auto, cpu, cuda"):
        resolve_device("tpu")


def test_batch_size_follows_the_device():
    assert batch_size_for("cpu", 8, 0) == 8
    assert batch_size_for("cuda", 8, 0) == GPU_BATCH_SIZE
    assert batch_size_for("cuda", 8, 128) == 128


def test_settings_reach_the_embedder():
    r = replace(RetrievalSettings(), embed_device="cpu", batch_size=4, gpu_batch_size=64,
                embed_precision="fp32")
    e = Embedder.for_settings(r)
    assert (e.name, e.device, e.precision, e.cpu_batch_size, e.gpu_batch_size) == \
        (r.embedder, "cpu", "fp32", 4, 64)
    assert Embedder.for_settings(r, "other-model").name == "other-model"
    assert Settings().retrieval.embed_device == "auto"


def test_the_device_in_use_is_reported(embedder):
    assert embedder.effective_device == "cpu"
    assert embedder.batch_size == embedder.cpu_batch_size


def test_gpu_pipeline_gives_the_same_vectors_in_the_callers_order(embedder):
    from searchain.index.embed.gpu_encode import encode_on_gpu

    texts = ["x", "a longer text about rivers, valleys and the mills along them " * 4,
             "mid-length text", "", "another one of medium length here"] * 3
    reference = embedder.model.encode(texts, batch_size=4, normalize_embeddings=True,
                                      convert_to_numpy=True)
    got = encode_on_gpu(embedder.model, texts, batch_size=4, device="cpu")
    assert got.dtype == np.float32 and got.shape == reference.shape
    assert np.allclose(got, reference, atol=1e-5)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert encode_on_gpu(embedder.model, [], batch_size=4, device="cpu").shape == (0, reference.shape[1])


@pytest.mark.slow
def test_bench_embed_times_bare_encode_the_embedder_and_the_build(home, tiny_embedder_dir, capsys,
                                                                 shared_eval):
    import json

    from searchain.cli.main import main

    code = main(["bench", "embed", "--model", str(tiny_embedder_dir), "--random-weights",
                 "--passages", "40", "--words", "30", "--repeats", "1", "--build",
                 "--batch-sweep", "4,16", "--precision", "bf16", "--device", "cpu",
                 "--dataset", str(shared_eval / "musique" / "dev_200.jsonl")])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["device"], data["passages"], data["words_per_passage"]) == ("cpu", 40, 30)
    (row,) = data["models"]
    assert row["dim"] == 32 and row["precision"] == "bf16" and row["batch_size"] == 8
    for key in ("bare_passages_per_s", "embedder_passages_per_s", "build_passages_per_s"):
        assert row[key] > 0
    assert row["embedder_vs_bare"] > 0 and row["build_vs_bare"] > 0
    assert set(row["batch_sweep_passages_per_s"]) == {"4", "16"}
    # bfloat16 against float32 on the same (random) weights: close, but computed, not assumed.
    assert 0.99 < row["cosine_vs_fp32_mean"] <= 1.0 + 1e-6


def test_wiki_like_passages_have_the_asked_length(shared_eval):
    from searchain.bench.embed import wiki_like_texts

    texts = wiki_like_texts(50, 100, str(shared_eval / "hotpotqa" / "dev_500.jsonl"))
    assert len(texts) == 50
    lengths = [len(t.partition("\n")[2].split()) for t in texts]
    assert max(lengths) == 100 and all(0 < n <= 100 for n in lengths)
    assert all(t.partition("\n")[0] for t in texts)  # every passage keeps its article's title


def test_checkpoints_are_larger_on_a_gpu():
    from searchain.index.build.builder import DEFAULT_SHARD_SIZE, GPU_SHARD_SIZE, default_shard_size

    assert default_shard_size("cpu") == DEFAULT_SHARD_SIZE
    assert default_shard_size("cuda") == default_shard_size("cuda:1") == GPU_SHARD_SIZE > DEFAULT_SHARD_SIZE
