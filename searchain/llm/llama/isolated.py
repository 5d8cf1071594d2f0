"""``ProcessLLM``: the llama.cpp backend run in a worker process, so a native crash cannot take
the app down (``llm.isolation = "process"``, the default).

The proxy implements the same ``LLM`` protocol as ``LlamaCppLLM`` (complete/chat with streaming
``on_token``, ``cancel`` from any thread, grammars, log-probs, usage, ``warnings``, ``close``) and
forwards the backend's other public methods (``tokenize``, ``render_chat``, ``reset_cache``...)
and attributes (``facts``, ``n_ctx``, ``n_gpu_layers``...). The model itself lives in
``python -m searchain.llm.llama.worker``, which imports llama.cpp before numpy (issue #21).

When the worker dies (SIGSEGV or SIGABRT inside llama.cpp, the OOM killer's SIGKILL), the call
raises ``ModelCrashed``: a ``ModelError`` that names the signal, what the model was doing and
what to try. Nothing else is lost: the caller's conversation, the app, the CLI keep running,
and the next call starts a new worker (a warning says so). A crash while loading on the GPU is
retried once on the CPU, as a failed GPU load already was in-process.

Cost: the tokens cross a local socket only when ``on_token`` is given (one small message per
token); BENCHMARKS.md (issue #21) has the throughput against in-process and bare llama.cpp.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Sequence

from ... import errors
from ...config import LLMSettings
from ...config import source_root

from ...errors import ModelError
from ...events import CancelToken, EventCallback, emit
from ..base import ChatMessage, Completion, GenerationParams, TokenCallback
from ..events import LLMWarning
from ..models.gguf_info import ModelFacts, read_model_facts

log = logging.getLogger("searchain.llm")

# A bundled (PyInstaller) app has no ``python -m``: its launcher runs the worker on this flag.
WORKER_FLAG = "--searchain-llm-worker"
SIGNAL_WORDS = {"SIGSEGV": "segmentation fault", "SIGABRT": "abort", "SIGKILL": "killed",
                "SIGBUS": "bus error", "SIGILL": "illegal instruction",
                "SIGFPE": "arithmetic error"}
FAULT_ENV = "SEARCHAIN_TEST_LLM_FAULT"
POLL_SECONDS = 0.05  # how often a waiting call looks at its cancel token


class ModelCrashed(ModelError):
    """The model's worker process died. ``signal_name`` (``"SIGSEGV"``...) or ``exit_code``
    says how; ``phase`` what it was doing (``"loading"``, ``"chat"``...); ``log_tail`` holds
    the worker's last lines of output (llama.cpp's log, the Python stack of the crash)."""

    def __init__(self, message: str, *, hint: str, signal_name: str = "", exit_code: int = 0,
                 phase: str = "", log_tail: Sequence[str] = ()):
        super().__init__(message, hint=hint)
        self.signal_name, self.exit_code, self.phase = signal_name, exit_code, phase
        self.log_tail = list(log_tail)


def launch_worker() -> tuple[subprocess.Popen, Connection]:
    """Start ``searchain.llm.llama.worker`` with a socket to it; its output comes on ``proc.stdout``."""
    parent, child = socket.socketpair()
    env = dict(os.environ)
    root = str(source_root())  # so the worker imports this searchain
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen(
            worker_command(child.fileno()), pass_fds=(child.fileno(),), env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        parent.close()
        raise ModelError(f"The model process could not be started: {exc}",
                         hint="Set llm.isolation to inprocess "
                              "(`searchain config set llm.isolation inprocess`).") from exc
    finally:
        child.close()
    return proc, Connection(parent.detach())


def probe_worker(timeout: float = 120.0) -> dict:
    """Start a worker, ask which llama.cpp it runs, end it (``searchain doctor``). Raises
    ``ModelError`` when it cannot start or does not answer within ``timeout`` seconds."""
    proc, conn = launch_worker()
    try:
        conn.send(("probe",))
        if not conn.poll(timeout):
            raise ModelError(f"The model process did not answer within {timeout:.0f} s.",
                             hint="The machine may be overloaded; try again.")
        kind, *body = conn.recv()
        if kind != "done":
            raise _rebuild_error(*body)
        conn.send(("close",))
        return body[0]
    except (EOFError, OSError) as exc:
        code = proc.wait(timeout=10)
        output = proc.stdout.read().decode("utf-8", "replace").strip().splitlines()
        raise describe_crash(code, "starting", "", output[-40:], on_gpu=False) from exc
    finally:
        conn.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def worker_command(fd: int) -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_FLAG, str(fd)]
    return [sys.executable, "-X", "faulthandler", "-m", "searchain.llm.llama.worker", str(fd)]


class ProcessLLM:
    """A GGUF loaded in a worker process. Loads at construction (errors surface there, as with
    ``LlamaCppLLM``); calls are serialised.

    ``fault`` (default ``$SEARCHAIN_TEST_LLM_FAULT``) is a test hook that makes the first worker
    crash on purpose: ``"segv@load"``, ``"abort@token:3"`` (at the 3rd generated token),
    ``"kill@token:1"``; workers started after a crash run without it."""

    def __init__(self, settings: LLMSettings, *, on_event: EventCallback | None = None,
                 fault: str | None = None):
        if not settings.model_path:
            raise ModelError("No model file is set.",
                             hint="Choose a GGUF in Settings, or run `searchain models pull NAME`.")
        self.settings = settings
        self.path = Path(settings.model_path).expanduser()
        self.facts: ModelFacts = read_model_facts(self.path)  # a bad file fails here, at once
        self.name = self.path.stem
        self.warnings: list[LLMWarning] = []
        self.crashes = 0  # worker deaths seen by this proxy
        self._on_event = on_event
        self._fault = fault if fault is not None else os.environ.get(FAULT_ENV) or None
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._output_thread: threading.Thread | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=40)
        self._state: dict[str, Any] = {}
        self._methods: frozenset[str] = frozenset()
        self._closed = False
        with self._lock:
            self._start()

    # -- the LLM protocol -------------------------------------------------------------------

    @property
    def supports_grammar(self) -> bool:
        return bool(self._state.get("supports_grammar", True))

    @property
    def worker_pid(self) -> int | None:
        """The worker's process id while it runs (tests and ``doctor`` use it)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None,
                 cancel: CancelToken | None = None) -> Completion:
        return self._invoke("complete", (prompt, params), {}, on_token, cancel)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(),
             *, on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        return self._invoke("chat", ([dict(m) for m in messages], params), {}, on_token, cancel)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def __getattr__(self, name: str):
        """The backend's other public attributes and methods, served from the worker."""
        if name.startswith("_"):
            raise AttributeError(name)
        state = self.__dict__.get("_state", {})
        if name in state:
            return state[name]
        if name in self.__dict__.get("_methods", ()):
            return lambda *args, **kwargs: self._invoke(name, args, kwargs, None, None)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __del__(self):
        try:
            self._stop(graceful=False)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- worker lifecycle ------------------------------------------------------------------

    def _start(self) -> None:
        """Start a worker and load the model in it; a crash while loading on the GPU is retried
        once on the CPU."""
        try:
            self._spawn_and_load(self.settings)
        except ModelCrashed as crash:
            if not self._state.get("_loading_on_gpu"):
                raise
            self._warn(f"Loading {self.path.name} on the GPU crashed the model process "
                       f"({crash.signal_name or crash.exit_code}); trying the CPU (slower).",
                       "Check the GPU driver and the llama-cpp-python build (docs/llm.md).")
            self._spawn_and_load(dataclasses.replace(self.settings, n_gpu_layers=0))

    def _spawn_and_load(self, settings: LLMSettings) -> None:
        self._proc, self._conn = launch_worker()
        self._tail.clear()
        self._output_thread = threading.Thread(target=self._drain_output, args=(self._proc,),
                                               daemon=True, name="llm-worker-output")
        self._output_thread.start()
        self._state = {"_loading_on_gpu": False}
        fault, self._fault = self._fault, None  # the test hook's crash happens once
        try:
            info = self._request(("load", settings, fault), "loading", None, None)
        except ModelCrashed:
            raise
        except BaseException:
            self._stop()  # the model did not load (bad file, too little RAM...): end the worker
            raise
        self._methods = frozenset(info["methods"])
        self._state.update(info["properties"])

    def _stop(self, graceful: bool = True) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is None:
            return
        try:
            if graceful and proc.poll() is None and conn is not None:
                conn.send(("close",))
                if conn.poll(10):
                    conn.recv()
            proc.wait(timeout=10 if graceful else 0.5)
        except (OSError, EOFError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if conn is not None:
                conn.close()

    def _drain_output(self, proc: subprocess.Popen) -> None:
        """Keep the worker's last lines (for the crash report) and pass them on to stderr, where
        the in-process backend's llama.cpp log would have gone."""
        with proc.stdout:
            for raw in iter(proc.stdout.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip()
                self._tail.append(line)
                print(line, file=sys.stderr)

    # -- calls ------------------------------------------------------------------------------

    def _invoke(self, method: str, args: tuple, kwargs: dict, on_token: TokenCallback | None,
                cancel: CancelToken | None):
        with self._lock:
            if self._closed:
                raise ModelError(f"The model {self.name} was closed.", hint="Load it again.")
            if self._proc is None:  # the last worker crashed: start a new one
                self._warn(f"Starting the model {self.name} again after its process crashed.")
                self._start()
            message = ("call", method, args, kwargs, on_token is not None)
            return self._request(message, method, on_token, cancel)

    def _request(self, message: tuple, phase: str, on_token: TokenCallback | None,
                 cancel: CancelToken | None):
        """Send one request and handle the worker's replies until its answer comes back."""
        conn, proc = self._conn, self._proc
        failure: BaseException | None = None  # raised by on_token: re-raised when the call ends
        cancel_sent = False
        answered = False
        try:
            conn.send(message)
            while True:
                if cancel is not None and cancel.cancelled and not cancel_sent:
                    conn.send(("cancel",))
                    cancel_sent = True
                if not conn.poll(POLL_SECONDS):
                    if proc.poll() is not None and not conn.poll(0):
                        raise EOFError("the model process ended")
                    continue
                kind, *body = conn.recv()
                if kind == "token" and failure is None:
                    try:
                        on_token(body[0])
                    except BaseException as exc:  # noqa: BLE001 - stop the call, then raise
                        failure, cancel_sent = exc, True
                        conn.send(("cancel",))
                elif kind == "event":
                    if isinstance(body[0], LLMWarning):
                        self.warnings.append(body[0])
                    emit(self._on_event, body[0])
                elif kind == "loading":
                    self._state["_loading_on_gpu"] = body[0] != 0
                elif kind in ("done", "error"):
                    answered = True
                    if kind == "error":
                        raise _rebuild_error(*body)
                    self._state.update({k: v for k, v in body[1].items() if k != "warnings"})
                    if failure is not None:
                        raise failure
                    return body[0]
        except (EOFError, OSError) as exc:
            if answered:
                raise
            raise self._crashed(phase) from exc
        except BaseException:
            if not answered:  # e.g. Ctrl+C while waiting: the worker is mid-call, start afresh
                self._stop(graceful=False)
            raise

    def _crashed(self, phase: str) -> ModelCrashed:
        proc = self._proc
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # the socket broke but the process lives on: end it
            proc.kill()
            code = proc.wait()
        if self._output_thread is not None:
            self._output_thread.join(timeout=2)  # its last lines are the crash report
        tail = list(self._tail)
        self._stop(graceful=False)
        self.crashes += 1
        crash = describe_crash(code, phase, self.path.name, tail,
                               on_gpu=bool(self._state.get("_loading_on_gpu")))
        log.error("the model process crashed (%s, %s); its last output:\n%s",
                  crash.signal_name or crash.exit_code, phase, "\n".join(tail))
        return crash

    def _warn(self, message: str, hint: str = "") -> None:
        warning = LLMWarning(message, hint)
        self.warnings.append(warning)
        emit(self._on_event, warning)


def describe_crash(code: int, phase: str, file_name: str, tail: Sequence[str], *,
                   on_gpu: bool) -> ModelCrashed:
    """The user-facing error for a worker that ended with ``code`` (minus a signal number)."""
    signal_name = ""
    if code < 0:
        try:
            signal_name = signal.Signals(-code).name
        except ValueError:
            signal_name = f"signal {-code}"
        how = f"{signal_name} ({SIGNAL_WORDS.get(signal_name, 'a signal')})"
    else:
        how = f"exit status {code}"
    doing = {"loading": "loading", "starting": "starting", "complete": "generating text",
             "chat": "generating text"}.get(phase, f"running {phase}")
    said = _last_words(tail)
    message = (f"The model process crashed with {how} while {doing}"
               + (f" with {file_name}" if file_name else "")
               + (f" (llama.cpp: {said})" if said else "")
               + ". The app keeps running and your conversation is saved.")
    if signal_name == "SIGKILL":
        hint = ("The system most likely ran out of memory. Lower the context size (Settings > "
                "Model, llm.n_ctx), close other programs, or pick a smaller or more quantised "
                "model.")
    else:
        hint = ("This is a crash inside llama.cpp, not in your data. Try "
                + ("running on the CPU (GPU layers = 0, `searchain config set llm.n_gpu_layers "
                   "0`), " if on_gpu else "")
                + "another llama-cpp-python build (docs/llm.md), or another model.")
    hint += " The next question starts the model again; `searchain doctor --thorough` test-loads it."
    return ModelCrashed(message, hint=hint, signal_name=signal_name,
                        exit_code=code if code > 0 else 0, phase=phase, log_tail=tail)


def _last_words(tail: Sequence[str]) -> str:
    """llama.cpp's own complaint, if its last lines hold one (a failed GGML assertion...)."""
    for line in reversed(tail):
        lowered = line.lower()
        if "ggml_assert" in lowered or "error" in lowered or "failed" in lowered:
            return line.strip()[:200]
    return ""


def _rebuild_error(kind: str, message: str, hint: str) -> BaseException:
    cls = getattr(errors, kind, None)
    if isinstance(cls, type) and issubclass(cls, errors.SearchainError):
        return cls(message, hint=hint or None)
    return RuntimeError(f"The model process failed: {message}\n{hint}")
