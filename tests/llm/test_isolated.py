"""The process-isolated backend: same behaviour as in-process, and a native crash in the worker
(injected with the ``fault`` test hook: a real SIGSEGV/SIGABRT/SIGKILL of the worker process)
becomes a ``ModelCrashed`` error while the caller keeps running."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import pytest

from searchain.errors import ModelError, SearchainError
from searchain.events import CancelToken
from searchain.llm.base import LLM, GenerationParams
from searchain.llm.llama.isolated import ModelCrashed, ProcessLLM
from searchain.llm.loader import load_llm
from searchain.reasoning.chain.grammar import coq_grammar

pytestmark = pytest.mark.slow  # each test starts a worker process with a real llama.cpp model

WORDS = r'root ::= "The " [a-z]{2,8} " is " [a-z]{2,8} "."'
MESSAGES = [{"role": "user", "content": "Describe the lantern."}]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def worker(tiny_llm_settings):
    llm = ProcessLLM(tiny_llm_settings)
    yield llm
    llm.close()


def test_load_llm_isolates_by_default_and_matches_in_process(tiny_llm_settings, tiny_llm):
    assert tiny_llm_settings.isolation == "process"
    llm = load_llm(tiny_llm_settings)
    try:
        assert isinstance(llm, ProcessLLM) and isinstance(llm, LLM)
        assert llm.worker_pid != os.getpid() and _alive(llm.worker_pid)
        params = GenerationParams(max_tokens=40, grammar=coq_grammar(2), logprobs=True)
        streamed: list[str] = []
        got = llm.chat(MESSAGES, params, on_token=streamed.append)
        tiny_llm.reset_cache()
        want = tiny_llm.chat(MESSAGES, params)
        assert got.text == want.text and "".join(streamed) == got.text
        assert got.usage == want.usage and got.finish_reason == want.finish_reason
        assert got.token_logprobs == pytest.approx(want.token_logprobs)
        # What the reader, the reasoning and the benchmarks read from the backend.
        assert llm.supports_grammar and llm.n_ctx == tiny_llm.n_ctx
        assert llm.facts == tiny_llm.facts and llm.n_gpu_layers == 0
        assert llm.tokenize("hello") == tiny_llm.tokenize("hello")
        assert llm.render_chat(MESSAGES) == tiny_llm.render_chat(MESSAGES)
        assert llm.grammar_verdict(WORDS, "The cat is red.") == "complete"
        llm.reset_cache()  # the KV cache is the worker's: this call evaluates the whole prompt
        again = llm.chat(MESSAGES, params)
        assert again.usage.prompt_tokens_evaluated == again.usage.prompt_tokens
    finally:
        llm.close()


def test_errors_in_the_worker_come_back_as_the_same_errors(worker):
    with pytest.raises(SearchainError, match="grammar could not be parsed"):
        worker.complete("x", GenerationParams(max_tokens=4, grammar="root ::= ("))
    with pytest.raises(ModelError, match="context holds"):
        worker.complete("word " * 3000, GenerationParams(max_tokens=4))
    assert worker.complete("x", GenerationParams(max_tokens=40, grammar=WORDS)).text.startswith("The ")


def test_segfault_while_loading_is_a_clear_error(tiny_llm_settings):
    with pytest.raises(ModelCrashed) as info:
        ProcessLLM(tiny_llm_settings, fault="segv@load")
    crash = info.value
    assert isinstance(crash, ModelError)
    assert crash.signal_name == "SIGSEGV" and crash.phase == "loading"
    assert "SIGSEGV (segmentation fault) while loading" in crash.message
    assert "tiny.gguf" in crash.message and "conversation is saved" in crash.message
    assert "another llama-cpp-python build" in crash.hint and "another model" in crash.hint
    assert any("Segmentation fault" in line for line in crash.log_tail)  # faulthandler's report


def test_segfault_while_generating_then_the_next_call_restarts(tiny_llm_settings):
    llm = ProcessLLM(tiny_llm_settings, fault="segv@token:3")
    try:
        first_pid = llm.worker_pid
        streamed: list[str] = []
        with pytest.raises(ModelCrashed) as info:
            llm.chat(MESSAGES, GenerationParams(max_tokens=40, grammar=WORDS),
                     on_token=streamed.append)
        assert info.value.phase == "chat" and "while generating text" in info.value.message
        assert len(streamed) == 2  # what streamed before the crash arrived
        assert llm.worker_pid is None and not _alive(first_pid) and llm.crashes == 1
        c = llm.chat(MESSAGES, GenerationParams(max_tokens=40, grammar=WORDS))
        assert c.text.startswith("The ") and c.finish_reason == "stop"
        assert llm.worker_pid not in (None, first_pid)
        assert "again after its process crashed" in llm.warnings[-1].message
    finally:
        llm.close()


@pytest.mark.parametrize("fault, signal_name, advice", [
    ("abort@token:1", "SIGABRT", "another model"),
    ("kill@token:2", "SIGKILL", "ran out of memory"),
])
def test_abort_and_oom_kill(tiny_llm_settings, fault, signal_name, advice):
    llm = ProcessLLM(tiny_llm_settings, fault=fault)
    try:
        with pytest.raises(ModelCrashed) as info:
            llm.complete("x", GenerationParams(max_tokens=40, grammar=WORDS))
        assert info.value.signal_name == signal_name and advice in info.value.hint
    finally:
        llm.close()


def test_cancel_from_another_thread_mid_stream(worker):
    cancel = CancelToken()
    streamed: list[str] = []
    first = threading.Event()

    def on_token(text: str) -> None:
        streamed.append(text)
        first.set()

    canceller = threading.Thread(target=lambda: first.wait(60) and cancel.cancel())
    canceller.start()
    c = worker.complete("x", GenerationParams(max_tokens=1500, grammar=r'root ::= [a-z]+'),
                        on_token=on_token, cancel=cancel)
    canceller.join()
    assert c.finish_reason == "cancelled"
    assert 1 <= c.usage.completion_tokens < 1500 and c.text == "".join(streamed)
    # The worker stays in step: the next call answers normally.
    assert worker.complete("x", GenerationParams(max_tokens=40, grammar=WORDS)).finish_reason == "stop"


def test_an_on_token_error_stops_the_call_and_keeps_the_worker(worker):
    def explode(_text: str) -> None:
        raise ValueError("the window went away")

    with pytest.raises(ValueError, match="went away"):
        worker.complete("x", GenerationParams(max_tokens=200, grammar=r'root ::= [a-z]+'),
                        on_token=explode)
    assert worker.crashes == 0
    assert worker.complete("x", GenerationParams(max_tokens=40, grammar=WORDS)).text.endswith(".")


def test_close_ends_the_worker(tiny_llm_settings):
    llm = ProcessLLM(tiny_llm_settings)
    pid = llm.worker_pid
    llm.close()
    assert not _alive(pid)
    llm.close()  # twice is fine
    with pytest.raises(ModelError, match="was closed"):
        llm.complete("x")


def test_a_model_that_cannot_load_leaves_no_worker(tiny_llm_settings, tmp_path):
    before = set(_my_workers())  # other tests' models (shared fixtures) may still be loaded
    with pytest.raises(ModelError, match="n_ctx|context"):
        ProcessLLM(replace(tiny_llm_settings, n_ctx=10 ** 9))  # too little RAM for the cache
    assert set(_my_workers()) - before == set()  # the worker that refused the load has ended


def _my_workers() -> list[int]:
    """Model workers started by this process that still exist."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                command = fh.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"searchain.llm.llama.worker" in command:
            found.append(int(entry))
    return found


