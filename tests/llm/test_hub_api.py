"""The huggingface_hub floor: pyproject.toml asks for the API models.py calls, and an older
huggingface_hub (an http_get without ``tqdm_class``, before 1.1) is a clear error, not a
TypeError in the middle of every pull."""

import inspect
import re
from pathlib import Path

import pytest

from searchain.errors import ModelError
from searchain.llm.models import manager as models
from searchain.llm.models.manager import HF_HUB_MIN_VERSION, ModelManager, check_hub_api

from .hf_stub import HubStub
from .test_models import NAME, payload, pinned  # noqa: F401  (fixtures)

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_pyproject_floor_is_the_version_the_code_needs():
    floor = re.search(r'"huggingface_hub>=([0-9.]+)"', PYPROJECT.read_text()).group(1)
    assert floor == HF_HUB_MIN_VERSION
    assert _version(floor) >= (1, 1)  # tqdm_class arrived in http_get in 1.1.0


def test_the_installed_huggingface_hub_has_the_api_models_py_calls():
    import huggingface_hub
    from huggingface_hub.file_download import get_hf_file_metadata, http_get

    assert _version(huggingface_hub.__version__) >= _version(HF_HUB_MIN_VERSION)
    params = inspect.signature(http_get).parameters
    for name in ("resume_size", "expected_size", "displayed_filename", "tqdm_class"):
        assert name in params
    assert "endpoint" in inspect.signature(get_hf_file_metadata).parameters
    check_hub_api(http_get)  # no error


def test_an_older_http_get_is_a_clear_error(home, online, payload, pinned, monkeypatch):
    from huggingface_hub import file_download

    def http_get_of_0_36(url, temp_file, *, proxies=None, resume_size=0, headers=None,
                         expected_size=None, displayed_filename=None, _nb_retries=5,
                         _tqdm_bar=None):  # huggingface_hub 0.36's signature: no tqdm_class
        raise AssertionError("must not be called")

    monkeypatch.setattr(file_download, "http_get", http_get_of_0_36)
    with HubStub(payload) as hub:
        with pytest.raises(ModelError, match="too old to download models") as err:
            ModelManager(home, endpoint=hub.url).pull(NAME)
    assert f"huggingface_hub>={HF_HUB_MIN_VERSION}" in err.value.hint
    assert models.HF_HUB_MIN_VERSION == "1.1"
