"""Base models and models without a chat template, and special tokens leaking into text.

Issue #23: Gemma 3 270M's GGUF is a base model and carries no chat template. Given a ChatML
prompt (the old fallback) it wrote ``<|im_start|>`` runs until the token limit and left
``<|im_end|>`` in 6 of 20 answers; as the reader it always answered ``<|im_end|>``. So:

- ``prompt_style(facts)`` tells a chat model (a template in the file) from one to prompt with
  plain text: no template, or a file named as a base model with no template to trust;
- ``CompletionPromptBuilder`` renders chat messages as plain text (no role markers a base model
  never saw): the contents one after another, separated by blank lines, so the prompt ends with
  the last user message's own cue ("Answer:", "[Question]: ...");
- ``stop_texts`` are the end-of-turn markers written as text, where generation stops;
- ``strip_special_tokens`` removes what is left of any template's special tokens from an output
  (every backend's: the parser and the reader clean their input with it too).

The backend warns once with an ``LLMWarning`` (the app shows it above the chat) when it falls
back to plain completion prompts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .base import ChatMessage
from .chat_prompt import validate_messages

# End-of-turn / end-of-text markers of the common templates (ChatML, Llama 2/3, Gemma, Phi,
# Mistral, GPT-2 style), as a model writes them when they are text rather than control tokens.
END_OF_TURN_TEXTS = ("<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "<|endoftext|>", "<|end|>",
                     "<end_of_turn>", "<eos>", "</s>")
# Turn openers: a base model that writes one is starting a new (imagined) turn.
TURN_START_TEXTS = ("<|im_start|>", "<start_of_turn>", "<|start_header_id|>", "<|user|>",
                    "<|assistant|>", "<|system|>")
_SPECIAL = re.compile(
    r"<\|[a-z_]{1,24}\|>"  # <|im_start|>, <|eot_id|>, <|start_header_id|> ...
    r"|</?(?:s|eos|bos|pad|unk|start_of_turn|end_of_turn)>"
    r"|\[/?INST\]|<<\s?/?SYS\s?>>",
    re.IGNORECASE,
)
# A turn opener followed by its role name: "<|im_start|>assistant\n", "<start_of_turn>model\n".
_OPENER_WITH_ROLE = re.compile(
    r"(?:<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>)[ \t]*"
    r"(?:system|user|assistant|model)?[ \t]*(?:<\|end_header_id\|>)?[ \t]*\n?",
    re.IGNORECASE,
)
_BASE_NAME = re.compile(r"(?:^|[-_.\s])base(?:$|[-_.\s])", re.IGNORECASE)
_INSTRUCT_NAME = re.compile(r"instruct|chat|(?:^|[-_.\s])it(?:$|[-_.\s])|sft|rlhf|dpo", re.IGNORECASE)


@dataclass(frozen=True)
class PromptStyle:
    """How to prompt a model: ``"chat"`` (its template) or ``"completion"`` (plain text)."""

    kind: str
    reason: str = ""  # why plain completion prompts are used, for the warning

    @property
    def completion(self) -> bool:
        return self.kind == "completion"


def prompt_style(facts) -> PromptStyle:
    """The style for a model described by ``gguf_info.ModelFacts`` (``chat_template``, ``name``,
    ``path``)."""
    names = " ".join(str(x) for x in (getattr(facts, "name", ""), getattr(getattr(facts, "path", None),
                                                                          "stem", "")))
    template = getattr(facts, "chat_template", None)
    if not template:
        looks_base = bool(_BASE_NAME.search(names)) or not _INSTRUCT_NAME.search(names)
        what = "looks like a base (not instruction-tuned) model and " if looks_base else ""
        return PromptStyle("completion", f"{what}has no chat template")
    return PromptStyle("chat")


def stop_texts(style: PromptStyle) -> tuple[str, ...]:
    """Text that ends generation: end-of-turn markers; for a base model also turn openers (its
    prompt has none, so one in its output starts an imagined next turn)."""
    return END_OF_TURN_TEXTS + (TURN_START_TEXTS if style.completion else ())


def strip_special_tokens(text: str) -> str:
    """``text`` without chat-template special tokens: a leading turn opener with its role line
    is dropped, the text ends at an end-of-turn marker or a later turn opener, and any other
    special token left is removed."""
    if not text or ("<" not in text and "[" not in text):
        return text or ""  # the usual case: nothing to strip
    original = text
    head = _OPENER_WITH_ROLE.match(text.lstrip())
    if head is not None:
        text = text.lstrip()[head.end():]
    cut = len(text)
    for marker in END_OF_TURN_TEXTS + TURN_START_TEXTS:
        at = text.find(marker)
        if at >= 0 and text[:at].strip():
            cut = min(cut, at)
    text = _SPECIAL.sub("", text[:cut])
    if text == original:
        return text  # no special token: the text as written, trailing newline included
    return text.strip()


class CompletionPromptBuilder:
    """Renders chat messages as a plain-text prompt for a base model (see the module docstring).

    Same interface as ``chat_prompt.ChatPromptBuilder``."""

    uses_fallback = False
    template = None

    def render(self, messages: Sequence[ChatMessage]) -> str:
        validate_messages(messages)
        parts = [m["content"].strip() for m in messages if m["content"].strip()]
        prompt = "\n\n".join(parts)
        # End on the last message's own cue ("Answer:" continues on its line); otherwise on a
        # new line, where the model's reply starts.
        return prompt if prompt.endswith(":") else prompt + "\n"
