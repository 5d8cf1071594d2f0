"""An LLM served over an OpenAI-compatible HTTP API (llama.cpp's server, llama-cpp-python's
server, vLLM, Ollama, LM Studio), for models too big for this machine or already served.

Standard library only (``http.client``): the runtime stays offline and talks to exactly the URL
the user configured. ``complete`` uses ``/v1/completions``, ``chat`` uses ``/v1/chat/completions``;
with ``on_token`` the reply is streamed as server-sent events and ``cancel`` closes the connection
between events (servers stop generating when the client goes away).

Nothing is sent when the object is made: on first use it reads the server's model list once
(``_connect``), which names the model when none was given, turns a name the server does not have
into a clear error (llama-cpp-python's server would silently answer with its own model), tells
the server's family (for the switches only one family takes: thinking off, sampling) and, with
``grammar_field="auto"``, finds out with one tiny request whether GBNF grammars are honoured.

Usage: the server's own counts when it reports them (non-streamed replies always; streamed ones
when the server honours ``stream_options.include_usage``). Otherwise ``completion_tokens`` is the
number of streamed text events and ``prompt_tokens`` is 0 (unknown). ``prompt_tokens_evaluated``
is llama.cpp's ``timings.prompt_n`` when present, else equal to ``prompt_tokens``.

The API key is sent as a Bearer token and never appears in a message: server replies quoted in
errors have it masked.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
from typing import Any, Sequence
from urllib.parse import urlsplit

from ...errors import ModelError
from ...events import CancelToken
from ..base import ChatMessage, Completion, GenerationParams, TokenCallback, Usage
from ..chat_prompt import validate_messages
from ..model_kind import strip_special_tokens  # a server's template can leak them too
from .openai_wire import error_detail, finish_of, logprobs_of, usage_of
from .openai_wire import sse_events as _sse_events  # one name tests can wrap (a kill mid-stream)

API_KEY_ENV = "SEARCHAIN_LLM_API_KEY"
FAMILIES = ("auto", "llama.cpp", "ollama", "lmstudio", "vllm", "other")  # llm.server_family
GRAMMAR_MODES = ("auto", "on", "off")  # llm.server_grammar
# Model families whose chat template thinks aloud unless told not to. Only these get a switch:
# a hosted API may refuse a field it does not know. Output stripping stays the fallback.
THINKING_FAMILIES = ("qwen3", "qwq", "deepseek-r1")
# ``owned_by`` in /v1/models, as each server writes it.
_OWNERS = {"llamacpp": "llama.cpp", "me": "llama.cpp", "vllm": "vllm", "organization_owner": "lmstudio"}
# A reply no model writes unasked: the grammar was honoured exactly when it comes back.
GRAMMAR_PROBE = ('root ::= "zq-7"', "zq-7")
_KEY_MASK = "***"


def server_label(base_url: str, model: str) -> str:
    """"qwen3:8b @ 127.0.0.1:11434": how answers name a server's model."""
    return f"{model} @ {urlsplit(base_url.strip()).netloc or base_url}"


