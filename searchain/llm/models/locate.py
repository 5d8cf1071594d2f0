"""Which GGUF file a user means by a name: the one rule ``searchain models use`` and every
``--model`` option follow, so a name that ``models list`` prints works wherever a model is asked for.

A name is tried, in this order, as:

1. a path to a file (``~`` expanded);
2. a file in the app's models folder (``qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``, as
   ``models list`` prints it);
3. a catalogue or PyPI name whose file is installed there (``qwen2.5-coder-1.5b-pypi``);
4. a name from ``models list --all``: another app's model (Ollama's ``llama3.2:3b``, a file LM
   Studio keeps), used where it lies. Only this step walks other folders, so it runs last.

``locate_model`` returns the file, or raises a ``ModelError`` that says what was tried.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from ...errors import ModelError


def locate_model(name: str, models_dir: Path, *,
                 discover: Callable[[], Sequence] | None = None) -> Path:
    """The GGUF ``name`` means (see the module's docstring); ``discover`` lists the models of
    other apps (``discovery.discover_models``) and is called only when nothing nearer matches."""
    from .catalogue import catalogue_entry
    from .pypi import pypi_entry

    name = name.strip()
    if not name:
        raise ModelError("No model named.", hint="Give a GGUF path or a name from `searchain models list`.")
    path = Path(name).expanduser()
    candidates = [path, Path(models_dir) / name]
    entry = catalogue_entry(name) or pypi_entry(name)
    if entry is not None:
        candidates.append(Path(models_dir) / entry.filename)
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    if discover is not None:
        for model in discover():
            if name in (model.name, *model.aliases):
                return Path(model.path)
    if entry is not None:
        raise ModelError(f"The model {name!r} is not installed.",
                         hint=f"Get it with `searchain models pull {entry.name}`.")
    if path.parent != Path("."):  # a path, not a name
        raise ModelError(f"Model file {path} does not exist.",
                         hint="Check the path, or run `searchain models list --all` to see the models "
                              "on this computer by name.")
    raise ModelError(
        f"No model named {name!r}: it is not a file, not in the models folder ({models_dir}), "
        "and not a model another app keeps on this computer.",
        hint="`searchain models list --all` lists the names that work here; or give the path of "
             "a .gguf file.")


def discover_for(paths, llm_settings) -> Callable[[], Sequence]:
    """``discover`` for ``locate_model``: the GGUFs of other apps and of ``llm.model_folders``."""
    def discover():
        from .discovery import discover_models
        from .facts_cache import FactsCache

        return discover_models(paths.models_dir, llm_settings.model_folders, n_ctx=llm_settings.n_ctx,
                               facts=FactsCache.in_cache_dir(paths.cache_dir))
    return discover


def model_option(name: str, paths, llm_settings) -> str:
    """A ``--model`` option's value as the file to load (``locate_model``, other apps included)."""
    return str(locate_model(name, paths.models_dir, discover=discover_for(paths, llm_settings)))
