"""An LLM served over an OpenAI-compatible HTTP API (llama.cpp's server, llama-cpp-python's
server, vLLM, Ollama), for models too big for this machine.

Standard library only (``http.client``): the runtime stays offline and talks to exactly the URL
the user configured. ``complete`` uses ``/v1/completions``, ``chat`` uses ``/v1/chat/completions``;
with ``on_token`` the reply is streamed as server-sent events and ``cancel`` closes the connection
between events (servers stop generating when the client goes away).

Usage: the server's own counts when it reports them (non-streamed replies always; streamed ones
when the server honours ``stream_options.include_usage``). Otherwise ``completion_tokens`` is the
number of streamed text events and ``prompt_tokens`` is 0 (unknown). ``prompt_tokens_evaluated``
is llama.cpp's ``timings.prompt_n`` when present (its server reuses its KV cache too), else equal to
``prompt_tokens``. The GBNF grammar is sent as llama.cpp's ``grammar`` field
(``grammar_field=None`` for servers that reject it).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from typing import Any, Iterator, Sequence
from urllib.parse import urlsplit

from ..errors import ModelError
from ..events import CancelToken
from .base import ChatMessage, Completion, GenerationParams, TokenCallback, Usage
from .chat_prompt import validate_messages
from .model_kind import strip_special_tokens  # a server's template can leak them too

API_KEY_ENV = "SEARCHAIN_LLM_API_KEY"
# Model families whose chat template thinks aloud unless told not to (``enable_thinking``). The
# request asks the server's template to switch it off, as the local backend does; servers that
# render templates (llama.cpp's, vLLM) take ``chat_template_kwargs``. Only sent to these models:
# a hosted API may refuse a field it does not know.
THINKING_FAMILIES = ("qwen3",)


class OpenAICompatibleLLM:
    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 300.0, *, grammar_field: str | None = "grammar"):
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(f"LLM server URL {base_url!r} is not an http(s) URL.",
                             hint="Use e.g. http://192.168.1.20:8080 (the /v1 suffix is optional).")
        self.base_url = base_url.rstrip("/")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        path = parts.path.rstrip("/")
        self._prefix = path if path.endswith("/v1") else path + "/v1"
        self._api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self._timeout = timeout
        self._grammar_field = grammar_field
        self.model = model or self._first_model()
        self.name = f"{self.model} @ {self._host}"
        self.warnings: list = []  # same attribute as LlamaCppLLM; nothing to warn about yet

    @property
    def supports_grammar(self) -> bool:
        return self._grammar_field is not None

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None,
                 cancel: CancelToken | None = None) -> Completion:
        body = self._body(params, prompt=prompt)
        if params.logprobs:
            body["logprobs"] = 1
        return self._run("/completions", body, params, on_token, cancel, chat=False)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(),
             *, on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        validate_messages(messages)
        body = self._body(params, messages=[dict(m) for m in messages])
        if any(family in self.model.lower() for family in THINKING_FAMILIES):
            body["chat_template_kwargs"] = {"enable_thinking": False}
        if params.logprobs:
            body["logprobs"] = True
        return self._run("/chat/completions", body, params, on_token, cancel, chat=True)

    def close(self) -> None:
        pass  # one connection per request: nothing held open

    # -- requests -----------------------------------------------------------------------------

    def _body(self, params: GenerationParams, **content: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": params.max_tokens,
                                "temperature": params.temperature, "seed": params.seed, **content}
        if params.stop:
            body["stop"] = list(params.stop)
        if params.grammar and self._grammar_field:
            body[self._grammar_field] = params.grammar
        return body

    def _run(self, path: str, body: dict, params: GenerationParams, on_token, cancel,
             *, chat: bool) -> Completion:
        started = time.perf_counter()
        if cancel is not None and cancel.cancelled:
            return Completion("", Usage(0, 0, 0), "cancelled")
        if on_token is None and cancel is None:
            reply = self._request("POST", path, body)
            choice = reply["choices"][0]
            text = (choice.get("message") or {}).get("content") or "" if chat \
                else choice.get("text") or ""
            return Completion(strip_special_tokens(text), _usage(reply, 0), _finish(choice.get("finish_reason")),
                              seconds=time.perf_counter() - started,
                              token_logprobs=_logprobs(choice, chat))
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        pieces: list[str] = []
        logprobs: list[float] = []
        finish, usage_reply, first_at, events = "stop", None, None, 0
        conn, response = self._open("POST", path, body)
        try:
            for event in _sse_events(response):
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
                    logprobs.extend(_logprobs(choice, chat))
                    if choice.get("finish_reason"):
                        finish = _finish(choice["finish_reason"])
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(exc) from exc
        finally:
            conn.close()  # on cancel this is what tells the server to stop
        usage = _usage(usage_reply, events) if usage_reply else Usage(0, 0, events)
        return Completion(strip_special_tokens("".join(pieces)), usage, finish,
                          seconds=time.perf_counter() - started,
                          prompt_seconds=(first_at or time.perf_counter()) - started,
                          token_logprobs=tuple(logprobs))

    def _first_model(self) -> str:
        models = self._request("GET", "/models", None).get("data") or []
        if not models:
            raise ModelError(f"The server at {self.base_url} lists no models.",
                             hint="Start it with a model loaded, or name the model explicitly.")
        return str(models[0].get("id"))

    def _request(self, method: str, path: str, body: dict | None) -> dict:
        conn, response = self._open(method, path, body)
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
                             f"for {path}: {data[:200]!r}",
                             hint="Is this an OpenAI-compatible server?") from exc

    def _open(self, method: str, path: str, body: dict | None):
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self._timeout)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            conn.request(method, self._prefix + path,
                         body=json.dumps(body).encode() if body is not None else None,
                         headers=headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._unreachable(exc) from exc
        if response.status >= 400:
            detail = response.read()[:500].decode("utf-8", "replace")
            conn.close()
            raise ModelError(f"The LLM server at {self.base_url} answered {response.status} "
                             f"to {path}: {detail}",
                             hint="Check the model name and the request options it supports "
                                  "(e.g. grammars or log-probabilities).")
        return conn, response

    def _unreachable(self, exc: Exception) -> ModelError:
        what = "timed out" if isinstance(exc, (socket.timeout, TimeoutError)) else str(exc)
        return ModelError(f"Cannot reach the LLM server at {self.base_url}: {what}",
                          hint="Check that the server runs and the URL/port in Settings > LLM.")


def _sse_events(response) -> Iterator[dict]:
    """JSON payloads of ``data:`` lines until ``[DONE]`` or the end of the stream."""
    for raw in response:
        line = raw.strip()
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if payload == b"[DONE]":
            return
        try:
            yield json.loads(payload)
        except ValueError:
            continue  # a keep-alive or a partial line: skip it


def _usage(reply: dict | None, events: int) -> Usage:
    usage = (reply or {}).get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or events)
    timings = (reply or {}).get("timings") or {}
    evaluated = int(timings.get("prompt_n", prompt))
    return Usage(prompt, evaluated, completion)


def _finish(reason: str | None) -> str:
    return "length" if reason == "length" else "stop"


def _logprobs(choice: dict, chat: bool) -> tuple[float, ...]:
    lp = choice.get("logprobs")
    if not lp:
        return ()
    if chat:
        return tuple(float(c["logprob"]) for c in lp.get("content") or [])
    return tuple(float(x) for x in lp.get("token_logprobs") or [] if x is not None)
