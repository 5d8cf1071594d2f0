"""The starter's notice (or the first-run guidance) turns into an offer when the user already
has a real model (#35).

A newcomer with no model chosen, answering with the tiny starter or with nothing at all, may well
have better ones from LM Studio, Ollama, GPT4All, Jan or the Hugging Face cache. After the first
frame, a background job looks for them (``searchain.llm.discover_models``: headers only, nothing
copied, the facts file makes a second start cheap) and picks the one to offer (``best_found``: a
chat model that fits this computer). If the notice is still up and no model was chosen
meanwhile, it becomes the offer: "Use <model>" (used where it lies) and "See all models…" (the
model dialog). Choosing any model or server withdraws it (``MainWindow.update_status``).
Nothing found: the notice stays as it was.
"""

from __future__ import annotations

from pathlib import Path

FOUND_TOPIC = "found"  # the offer's banner topic
REPLACES = ("starter", "first_run")  # the notices the offer takes the place of


def look_for_found_models(window):
    """Start the search; the job (for tests), or None when a model or server is already set."""
    from searchain.llm import FactsCache, best_found, discover_models, machine_facts, starter_model_path

    ctx = window.ctx
    llm = ctx.settings.llm
    if llm.model_path or llm.backend != "llama_cpp":
        return None
    models_dir, folders, n_ctx = ctx.paths.models_dir, list(llm.model_folders), llm.n_ctx
    cache_dir = ctx.paths.cache_dir

    def work(on_event, cancel):  # worker thread: copies of the settings only
        try:
            machine = machine_facts()
        except Exception:  # noqa: BLE001  (unknown memory: offer any chat model)
            machine = None
        models = discover_models(models_dir, folders, machine=machine, n_ctx=n_ctx, cancel=cancel,
                                 facts=FactsCache.in_cache_dir(cache_dir))
        starter = starter_model_path(models_dir)
        best = best_found(models, exclude=[starter] if starter else [])
        others = [m for m in models if m.usable and m is not best]
        return best, len(others)

    return window.runner.start("find-models", work, on_done=lambda result: offer(window, *result))


def offer(window, best, others: int) -> bool:
    """Turn the starter's notice into the offer of ``best``; False when it is not the moment
    (nothing found, a model or server chosen meanwhile, the notice dismissed or replaced)."""
    from shiboken6 import isValid

    from .views.model_choice.found_panel import SOURCE_LABELS

    if best is None or not isValid(window):
        return False
    llm, bar = window.ctx.settings.llm, window.message_bar
    if llm.model_path or llm.backend != "llama_cpp" or bar.topic not in REPLACES or bar.isHidden():
        return False
    where = SOURCE_LABELS.get(best.source, best.source)
    more = f" {others} more are listed under See all models." if others else ""
    better = " It answers far better than the tiny starter model." if bar.topic == "starter" else ""
    window.found_model = str(best.path)
    bar.show_message(
        f"You already have {best.name} from {where}: a model that fits this computer.",
        f"SearChain can answer with it where it lies; nothing is copied.{better}{more}",
        kind="info", actions=[("use_found", f"Use {best.name}"), ("catalogue", "See all models…")],
        topic=FOUND_TOPIC)
    return True


def use_found_model(window) -> None:
    """The offer's button: use the found file in place (``use_model`` withdraws the offer)."""
    path = getattr(window, "found_model", "")
    if path and Path(path).is_file():
        window.use_model(path)
    else:
        window.open_model_catalogue()  # gone since it was found: let the user pick again
