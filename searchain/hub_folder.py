"""Download a model folder (config, weights, tokenizer) from the Hugging Face Hub, all or nothing.

The DPR reader and the cross-encoder re-ranker are both small transformers checkpoints that
live as plain folders under ``<models_dir>``. This fetches the files such a folder needs into a
hidden sibling folder and renames it into place only once it is complete, so an interrupted
download never leaves a half model that the app would then try to load. GGUF chat models have
their own resumable, checksummed path in ``llm.models``; these folders are a few hundred MB at
most and are simply fetched again after an interruption.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .errors import Cancelled, ModelError, is_disk_full
from .events import CancelToken, EventCallback, Progress, check, emit

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")  # preferred first
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def download_model_folder(
    repo: str,
    target: Path,
    *,
    what: str,
    is_complete: Callable[[Path], bool],
    wanted: Iterable[str] = ("config.json",) + TOKENIZER_FILES,
    manual_hint: str,
    endpoint: str | None = None,
    on_event: EventCallback | None = None,
    cancel: CancelToken | None = None,
) -> Path:
    """Fetch ``repo``'s config, tokenizer and weights into ``target``; return ``target``.

    ``what`` names the model in messages and progress ("DPR reader"); ``is_complete`` says
    whether a folder holds a loadable model (checked before and after); ``wanted`` lists the
    optional small files to take when the repo has them (the first of ``WEIGHT_FILES`` it has
    is always taken). ``endpoint`` (or ``HF_ENDPOINT``) points at a mirror. Offline, a refused
    repo, a full disk or an incomplete result raise ModelError with what to do; ``target`` is
    untouched by any failure.
    """
    target = Path(target)
    if is_complete(target):
        return target
    try:
        from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_download, hf_hub_url
    except ImportError as exc:
        raise ModelError(f"Downloading the {what} needs huggingface_hub: {exc}",
                         hint="Install it (`make install`).") from exc
    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
    stage = f"download {what}"
    partial = target.parent / f".{target.name}.partial"
    try:
        check(cancel)
        emit(on_event, Progress(stage, 0, None, f"listing {repo}"))
        # One plain HEAD first: it fails at once when offline or for a wrong name, where the
        # listing call below retries a dead connection for ~20 s before giving up.
        get_hf_file_metadata(hf_hub_url(repo, "config.json", endpoint=endpoint), endpoint=endpoint)
        files = set(HfApi(endpoint=endpoint).list_repo_files(repo))
        weights = next((w for w in WEIGHT_FILES if w in files), None)
        if weights is None:
            raise ModelError(f"{repo} on the Hugging Face Hub has no PyTorch weights "
                             f"({' or '.join(WEIGHT_FILES)}).", hint=manual_hint)
        names = [f for f in dict.fromkeys(wanted) if f in files] + [weights]
        partial.mkdir(parents=True, exist_ok=True)
        for done, filename in enumerate(names):
            check(cancel)
            emit(on_event, Progress(stage, done, len(names), filename))
            hf_hub_download(repo, filename, local_dir=str(partial), endpoint=endpoint)
        emit(on_event, Progress(stage, len(names), len(names), "done"))
    except (ModelError, Cancelled):
        raise
    except Exception as exc:  # noqa: BLE001 - hub/network errors come in many types
        raise _download_error(repo, what, target, exc, manual_hint) from exc
    if not is_complete(partial):
        raise ModelError(f"The download of {repo} is incomplete ({partial}).",
                         hint="Retry the download.")
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, target)
    return target


@contextmanager
def loading_model_folder(what: str, path: Path, *, needs: str, otherwise: str) -> Iterator[None]:
    """Turn what loading a downloaded folder can raise into ModelError: a missing library
    (``needs`` names them, ``otherwise`` says how to do without) or a damaged folder."""
    try:
        yield
    except ImportError as exc:
        raise ModelError(f"The {what} needs {needs}: {exc}",
                         hint=f"Install them (`make install`), or {otherwise}.") from exc
    except Exception as exc:  # noqa: BLE001 - safetensors/torch/json errors have no common base
        raise ModelError(f"Cannot load the {what} from {path}: {exc}",
                         hint="The folder may be incomplete; delete it and download again.") from exc


def _download_error(repo: str, what: str, target: Path, exc: Exception, manual_hint: str) -> ModelError:
    if is_disk_full(exc):
        return ModelError(f"The disk filled up while downloading the {what} {repo}.",
                          hint=f"Free some space under {target.parent}, then download again.")
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in (401, 403, 404):
        return ModelError(f"The Hugging Face Hub refused {repo} (HTTP {status}).",
                          hint="Check the repository name; it may be private or moved. " + manual_hint)
    offline = os.environ.get("HF_HUB_OFFLINE") == "1" or type(exc).__name__ == "OfflineModeIsEnabled"
    return ModelError(
        f"Could not download the {what} {repo}: {exc.__class__.__name__}: {exc}",
        hint=("Hugging Face downloads are disabled (HF_HUB_OFFLINE=1); " if offline else "")
        + f"connect to the internet once and retry, or copy the model folder to {target} by "
        "hand. " + manual_hint,
    )
