"""The model worker process: one ``LlamaCppLLM`` served to ``isolated.ProcessLLM`` over a socket.

Run as ``python -m searchain.llm.llama.worker FD`` (FD: the inherited socket to the app). It imports
``llama_cpp`` before anything else (on some hosts llama.cpp crashes while loading a model when
numpy was imported first: issue #21), then answers requests one at a time. A native crash here
(SIGSEGV, an abort in a GGML assertion, the kernel's OOM killer) ends this process only; the
app sees the socket close and the exit signal, and tells the user.

Messages are pickled tuples (``multiprocessing.connection`` framing):

- app -> worker: ``("load", settings, fault)``, ``("call", method, args, kwargs, stream)``,
  ``("cancel",)`` (stops the running call), ``("probe",)`` (versions, no model), ``("close",)``;
- worker -> app: ``("loading", n_gpu_layers)`` just before llama.cpp opens the file,
  ``("event", obj)`` for warnings, ``("token", text)`` while streaming, ``("done", value, state)``,
  ``("error", kind, message, hint)`` where kind names a ``searchain.errors`` class or ``"bug"``.

``state`` carries the backend's public attributes that changed during the call (``warnings``,
``n_ctx``...), so the proxy can show them without a round trip.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import queue
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection

from ...events import CancelToken

# Test hook: where to crash on purpose, and how (see ``_inject``).
FAULT_KINDS = {"segv": signal.SIGSEGV, "abort": signal.SIGABRT, "kill": signal.SIGKILL}


def main(argv: list[str] | None = None) -> int:
    # llama.cpp before numpy (see the module docstring). Nothing this module imports at its top
    # loads numpy, so importing here, first thing, keeps that order without the import's cost
    # falling on whoever merely imports this module.
    import llama_cpp  # noqa: F401

    argv = sys.argv[1:] if argv is None else argv
    faulthandler.enable()  # a native crash prints the Python stack to stderr (the app logs it)
    conn = Connection(int(argv[0]))
    Worker(conn).serve()
    return 0


class Worker:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.llm = None
        self.fault: str | None = None
        self.methods: frozenset[str] = frozenset()  # the backend's public methods (the app may call)
        self.requests: queue.Queue = queue.Queue()
        self.cancel = CancelToken()  # the running (or next) call's; made when the call arrives
        self._send_lock = threading.Lock()
        self._state: dict = {}

    # -- plumbing ---------------------------------------------------------------------------

    def send(self, *message) -> None:
        with self._send_lock:
            self.conn.send(message)

    def _receive(self) -> None:
        """Reader thread: cancels act at once; everything else queues for the main thread. When
        the app goes away (socket closed), the worker exits too."""
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                os._exit(0)
            if message[0] == "cancel":
                self.cancel.cancel()
            else:
                if message[0] == "call":  # the app sends one call at a time, so no race here
                    self.cancel = CancelToken()
                self.requests.put(message)

    def serve(self) -> None:
        threading.Thread(target=self._receive, name="llm-worker-receive", daemon=True).start()
        while True:
            message = self.requests.get()
            kind = message[0]
            if kind == "close":
                if self.llm is not None:
                    self.llm.close()
                self.send("done", None, {})
                return
            try:
                if kind == "probe":
                    value = _probe()
                else:
                    value = self._load(*message[1:]) if kind == "load" else self._call(*message[1:])
            except BaseException as exc:  # noqa: BLE001 - every failure goes back to the app
                self._send_error(exc)
            else:
                self.send("done", value, self._changed_state())

    def _send_error(self, exc: BaseException) -> None:
        from ...errors import SearchainError

        if isinstance(exc, SearchainError):
            self.send("error", type(exc).__name__, exc.message, exc.hint or "")
        else:
            self.send("error", "bug", f"{type(exc).__name__}: {exc}", traceback.format_exc())

    # -- requests ---------------------------------------------------------------------------

    def _load(self, settings, fault: str | None) -> dict:
        from . import llama_cpp_backend
        from .llama_cpp_backend import LlamaCppLLM

        self.fault = fault
        opener = llama_cpp_backend.open_llama

        def open_reported(path, **kwargs):
            self.send("loading", kwargs.get("n_gpu_layers", 0))
            self._inject("load")
            return opener(path, **kwargs)

        llama_cpp_backend.open_llama = open_reported  # one model per process: no one else sees it
        try:
            self.llm = LlamaCppLLM(settings, on_event=lambda event: self.send("event", event))
        finally:
            llama_cpp_backend.open_llama = opener
        kind = type(self.llm)
        public = [name for name in dir(kind) if not name.startswith("_") and name != "close"]
        self.methods = frozenset(name for name in public if callable(getattr(kind, name)))
        properties = {name: getattr(self.llm, name) for name in public
                      if isinstance(getattr(kind, name), property)}
        return {"methods": sorted(self.methods), "properties": properties, "pid": os.getpid()}

    def _call(self, method: str, args: tuple, kwargs: dict, stream: bool):
        if self.llm is None or method not in self.methods:
            raise RuntimeError(f"the model worker cannot run {method!r} now")
        if method in ("complete", "chat"):
            kwargs["cancel"] = self.cancel
            count = [0]

            def on_token(text: str) -> None:
                count[0] += 1
                self._inject(f"token:{count[0]}")
                if stream:
                    self.send("token", text)

            kwargs["on_token"] = on_token
        return getattr(self.llm, method)(*args, **kwargs)

    def _changed_state(self) -> dict:
        """The backend's public, plain attributes that differ from what was last sent."""
        if self.llm is None:
            return {}
        changed = {}
        for name, value in vars(self.llm).items():
            if name.startswith("_") or callable(value):
                continue
            if isinstance(value, list):
                value = list(value)
            if self._state.get(name, _MISSING) != value:
                try:
                    pickle.dumps(value)
                except Exception:  # noqa: BLE001 - not every attribute can cross processes
                    continue
                changed[name] = self._state[name] = value
        return changed

    def _inject(self, where: str) -> None:
        """Test hook: crash here when the app asked for it (``fault = "segv@load"`` etc.)."""
        if not self.fault:
            return
        how, _, at = self.fault.partition("@")
        if at == where:
            sys.stderr.flush()
            os.kill(os.getpid(), FAULT_KINDS[how])


def _probe() -> dict:
    """What ``searchain doctor`` asks a fresh worker: which llama.cpp it runs."""
    import llama_cpp

    return {"llama_cpp": llama_cpp.__version__, "pid": os.getpid(),
            "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload())}


_MISSING = object()

if __name__ == "__main__":
    sys.exit(main())
