"""``searchain doctor``'s checks of where the model runs (``llm.isolation``), and with
``--thorough`` a test load of the model in a worker process: a model that crashes llama.cpp while
loading is found here, with its signal and the fix, instead of in the middle of a question."""

from __future__ import annotations

import time


def isolation_checks(settings, thorough: bool) -> list:
    from .check import FAIL, OK, WARN, Check
    from ..errors import ModelError
    from ..llm.llama.isolated import ModelCrashed, ProcessLLM, probe_worker

    llm = settings.llm
    if llm.isolation != "process":
        return [Check("llama.cpp", OK, "The model runs inside the app (llm.isolation = inprocess): "
                      "a crash in llama.cpp ends the app.",
                      "To keep the app running through such crashes: "
                      "`searchain config set llm.isolation process`.")]
    try:
        started = time.perf_counter()
        info = probe_worker()
    except ModelError as exc:
        return [Check("llama.cpp", FAIL, f"The model process cannot start: {exc.message}",
                      (exc.hint or "") + " Or run the model inside the app: "
                      "`searchain config set llm.isolation inprocess`.")]
    checks = [Check("llama.cpp", OK, f"The model runs in its own process (llama-cpp-python "
                    f"{info['llama_cpp']} started there in {time.perf_counter() - started:.1f} s): "
                    "a crash in llama.cpp cannot end the app.")]
    if not thorough or not llm.model_path:
        return checks
    try:
        started = time.perf_counter()
        model = ProcessLLM(llm)
    except ModelCrashed as crash:
        return checks + [Check("model", FAIL, crash.message, crash.hint or "")]
    except ModelError:
        return checks  # the model file check above already says what is wrong with the file
    seconds = time.perf_counter() - started
    warnings = [str(w) for w in model.warnings]
    where = "on the GPU" if model.n_gpu_layers else "on the CPU"
    model.close()
    if warnings:
        return checks + [Check("model", WARN, f"Test load: {model.name} loaded {where} with "
                               f"warnings: {'; '.join(warnings)}", "See docs/llm.md.")]
    return checks + [Check("model", OK, f"Test load: {model.name} loaded {where} in a worker "
                           f"process in {seconds:.1f} s.")]
