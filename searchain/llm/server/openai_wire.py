"""The OpenAI-compatible wire format, as ``openai_backend`` reads it: server-sent events, usage,
finish reasons, log-probabilities, and the message of an error reply. No I/O of its own."""

from __future__ import annotations

import json
from typing import Iterator

from ..base import Usage


def error_detail(data: bytes) -> str:
    """The message of an error reply on one line: OpenAI's ``error.message``, FastAPI's
    ``detail``, or the text."""
    return " ".join(_error_text(data).split())


def _error_text(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    try:
        reply = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(reply, dict):
        error = reply.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:500]
        if isinstance(error, str):
            return error[:500]
        if reply.get("detail"):
            return json.dumps(reply["detail"])[:500] if not isinstance(reply["detail"], str) \
                else reply["detail"][:500]
    return text[:500]


def sse_events(response, ended: dict) -> Iterator[dict]:
    """JSON payloads of ``data:`` lines until ``[DONE]`` (``ended["done"]`` set) or the end."""
    for raw in response:
        line = raw.strip()
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if payload == b"[DONE]":
            ended["done"] = True
            return
        try:
            yield json.loads(payload)
        except ValueError:
            continue  # a keep-alive or a partial line: skip it


def usage_of(reply: dict | None, events: int) -> Usage:
    usage = (reply or {}).get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or events)
    timings = (reply or {}).get("timings") or {}
    evaluated = int(timings.get("prompt_n", prompt))
    return Usage(prompt, evaluated, completion)


def finish_of(reason: str | None) -> str:
    return "length" if reason == "length" else "stop"


def logprobs_of(choice: dict, chat: bool) -> tuple[float, ...]:
    lp = choice.get("logprobs")
    if not lp:
        return ()
    if chat:
        return tuple(float(c["logprob"]) for c in lp.get("content") or [])
    return tuple(float(x) for x in lp.get("token_logprobs") or [] if x is not None)