class OpenAICompatibleLLM:
    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 120.0, *, grammar_field: str | None = "grammar",
                 family: str = "auto"):
        """``grammar_field``: the request field that carries a GBNF grammar, None (never send one)
        or "auto" (find out on first use); ``family``: one of ``FAMILIES``."""
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(f"LLM server URL {base_url!r} is not an http(s) URL.",
                             hint="Use e.g. http://127.0.0.1:8080/v1 (the /v1 suffix is optional).")
        self.base_url = base_url.strip().rstrip("/")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        path = parts.path.rstrip("/")
        self._prefix = path if path.endswith("/v1") else path + "/v1"
        self._api_key = api_key or os.environ.get(API_KEY_ENV) or None
        self._timeout = float(timeout)
        self._grammar_field = grammar_field
        self._model = model or None
        self._family = None if family in ("auto", "", None) else family
        self._connected = False
        self.streamed = True  # whether the last streamed request came back as a stream
        self._lock = threading.RLock()
        self.warnings: list = []  # same attribute as LlamaCppLLM; nothing to warn about yet

    # -- what it is --------------------------------------------------------------------------

    @property
    def model(self) -> str:
        if self._model is None:
            self._connect()
        return self._model or ""

    @property
    def name(self) -> str:
        return server_label(self.base_url, self.model)

    @property
    def family(self) -> str:
        self._connect()
        return self._family or "other"

    @property
    def supports_grammar(self) -> bool:
        if self._grammar_field == "auto":
            self._connect()
        return self._grammar_field is not None

    def list_models(self) -> list[str]:
        """The model names the server lists (``GET /v1/models``)."""
        return [str(m.get("id")) for m in self._listing() if m.get("id")]

    def chat_text(self, messages: Sequence[ChatMessage], params: GenerationParams,
                  **extra: Any) -> str:
        """One non-streamed chat reply's text, with ``extra`` request fields (for probes)."""
        body = {**self._body(params, messages=[dict(m) for m in messages]), **self._thinking_off(),
                **extra}
        reply = self.request("POST", "/chat/completions", body)
        return ((reply.get("choices") or [{}])[0].get("message") or {}).get("content") or ""

    def check_grammar(self, field: str = "grammar") -> bool:
        """Whether the server constrains a chat reply by a GBNF grammar sent as ``field``."""
        grammar, expected = GRAMMAR_PROBE
        try:
            text = self.chat_text([{"role": "user", "content": "Reply with one word."}],
                                  GenerationParams(max_tokens=8), **{field: grammar})
        except ModelError as exc:
            if getattr(exc, "status", 0) in (400, 422):  # the field itself refused
                return False
            raise
        return text.strip() == expected

    # -- generation --------------------------------------------------------------------------

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None,
                 cancel: CancelToken | None = None) -> Completion:
        self._connect()
        body = self._body(params, prompt=prompt)
        if params.logprobs:
            body["logprobs"] = 1
        return self._run("/completions", body, params, on_token, cancel, chat=False)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(),
             *, on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        validate_messages(messages)
        self._connect()
        body = self._body(params, messages=[dict(m) for m in messages])
        body.update(self._thinking_off())
        if params.logprobs:  # llama-cpp-python returns none unless top_logprobs is given
            body.update(logprobs=True, top_logprobs=1)
        return self._run("/chat/completions", body, params, on_token, cancel, chat=True)

    def close(self) -> None:
        pass  # one connection per request: nothing held open

    # -- first use ---------------------------------------------------------------------------

    def _connect(self) -> None:
        with self._lock:
            if self._connected:
                return
            try:
                listing = self._listing()
            except ModelError as exc:
                if self._model is None or getattr(exc, "status", 0) != 404:
                    raise
                listing = []  # no /v1/models here: take the configured name on trust
            names = [str(m.get("id")) for m in listing if m.get("id")]
            if self._model is None:
                if not names:
                    raise ModelError(f"The server at {self.base_url} lists no models.",
                                     hint="Start it with a model loaded, or name the model explicitly.")
                self._model = names[0]
            elif names and self._model not in names:
                shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
                raise ModelError(f"The LLM server at {self.base_url} has no model named "
                                 f"{self._model!r}; it lists: {shown}.",
                                 hint="Pick one of those (Models > Use a server, or --server-model), "
                                      "or load that model on the server first.")
            if self._family is None:
                self._family = self._detect_family(listing)
            self._connected = True  # before the grammar check, which is itself a request
            if self._grammar_field == "auto":
                self._grammar_field = "grammar" if self.check_grammar("grammar") else None

    def _listing(self) -> list[dict]:
        return list(self.request("GET", "/models", None).get("data") or [])

    def _detect_family(self, listing: list[dict]) -> str:
        for entry in listing:
            family = _OWNERS.get(str(entry.get("owned_by", "")).lower())
            if family:
                return family
        try:  # Ollama answers at its root, beside /v1
            version = self.request("GET", "/api/version", None, root=True)
        except ModelError:
            return "other"
        return "ollama" if isinstance(version, dict) and "version" in version else "other"

    def _thinking_off(self) -> dict[str, Any]:
        """Each family's switch for thinking off, for the models that think (see module doc)."""
        if not any(family in self.model.lower() for family in THINKING_FAMILIES):
            return {}
        if self._family == "ollama":  # native `think`; its /v1 layer reads reasoning_effort
            return {"think": False, "reasoning_effort": "none"}
        return {"chat_template_kwargs": {"enable_thinking": False}}  # llama.cpp, vLLM templates

    # -- requests ----------------------------------------------------------------------------

    def _body(self, params: GenerationParams, **content: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": params.max_tokens,
                                "temperature": params.temperature, "seed": params.seed, **content}
        if self._family == "llama.cpp":
            # llama-cpp-python's server penalises repeats (1.1) unless told: the in-process
            # backend does not, and greedy answers should be the same through either.
            body["repeat_penalty"] = 1.0
        if params.stop:
            body["stop"] = list(params.stop)
        if params.grammar and self._grammar_field not in (None, "auto"):
            body[self._grammar_field] = params.grammar
        return body

    def _run(self, path: str, body: dict, params: GenerationParams, on_token, cancel,
             *, chat: bool) -> Completion:
        started = time.perf_counter()
        if cancel is not None and cancel.cancelled:
            return Completion("", Usage(0, 0, 0), "cancelled")
        if on_token is None and cancel is None:
            reply = self.request("POST", path, body)
            choice = (reply.get("choices") or [{}])[0]
            text = (choice.get("message") or {}).get("content") or "" if chat \
                else choice.get("text") or ""
            return Completion(strip_special_tokens(text), usage_of(reply, 0),
                              finish_of(choice.get("finish_reason")),
                              seconds=time.perf_counter() - started,
                              token_logprobs=logprobs_of(choice, chat))
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        pieces: list[str] = []
        logprobs: list[float] = []
        finish, usage_reply, first_at, events = "stop", None, None, 0
        ended = {"done": False}  # [DONE] or a finish_reason: the reply is whole
        conn, response = self._open("POST", path, body)
        self.streamed = "json" not in (response.getheader("Content-Type") or "")
        if not self.streamed:  # a server that ignores "stream": its whole reply, as one piece
            return self._unstreamed(conn, response, path, on_token, chat, started)
        try:
            for event in _sse_events(response, ended):
                if cancel is not None and cancel.cancelled:
                    finish = "cancelled"
                    break
                if event.get("usage"):
                    usage_reply = event
                for choice in event.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content") if chat \
                        else choice.get("text")
                    if piece:
                        first_at = first_at or time.perf_counter()
                        events += 1
                        pieces.append(piece)
                        on_token and on_token(piece)
                    logprobs.extend(logprobs_of(choice, chat))
                    if choice.get("finish_reason"):
                        finish = finish_of(choice["finish_reason"])
                        ended["done"] = True
        except (OSError, http.client.HTTPException) as exc:
            raise self._broken(exc, events) from exc
        finally:
            conn.close()  # on cancel this is what tells the server to stop
        if finish != "cancelled" and not ended["done"]:
            raise self._broken(None, events)
        usage = usage_of(usage_reply, events) if usage_reply else Usage(0, 0, events)
        return Completion(strip_special_tokens("".join(pieces)), usage, finish,
                          seconds=time.perf_counter() - started,
                          prompt_seconds=(first_at or time.perf_counter()) - started,
                          token_logprobs=tuple(logprobs))

    def _unstreamed(self, conn, response, path, on_token, chat: bool, started: float) -> Completion:
        try:
            reply = json.loads(response.read())
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise self._broken(exc, 0) from exc
        finally:
            conn.close()
        choice = (reply.get("choices") or [{}])[0]
        text = strip_special_tokens((choice.get("message") or {}).get("content") or "" if chat
                                    else choice.get("text") or "")
        if text and on_token is not None:
            on_token(text)
        return Completion(text, usage_of(reply, 0), finish_of(choice.get("finish_reason")),
                          seconds=time.perf_counter() - started, token_logprobs=logprobs_of(choice, chat))

    def request(self, method: str, path: str, body: dict | None, *, root: bool = False) -> dict:
        """One JSON request to ``/v1`` + ``path`` (``root``: to ``path`` at the server's root)."""
        conn, response = self._open(method, path, body, root=root)
        try:
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(exc) from exc
        finally:
            conn.close()
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ModelError(f"The server at {self.base_url} sent something that is not JSON "
                             f"for {path}: {self._mask(data[:200].decode('utf-8', 'replace'))!r}",
                             hint="Is this an OpenAI-compatible server? Its URL usually ends in /v1.") from exc

    def _open(self, method: str, path: str, body: dict | None, *, root: bool = False):
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self._timeout)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            conn.request(method, path if root else self._prefix + path,
                         body=json.dumps(body).encode() if body is not None else None,
                         headers=headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._unreachable(exc) from exc
        if response.status >= 400:
            try:
                detail = error_detail(response.read()[:2000])
            except (OSError, http.client.HTTPException):
                detail = ""
            conn.close()
            raise self._refused(response.status, path, self._mask(detail))
        return conn, response

    # -- errors (never with the key in them) ---------------------------------------------------

    def _refused(self, status: int, path: str, detail: str) -> ModelError:
        where = f"The LLM server at {self.base_url}"
        if status in (401, 403):
            if not self._api_key:
                exc = ModelError(f"{where} needs an API key (it answered {status}).",
                                 hint="Enter the key in Models > Use a server, pass --server-key, "
                                      f"or set ${API_KEY_ENV}.")
            else:
                exc = ModelError(f"{where} refused the API key (it answered {status}).",
                                 hint="Check the key in Models > Use a server (llm.server_key) "
                                      f"or ${API_KEY_ENV}; the server decides which keys it takes.")
        elif status == 404 and "model" in detail.lower():
            exc = ModelError(f"{where} has no model named {self._model!r}: {detail}",
                             hint="Pick one the server lists (Models > Use a server, or "
                                  "--server-model), or load that model on the server first.")
        else:
            exc = ModelError(f"{where} answered {status} to {path}: {detail}",
                             hint="Check the model name and the request options it supports "
                                  "(e.g. grammars or log-probabilities).")
        exc.status = status  # type: ignore[attr-defined]
        return exc

    def _unreachable(self, exc: Exception) -> ModelError:
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return ModelError(f"The LLM server at {self.base_url} sent nothing for "
                              f"{self._timeout:g} s.",
                              hint="It may be busy or still loading a large model: ask again, or "
                                   "allow longer (llm.server_timeout, in seconds).")
        return ModelError(f"Cannot reach the LLM server at {self.base_url}: {self._mask(str(exc))}",
                          hint="Check that the server runs and the URL/port (Models > Use a server).")

    def _broken(self, exc: Exception | None, pieces: int) -> ModelError:
        """The stream ended before the reply did: the server stopped, crashed or timed out."""
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return self._unreachable(exc)
        what = f": {self._mask(str(exc) or type(exc).__name__)}" if exc is not None else ""
        if not pieces:  # llama-cpp-python also ends a stream so when the request fails in it
            return ModelError(f"The LLM server at {self.base_url} closed its reply before sending "
                              f"any text{what}.",
                              hint="It may have stopped, or failed on this request (a prompt longer "
                                   "than its context window is a common cause; its log says): check "
                                   "that it runs and its context size, then ask again.")
        return ModelError(f"The LLM server at {self.base_url} stopped in the middle of the answer "
                          f"(after {pieces} piece{'s' if pieces != 1 else ''} of text){what}.",
                          hint="It may have crashed or been stopped: check that it still runs, "
                               "then ask again. What was written so far is kept.")

    def _mask(self, text: str) -> str:
        return text.replace(self._api_key, _KEY_MASK) if self._api_key else text
