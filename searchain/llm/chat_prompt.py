"""Turning chat messages into one prompt with the model's own chat template, and the rule for
dialogues longer than the context window.

The template is the Jinja text stored in the GGUF (``tokenizer.chat_template``), rendered by
llama-cpp-python's sandboxed ``Jinja2ChatFormatter``. Rendering is deterministic and a later round
of a dialogue only appends messages, so its prompt starts with the previous round's prompt plus
the reply: the backend then re-uses the KV cache for that shared prefix.

Context rule (``fit_messages``): when the rendered prompt plus a reply budget of
``min(max_tokens, n_ctx // 4)`` tokens does not fit in ``n_ctx``, the oldest turns after the
leading system message(s) are dropped, oldest first (an assistant turn left at the front is dropped
too, so user/assistant alternation survives), until it fits. The system messages and the last
message are never dropped; if they alone do not fit, ``ModelError`` says by how much.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..errors import ModelError
from .base import ChatMessage
from .bpe_vocab import CHATML_TEMPLATE

VALID_ROLES = ("system", "user", "assistant")


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

    def render(self, messages: Sequence[ChatMessage]) -> str:
        validate_messages(messages)
        try:
            return self._formatter(messages=[dict(m) for m in messages]).prompt
        except Exception as exc:  # jinja raises for templates that reject the message order
            raise ModelError(
                f"The model's chat template rejected the messages: {exc}",
                hint="Most templates want an optional system message, then user and assistant "
                     "turns alternating, ending with a user turn.",
            ) from exc


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
