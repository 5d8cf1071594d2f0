"""``load_llm``: the one entry point the app and the CLI use to get an ``LLM`` from settings.

``settings.backend`` picks the backend: ``llama_cpp`` loads ``settings.model_path`` (the file is
validated from its GGUF header first, RAM is checked, GPU offload is automatic and falls back to
the CPU with an ``LLMWarning`` if it fails) in a worker process (``settings.isolation ==
"process"``: a crash in llama.cpp becomes a ``ModelCrashed`` error, see ``isolated.py``) or in
this process (``"inprocess"``), ``openai`` talks to
``settings.server_url`` (model: ``settings.server_model``, else the server's first listed one;
API key: ``settings.server_key``, else ``$SEARCHAIN_LLM_API_KEY``; ``server_timeout``,
``server_grammar`` and ``server_family`` as ``openai_backend`` describes).
Warnings go to ``on_event`` and stay on the instance as ``.warnings``.
"""

from __future__ import annotations

from ..config import LLMSettings
from ..errors import ConfigError
from ..events import EventCallback
from .base import LLM
from .events import LLMWarning
from .gpu import gpu_offload_supported

BACKENDS = ("llama_cpp", "openai")
ISOLATIONS = ("process", "inprocess")  # llm.isolation: a worker process, or this one

__all__ = ["BACKENDS", "ISOLATIONS", "LLMWarning", "gpu_offload_supported", "load_llm"]


def load_llm(settings: LLMSettings, *, on_event: EventCallback | None = None) -> LLM:
    if settings.backend == "llama_cpp":
        if settings.isolation == "process":
            from .llama.isolated import ProcessLLM

            return ProcessLLM(settings, on_event=on_event)
        from .llama.llama_cpp_backend import LlamaCppLLM

        return LlamaCppLLM(settings, on_event=on_event)
    if settings.backend == "openai":
        if not settings.server_url:
            raise ConfigError("The OpenAI-compatible backend needs a server URL.",
                              hint="Set llm.server_url, e.g. http://127.0.0.1:8080.")
        from .server.openai_backend import OpenAICompatibleLLM

        # Nothing is sent yet: the first request checks the model name, the family and (auto)
        # whether grammars are honoured.
        grammar = {"auto": "auto", "on": "grammar", "off": None}.get(settings.server_grammar, "auto")
        return OpenAICompatibleLLM(settings.server_url, model=settings.server_model or None,
                                   api_key=settings.server_key or None,
                                   timeout=settings.server_timeout, grammar_field=grammar,
                                   family=settings.server_family)
    raise ConfigError(f"Unknown LLM backend {settings.backend!r} (settings llm.backend).",
                      hint=f"Use one of: {', '.join(BACKENDS)}.")
