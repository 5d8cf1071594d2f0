"""Turning chat messages into one prompt with the model's own chat template, and the rule for
dialogues longer than the context window.

The template is the Jinja text stored in the GGUF (``tokenizer.chat_template``), rendered by
llama-cpp-python's sandboxed ``Jinja2ChatFormatter``. Rendering is deterministic and a later round
of a dialogue only appends messages, so its prompt starts with the previous round's prompt plus
the reply: the backend then re-uses the KV cache for that shared prefix.

System role: some templates reject a system message (Mistral 7B v0.3's raises) or drop it
silently. The builder finds out once, by rendering a probe, and then folds the system text into
the first user turn (``fold_system``), so the reader's system + user prompt works on every model.

Thinking: templates are rendered with ``enable_thinking=false``; Qwen3's hybrid models then
pre-fill an empty think block and answer directly (others ignore the variable). Any think block a
model writes anyway is removed by ``strip_think`` before the text is parsed or shown.

Context rule (``fit_messages``): when the rendered prompt plus a reply budget of
``min(max_tokens, n_ctx // 4)`` tokens does not fit in ``n_ctx``, the oldest turns after the
leading system message(s) are dropped, oldest first (an assistant turn left at the front is dropped
too, so user/assistant alternation survives), until it fits. The system messages and the last
message are never dropped; if they alone do not fit, ``ModelError`` says by how much.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..errors import ModelError
from .base import ChatMessage
from .chat_templates import CHATML_TEMPLATE

VALID_ROLES = ("system", "user", "assistant")
_PROBE = "SEARCHAIN-SYSTEM-PROBE"
_THINK_BLOCK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def split_prefill(messages: Sequence[ChatMessage]) -> tuple[Sequence[ChatMessage], str]:
    """``(messages, prefill)``: a last message of the assistant's is a reply to continue (its
    text the prefill), not a finished turn; else the messages as given and ``""``."""
    if len(messages) > 1 and messages[-1].get("role") == "assistant":
        return messages[:-1], messages[-1]["content"]
    return messages, ""


class ChatPromptBuilder:
    """Renders messages with one chat template (compiled once)."""

    def __init__(self, template: str | None, *, bos_token: str, eos_token: str):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        # A GGUF without a template gets ChatML, the most widely understood format.
        self.template = template or CHATML_TEMPLATE
        self.uses_fallback = template is None
        self._formatter = Jinja2ChatFormatter(
            template=self.template, eos_token=eos_token, bos_token=bos_token,
            add_generation_prompt=True,
        )
        self.folds_system = self._rejects_system_role()

    def render(self, messages: Sequence[ChatMessage]) -> str:
        validate_messages(messages)
        if self.folds_system:
            messages = fold_system(messages)
        try:
            return self._format(messages)
        except Exception as exc:  # jinja raises for templates that reject the message order
            raise ModelError(
                f"The model's chat template rejected the messages: {exc}",
                hint="Most templates want an optional system message, then user and assistant "
                     "turns alternating, ending with a user turn.",
            ) from exc

    def _format(self, messages: Sequence[ChatMessage]) -> str:
        return self._formatter(messages=[dict(m) for m in messages], enable_thinking=False).prompt

    def _rejects_system_role(self) -> bool:
        """True when a system message raises or vanishes while a lone user turn renders."""
        user = {"role": "user", "content": "?"}
        try:
            if _PROBE in self._format([{"role": "system", "content": _PROBE}, user]):
                return False
        except Exception:  # noqa: BLE001  (what a template raises is up to its author)
            pass
        try:
            self._format([user])
        except Exception:  # noqa: BLE001  (a template that fails anyway: render() will say so)
            return False
        return True


def fold_system(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages with every system message's text moved to the start of the first user turn
    (in order, separated by a blank line), for templates without a system role."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    for m in rest:
        if m["role"] == "user":
            m["content"] = "\n\n".join([*system, m["content"]])
            return rest
    return [{"role": "user", "content": "\n\n".join(system)}, *rest]


def strip_think(text: str) -> str:
    """``text`` without reasoning blocks: ``<think>…</think>``, an unclosed ``<think>…`` to the
    end (cut off by the token budget), and anything before a lone ``</think>`` (the template
    opened the block in the prompt)."""
    if "think>" not in text:
        return text
    text = _THINK_BLOCK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        text = text.split("<think>", 1)[0]
    return text.lstrip()


def validate_messages(messages: Sequence[ChatMessage]) -> None:
    if not messages:
        raise ModelError("chat() needs at least one message.", hint="Pass a user message.")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in VALID_ROLES \
                or not isinstance(m.get("content"), str):
            raise ModelError(
                f"Message {i} is not a chat message: {m!r}",
                hint=f"Each message is {{'role': one of {VALID_ROLES}, 'content': str}}.",
            )


def fit_messages(
    messages: Sequence[ChatMessage],
    *,
    count_tokens: Callable[[Sequence[ChatMessage]], int],
    n_ctx: int,
    max_tokens: int,
) -> tuple[list[ChatMessage], int]:
    """Apply the context rule above; return (messages that fit, number of messages dropped)."""
    budget = n_ctx - min(max_tokens, n_ctx // 4)
    kept = list(messages)
    n_system = 0
    while n_system < len(kept) - 1 and kept[n_system]["role"] == "system":
        n_system += 1
    dropped = 0
    n_tokens = count_tokens(kept)
    while n_tokens > budget:
        if len(kept) - n_system <= 1:
            raise ModelError(
                f"The prompt needs {n_tokens} tokens but the context holds {n_ctx} "
                f"(with {n_ctx - budget} kept free for the reply), even after dropping all "
                f"earlier turns.",
                hint="Raise the context size (Settings > LLM > n_ctx), or shorten the system "
                     "prompt and the question.",
            )
        del kept[n_system]
        dropped += 1
        if len(kept) - n_system > 1 and kept[n_system]["role"] == "assistant":
            del kept[n_system]
            dropped += 1
        n_tokens = count_tokens(kept)
    return kept, dropped