def test_doctor_checks_the_worker_and_test_loads_the_model(tiny_llm_settings, monkeypatch):
    from searchain.config import Settings
    from searchain.doctor.check import FAIL, OK
    from searchain.doctor.isolation import isolation_checks

    settings = Settings()
    settings.llm = tiny_llm_settings
    started, loaded = isolation_checks(settings, thorough=True)
    assert started.status == OK and "its own process" in started.summary
    assert loaded.status == OK and "Test load: tiny loaded on the CPU" in loaded.summary
    assert len(isolation_checks(settings, thorough=False)) == 1  # no test load without --thorough
    # A model that crashes llama.cpp while loading is reported with its signal and the fix.
    monkeypatch.setenv("SEARCHAIN_TEST_LLM_FAULT", "abort@load")
    _, crashed = isolation_checks(settings, thorough=True)
    assert crashed.status == FAIL and "SIGABRT" in crashed.summary and "another model" in crashed.fix
    settings.llm = replace(tiny_llm_settings, isolation="inprocess")
    (inside,) = isolation_checks(settings, thorough=True)
    assert inside.status == OK and "ends the app" in inside.summary
    assert "llm.isolation process" in inside.fix


def test_the_worker_module_loads_neither_llama_cpp_nor_numpy_until_it_runs():
    """`main` imports llama.cpp first thing (issue #21: before numpy); importing the module
    alone must not have loaded numpy already, or that order could not hold."""
    import subprocess
    import sys

    code = ("import sys, searchain.llm.llama.worker; "
            "print('numpy' in sys.modules, 'llama_cpp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
