"""Events the LLM runtime reports through ``on_event`` callbacks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LLMWarning:
    """Something the user should see but that did not stop the model from working
    (e.g. GPU offload failed and the model runs on the CPU instead)."""

    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message
