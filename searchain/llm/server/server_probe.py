"""What an OpenAI-compatible server can do for SearChain, found out by asking it.

``probe_server`` (the model dialog's *Test connection*, ``searchain models server URL``) lists the
server's models, then tries, each with a reply of a few tokens: a chat reply, a streamed one, a
reply held to a GBNF grammar (llama.cpp's ``grammar`` field), one held to a JSON schema
(``response_format``, in OpenAI's form and llama-cpp-python's), and per-token log-probabilities.
A capability counts as working only when the reply shows it (the grammar's exact text, JSON that
matches the schema, log-probabilities returned): many servers ignore a field they do not know.

``ServerReport.lost()`` says what SearChain does without what is missing; the loop itself runs on
any server that chats (prompting plus the tolerant parser where grammars are not honoured).
Everything here runs on the caller's thread: the app calls it from a worker.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ...errors import ModelError
from ...events import CancelToken
from ..base import GenerationParams
from .openai_backend import OpenAICompatibleLLM

CAPABILITIES = ("chat", "streaming", "grammar", "json_schema", "logprobs")
LABELS = {"chat": "Chat", "streaming": "Streaming", "grammar": "Grammar constraints (GBNF)",
          "json_schema": "JSON-schema constraints", "logprobs": "Log-probabilities"}
# What SearChain does without each (json_schema: nothing, it constrains with GBNF grammars).
LOST = {
    "grammar": "Without grammar constraints SearChain asks for its chain of sub-questions by "
               "prompting alone and reads the reply with its tolerant parser: answers still work, "
               "but small models misformat more often (a round can come back unreadable and is "
               "asked again), and the model's reading of a passage is not held to its words.",
    "logprobs": "Without log-probabilities the model cannot say how sure its reading of a passage "
                "is, so passages never overrule the model's own answers (the DPR reader, when "
                "installed, does not need them).",
    "streaming": "Without streaming, text appears only when each step is finished, and Stop "
                 "waits for the step under way.",
}
_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "enum": [7]}},
           "required": ["n"], "additionalProperties": False}
_FORMATS = ({"type": "json_schema", "json_schema": {"name": "probe", "strict": True, "schema": _SCHEMA}},
            {"type": "json_object", "schema": _SCHEMA})  # OpenAI's form, llama-cpp-python's
_ASK = [{"role": "user", "content": "Reply with one word."}]


def grammar_note(setting: str) -> str:
    """What ``llm.server_grammar`` means for answers, in words the settings can show."""
    if setting == "on":
        return "Grammar constraints: on (the server holds each step to SearChain's format)."
    if setting == "off":
        return "Grammar constraints: off. " + LOST["grammar"]
    return ("Grammar constraints: checked with one tiny request on the first question; if the "
            "server ignores them, answers still work by prompting and the tolerant parser, with "
            "more misformatted steps from small models.")


@dataclass(frozen=True)
class Capability:
    name: str  # one of CAPABILITIES
    works: bool
    detail: str = ""


@dataclass(frozen=True)
class ServerReport:
    url: str
    family: str  # llm.server_family's values
    model: str
    models: tuple[str, ...]
    capabilities: tuple[Capability, ...] = field(default=())

    def works(self, name: str) -> bool:
        return any(c.name == name and c.works for c in self.capabilities)

    @property
    def grammar_setting(self) -> str:
        """``llm.server_grammar`` as found: on, or off (prompting and the parser)."""
        return "on" if self.works("grammar") else "off"

    def lost(self) -> list[str]:
        """What SearChain does without each capability the server lacks."""
        return [LOST[c.name] for c in self.capabilities if not c.works and c.name in LOST]

    def lines(self) -> list[str]:
        """Plain text, one line per capability, for the dialog and the CLI."""
        out = [f"{self.model} on {self.url} ({self.family})"]
        for c in self.capabilities:
            out.append(f"{LABELS[c.name]}: {'works' if c.works else 'no'}"
                       + (f" ({c.detail})" if c.detail else ""))
        return out

    def to_json(self) -> dict:
        data = asdict(self)
        data["capabilities"] = {c.name: {"works": c.works, "detail": c.detail} for c in self.capabilities}
        data["models"] = list(self.models)
        data["grammar_setting"] = self.grammar_setting
        data["lost"] = self.lost()
        return data


def connect(url: str, *, model: str | None = None, api_key: str | None = None,
            timeout: float = 30.0, family: str = "auto") -> OpenAICompatibleLLM:
    """A backend for ``url`` that sends no grammar unless told (the probe finds out)."""
    return OpenAICompatibleLLM(url, model=model or None, api_key=api_key or None, timeout=timeout,
                               grammar_field=None, family=family)


def list_models(url: str, *, api_key: str | None = None, timeout: float = 15.0) -> list[str]:
    """The names ``GET /v1/models`` lists (ModelError when the server cannot be asked)."""
    return connect(url, api_key=api_key, timeout=timeout).list_models()


def probe_server(url: str, *, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, family: str = "auto",
                 cancel: CancelToken | None = None) -> ServerReport:
    """Ask the server what works (see the module docstring). Raises ModelError when it cannot
    be reached, refuses the key, or has no such model; a capability that fails is reported."""
    llm = connect(url, model=model, api_key=api_key, timeout=timeout, family=family)
    models = tuple(llm.list_models())
    name, found = llm.model, llm.family  # the first request names both (or raises)
    checks: list[Capability] = []
    for check in (_chat, _streaming, _grammar, _json_schema, _logprobs):
        if cancel is not None and cancel.cancelled:
            break
        checks.append(check(llm))
        if checks[0].name == "chat" and not checks[0].works:
            break  # nothing else can work
    return ServerReport(llm.base_url, found, name, models, tuple(checks))


def _chat(llm) -> Capability:
    try:
        c = llm.chat(_ASK, GenerationParams(max_tokens=8))
    except ModelError as exc:
        return Capability("chat", False, exc.message)
    return Capability("chat", True, f"{c.usage.completion_tokens} token(s) in {c.seconds:.1f} s")


def _streaming(llm) -> Capability:
    pieces: list[str] = []
    try:
        llm.chat(_ASK, GenerationParams(max_tokens=8), on_token=pieces.append)
    except ModelError as exc:
        return Capability("streaming", False, exc.message)
    if not llm.streamed:
        return Capability("streaming", False, "the server sends each reply whole")
    return Capability("streaming", bool(pieces), f"{len(pieces)} piece(s)" if pieces
                      else "no text came as a stream")


def _grammar(llm) -> Capability:
    try:
        works = llm.check_grammar("grammar")
    except ModelError as exc:
        return Capability("grammar", False, exc.message)
    return Capability("grammar", works, "the reply kept to the grammar" if works
                      else "the server ignores llama.cpp's grammar field")


def _json_schema(llm) -> Capability:
    for fmt in _FORMATS:
        try:
            text = llm.chat_text(_ASK, GenerationParams(max_tokens=24), response_format=fmt)
            if json.loads(text) == {"n": 7}:
                return Capability("json_schema", True, f"response_format {fmt['type']}; SearChain "
                                  "itself constrains with grammars")
        except (ModelError, ValueError):
            continue  # this form refused or not kept to: try the other
    return Capability("json_schema", False, "no reply kept to the schema")


def _logprobs(llm) -> Capability:
    try:
        c = llm.chat(_ASK, GenerationParams(max_tokens=4, logprobs=True))
    except ModelError as exc:
        return Capability("logprobs", False, exc.message)
    return Capability("logprobs", bool(c.token_logprobs),
                      f"{len(c.token_logprobs)} returned" if c.token_logprobs else "none returned")
